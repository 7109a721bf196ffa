package query

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// BenchmarkAnalyze runs the query set over 7 days (GPULENS_BENCH_DAYS) at
// 1-minute resolution on the embedded engine, for fleets of whole GPUs
// each held by one container (GPULENS_BENCH_GPUS, a comma-separated list
// of sizes; 100 and 1000 by default). scripts/bench-analyze.sh runs it and writes the table
// in docs/BENCHMARKS.md.
//
// Setup (generating 7 series × 10,080 samples per GPU in scrape order,
// then compacting the head into blocks as the TSDB does on its own within
// minutes, and reading every chunk once) is excluded from the timing;
// without the explicit compaction the background compactor would run
// during the timed analysis.
//
// Each size has two sub-benchmarks over the same TSDB, in one process:
//   - analyzer: Analyze, everything the CLI does for this step.
//   - engine: the bare promql.Engine evaluating the exact query strings
//     Analyze issues, with the same concurrency, discarding the answers;
//     analyzer/engine is then the cost of the analyzer's own work (result
//     conversion and assembly) on top of the engine's.
//   - floor: the bare engine reading every sample of the window once
//     (floorQueries), with the same concurrency: analyzer/floor is how many
//     times over the analysis pays for reading its data.
//
// Metrics besides ns/op: queries/op (must not change with the size),
// cpu-s/op (user + system time of the whole process: steadier than wall
// time on a shared machine) and peak-RSS-MiB, the process's peak resident set during the timed loop
// (VmHWM, reset just before it after returning free memory to the OS), so
// it includes the TSDB's own resident memory and mapped blocks but not the
// setup's high-water mark.
//
// With GPULENS_BENCH_PROFILE set to a directory, each sub-benchmark writes
// the CPU profile of its timed loop (<name>.cpu.pprof) and heap profiles
// just before and after it (gpus=N-<sub>.heap0.pprof and .heap1.pprof), so
// that "go tool pprof -sample_index=alloc_space -diff_base X.heap0.pprof
// X.heap1.pprof" gives the loop's allocations without the setup's.
//
// With GPULENS_BENCH_CLUSTERS=C the fleet is written as C clusters of
// gpus/C GPUs each (every series labelled cluster="cluster-K"; node and pod
// names repeat across clusters, as real clusters' do), and "analyzer" gives
// way to "clusters": the analysis pipeline.Run does of a shared store,
// ClusterValues, then one cluster at a time AnalyzeScoped in its Cluster
// scope with the default sample budget, then MergeClusters; it also reports
// clusters/op. With GPULENS_BENCH_ANALYZER_ONLY set, "engine" and "floor"
// are skipped: they run the passes unsharded, and a 10,000-GPU week's do
// not fit in this machine's memory. With GPULENS_BENCH_FOLDS set,
// "analyzer" also folds what a report reads from the passes (the share
// runs' views: Sharding.Lanes and TimelinePoints at cmd/gpulens's 168), so
// that the folds' cost shows; without it they are off, as for the CLI's
// other commands.
func BenchmarkAnalyze(b *testing.B) {
	minutes := benchDays(b) * 24 * 60
	clusters := benchClusters(b)
	analyzerOnly := os.Getenv("GPULENS_BENCH_ANALYZER_ONLY") != ""
	for _, gpus := range benchSizes(b) {
		b.Run(fmt.Sprintf("gpus=%d", gpus), func(b *testing.B) {
			// The largest query ("gpu allocated steps") holds just over
			// 3 × GPUs × steps samples at once: the default limit of 50M
			// refuses a week at one-minute steps above about 1,600 GPUs.
			// Only the bare engine's unsharded passes need it lifted: with
			// ANALYZER_ONLY the engine keeps the default, which the
			// sharded analysis stays within.
			opts := source.EmbeddedOptions{}
			if need := 4 * gpus * minutes; need > 50_000_000 {
				opts.MaxSamples, opts.Timeout = need, 30*time.Minute
				if analyzerOnly {
					opts.MaxSamples = 0
				}
			}
			f := newFleetWith(b, opts)
			if clusters > 0 {
				if gpus%clusters != 0 {
					b.Fatalf("%d GPUs do not split into %d clusters of the same size", gpus, clusters)
				}
				generateClusters(b, f, gpus, clusters, minutes)
			} else {
				generateFleet(b, f, gpus, minutes)
			}
			if err := f.src.Compact(context.Background()); err != nil {
				b.Fatal(err)
			}
			w := fleet.Window{Start: t0, End: minute(minutes), Step: time.Minute}
			// Read every chunk once, so the first sub-benchmark does not
			// pay alone for faulting in the freshly written blocks.
			names, err := f.src.MetricNames(context.Background(), w.Start, w.End)
			if err != nil {
				b.Fatal(err)
			}
			for _, name := range names {
				if _, err := f.src.Query(context.Background(), "count(count_over_time("+name+"[1w]))", w.End); err != nil {
					b.Fatal(err)
				}
			}

			if clusters > 0 {
				b.Run("clusters", func(b *testing.B) {
					var res *fleet.Result
					var n int
					peak, start := measureRSS(b, func() {
						for b.Loop() {
							var err error
							if res, n, err = analyzeClusters(context.Background(), f.src, native.Schema{}, w); err != nil {
								b.Fatal(err)
							}
						}
					})
					if n != clusters || len(res.GPUs) != gpus || len(res.Allocations) != gpus {
						b.Fatalf("got %d clusters, %d GPUs and %d allocations, want %d, %d and %d",
							n, len(res.GPUs), len(res.Allocations), clusters, gpus, gpus)
					}
					// ClusterValues' query, then every cluster's.
					b.ReportMetric(float64(1+res.QueryCount), "queries/op")
					b.ReportMetric(float64(res.Shards), "shards/op")
					b.ReportMetric(float64(n), "clusters/op")
					reportPeak(b, peak)
					if start >= 0 {
						b.ReportMetric(float64(start)/(1<<20), "start-RSS-MiB")
					}
				})
			} else {
				b.Run("analyzer", analyzerBench(f, w, gpus))
			}
			if analyzerOnly {
				return
			}

			b.Run("engine", func(b *testing.B) {
				ww, err := w.WithDefaults()
				if err != nil {
					b.Fatal(err)
				}
				a := &analysis{w: ww, res: &fleet.Result{ExpectedSteps: ww.ExpectedSteps()}}
				qs := a.passQueries(native.Schema{})
				ng := bareEngine(opts)
				queryable := storage.QueryableFunc(f.src.Querier)
				peak := measurePeakRSS(b, func() {
					for b.Loop() {
						if err := bareRun(ng, queryable, qs, ww); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.ReportMetric(float64(len(qs)), "queries/op")
				reportPeak(b, peak)
			})

			b.Run("floor", func(b *testing.B) {
				ww, err := w.WithDefaults()
				if err != nil {
					b.Fatal(err)
				}
				exprs := floorQueries(b, (&analysis{w: ww}).scanQueries(native.Schema{}), ww)
				ng := bareEngine(opts)
				queryable := storage.QueryableFunc(f.src.Querier)
				peak := measurePeakRSS(b, func() {
					for b.Loop() {
						if err := bareRun(ng, queryable, exprs, ww); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.ReportMetric(float64(len(exprs)), "queries/op")
				reportPeak(b, peak)
			})
		})
	}
}

// analyzerBench is the "analyzer" sub-benchmark: Analyze over the whole
// fleet, one cluster of gpus GPUs.
func analyzerBench(f *testFleet, w fleet.Window, gpus int) func(*testing.B) {
	return func(b *testing.B) {
		var sh Sharding
		if os.Getenv("GPULENS_BENCH_FOLDS") != "" {
			sh = Sharding{Lanes: true, TimelinePoints: 168}
		}
		var res *fleet.Result
		peak := measurePeakRSS(b, func() {
			for b.Loop() {
				var err error
				if res, err = AnalyzeSharded(context.Background(), f.src, native.Schema{}, w, sh); err != nil {
					b.Fatal(err)
				}
			}
		})
		if len(res.GPUs) != gpus || len(res.Allocations) != gpus {
			b.Fatalf("got %d GPUs and %d allocations, want %d", len(res.GPUs), len(res.Allocations), gpus)
		}
		b.ReportMetric(float64(res.QueryCount), "queries/op")
		b.ReportMetric(float64(res.Shards), "shards/op")
		reportPeak(b, peak)
	}
}

// analyzeClusters analyses a store of several clusters as pipeline.Run
// does (analyzeClusters there): the clusters' values, then each cluster
// alone in its Cluster scope, sharded within the default
// sample budget, one at a time, and the results merged. It returns the
// merged result and the number of clusters.
func analyzeClusters(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window) (*fleet.Result, int, error) {
	clusters, err := ClusterValues(ctx, src, sch, w, vocab.DefaultClusterLabel)
	if err != nil {
		return nil, 0, err
	}
	parts := make([]fleet.Clustered, 0, len(clusters))
	for _, c := range clusters {
		res, err := AnalyzeScoped(ctx, src, Cluster(vocab.DefaultClusterLabel, c), sch, w, Sharding{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", fleet.ClusterName(c), err)
		}
		parts = append(parts, fleet.Clustered{Cluster: c, Result: res})
	}
	return fleet.MergeClusters(parts), len(clusters), nil
}

// benchClusters is how many clusters the fleet is written as
// (GPULENS_BENCH_CLUSTERS): 0, the default, writes one fleet without the
// cluster label.
func benchClusters(b *testing.B) int {
	env := os.Getenv("GPULENS_BENCH_CLUSTERS")
	if env == "" {
		return 0
	}
	n, err := strconv.Atoi(env)
	if err != nil || n <= 0 {
		b.Fatalf("GPULENS_BENCH_CLUSTERS=%q: want a positive number of clusters", env)
	}
	return n
}

// floorQueries read every sample of the window once: a count_over_time
// over the whole window of each metric the query set selects, the least
// any analysis of those series must do. Metrics the store lacks cost
// nothing.
func floorQueries(b *testing.B, qs []namedQuery, w fleet.Window) []namedQuery {
	seen := map[string]bool{}
	var exprs []namedQuery
	for _, q := range qs {
		e, err := promqlParser.ParseExpr(q.expr)
		if err != nil {
			b.Fatalf("query %q: %v", q.name, err)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok && vs.Name != "" && !seen[vs.Name] {
				seen[vs.Name] = true
				exprs = append(exprs, namedQuery{name: vs.Name, expr: fmt.Sprintf("sum(count_over_time(%s[%s]))", vs.Name, rangeStr(w))})
			}
			return nil
		})
	}
	return exprs
}

// benchDays is the window's length in days: 7 unless GPULENS_BENCH_DAYS
// says otherwise, for fleets whose week cannot be written here.
func benchDays(b testing.TB) int {
	env := os.Getenv("GPULENS_BENCH_DAYS")
	if env == "" {
		return 7
	}
	n, err := strconv.Atoi(env)
	if err != nil || n <= 0 || n > 7 {
		b.Fatalf("GPULENS_BENCH_DAYS=%q: want whole days from 1 to 7", env)
	}
	return n
}

func benchSizes(b testing.TB) []int {
	env := os.Getenv("GPULENS_BENCH_GPUS")
	if env == "" {
		return []int{100, 1000}
	}
	var sizes []int
	for f := range strings.SplitSeq(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("GPULENS_BENCH_GPUS=%q: want a comma-separated list of positive sizes", env)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// bareEngine is a promql.Engine configured as source.OpenEmbedded
// configures its own (kept in step by hand: the embedded engine is not
// exported).
func bareEngine(o source.EmbeddedOptions) *promql.Engine {
	maxSamples, timeout := o.MaxSamples, o.Timeout
	if maxSamples == 0 {
		maxSamples = 50_000_000
	}
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	return promql.NewEngine(promql.EngineOpts{
		MaxSamples:           maxSamples,
		Timeout:              timeout,
		LookbackDelta:        5 * time.Minute,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
	})
}

// bareRun evaluates qs as runQueries does (an instant query at w.End, or
// a range query at the window's steps for a pass), queryConcurrency at a
// time, and only checks for errors.
func bareRun(ng *promql.Engine, q storage.Queryable, qs []namedQuery, w fleet.Window) error {
	sem := make(chan struct{}, queryConcurrency)
	errs := make(chan error, len(qs))
	for _, nq := range qs {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			var qry promql.Query
			var err error
			if nq.series == nil {
				qry, err = ng.NewInstantQuery(context.Background(), q, nil, nq.expr, w.End)
			} else {
				first := time.UnixMilli(firstStep(w))
				last := first.Add(time.Duration(w.ExpectedSteps()-1) * w.Step)
				qry, err = ng.NewRangeQuery(context.Background(), q, nil, nq.expr, first, last, w.Step)
			}
			if err != nil {
				errs <- err
				return
			}
			defer qry.Close()
			errs <- qry.Exec(context.Background()).Err
		}()
	}
	for range qs {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// measurePeakRSS runs fn and returns the process's peak resident set size
// in bytes while it ran, or -1 where Linux's /proc/self/clear_refs is not
// available. It also reports the process's CPU time (user + system, all
// threads) per op: on a shared machine it varies less than wall time.
func measurePeakRSS(b *testing.B, fn func()) int64 {
	peak, _ := measureRSS(b, fn)
	return peak
}

// measureRSS is measurePeakRSS that also returns the resident set just
// before fn, after the high-water mark's reset (-1 where unknown): what the
// process held before the timed loop (the TSDB's memory and mapped
// blocks), which the peak includes.
func measureRSS(b *testing.B, fn func()) (peak, start int64) {
	runtime.GC()
	debug.FreeOSMemory()
	limit := limitMemory(b)
	stop := startProfiles(b)
	// "5" resets the VmHWM high-water mark to the current RSS (Linux 4.0+).
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	start = procStatus("VmRSS:")
	startAnon := procStatus("RssAnon:")
	anon, file, done := pollRSS()
	cpu0 := cpuTime()
	fn()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	close(done)
	stop()
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	if limit > 0 {
		b.ReportMetric(limit*1024, "memcg-limit-MiB")
	}
	if startAnon >= 0 {
		b.ReportMetric(float64(startAnon)/(1<<20), "start-anon-MiB")
		b.ReportMetric(float64(anon.Load())/(1<<20), "peak-anon-MiB")
		b.ReportMetric(float64(file.Load())/(1<<20), "peak-file-MiB")
	}
	if reset != nil {
		return -1, start
	}
	return procStatus("VmHWM:"), start
}

// limitMemory limits the memory cgroup the process runs in, where
// scripts/bench-analyze.sh put it in one (MEMCG_LIMIT_GIB): the setup has
// run unlimited, and from here the kernel reclaims the store's mapped
// pages when the process needs the memory, as under a pod's limit.
// It returns the limit in GiB, 0 for none.
func limitMemory(b *testing.B) float64 {
	file := os.Getenv("GPULENS_BENCH_MEMCG_LIMIT_FILE")
	if file == "" {
		return 0
	}
	gib, err := strconv.ParseFloat(os.Getenv("GPULENS_BENCH_MEMCG_LIMIT_GIB"), 64)
	if err != nil || gib <= 0 {
		b.Fatalf("GPULENS_BENCH_MEMCG_LIMIT_GIB: want a number of GiB above 0, got %q", os.Getenv("GPULENS_BENCH_MEMCG_LIMIT_GIB"))
	}
	if err := os.WriteFile(file, []byte(strconv.FormatInt(int64(gib*(1<<30)), 10)), 0); err != nil {
		b.Fatalf("limiting the memory cgroup: %v", err)
	}
	return gib
}

// pollRSS samples the process's anonymous and file-backed resident
// memory (RssAnon, RssFile) every 20 ms until done is closed, keeping the
// highest of each: the kernel keeps no high-water mark of either, and the
// two are different costs. Anonymous memory is the analysis's own;
// file-backed is the store's blocks mapped in, clean page-cache pages
// the kernel can drop under pressure (and in the store's process, not
// the analyzer's, when the store is a remote Prometheus).
func pollRSS() (anon, file *atomic.Int64, done chan struct{}) {
	anon, file, done = new(atomic.Int64), new(atomic.Int64), make(chan struct{})
	sample := func() {
		if v := procStatus("RssAnon:"); v > anon.Load() {
			anon.Store(v)
		}
		if v := procStatus("RssFile:"); v > file.Load() {
			file.Store(v)
		}
	}
	sample()
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return anon, file, done
}

// procStatus is field of /proc/self/status in bytes, or -1.
func procStatus(field string) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// startProfiles starts the CPU profile of a timed loop and writes the heap
// profile before it, in the directory GPULENS_BENCH_PROFILE names, as
// gpus=N-<sub-benchmark>.*.pprof; the function it returns stops the CPU
// profile and writes the heap profile after the loop. Without the variable
// it does nothing.
func startProfiles(b *testing.B) (stop func()) {
	dir := os.Getenv("GPULENS_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	name := strings.ReplaceAll(strings.TrimPrefix(b.Name(), "BenchmarkAnalyze/"), "/", "-")
	heap := func(suffix string) {
		f, err := os.Create(filepath.Join(dir, name+suffix))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	heap(".heap0.pprof")
	f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		// The allocation profile is as of the last collection.
		runtime.GC()
		heap(".heap1.pprof")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportPeak(b *testing.B, peak int64) {
	if peak >= 0 {
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	}
}

// generateFleet appends in time order, one minute of the whole fleet per
// commit, as a scrape would, so the TSDB takes the fast in-order path.
func generateFleet(b testing.TB, f *testFleet, gpus, minutes int) {
	b.Helper()
	generateClusters(b, f, gpus, 0, minutes)
}

// generateClusters is generateFleet for a store shared by clusters: with
// clusters > 0, GPU g is GPU g%(gpus/clusters) of cluster "cluster-K",
// K = g/(gpus/clusters), whose node and pod names are those of a fleet of
// gpus/clusters GPUs (so every cluster has a node-0 and a train0-0); GPU
// UUIDs stay unique, as real ones are. With clusters 0 the series have no
// cluster label.
func generateClusters(b testing.TB, f *testFleet, gpus, clusters, minutes int) {
	b.Helper()
	type gen struct {
		lset labels.Labels
		ref  storage.SeriesRef
		v    func(g, i int) float64
	}
	var all []*gen
	per := gpus
	if clusters > 0 {
		per = gpus / clusters
	}
	for g := range gpus {
		// h is the GPU's index in its cluster, which names its node and pod.
		h := g % per
		node, uuid := fmt.Sprintf("node-%d", h/8), fmt.Sprintf("GPU-%05d", g)
		// StatefulSets of 100 pods ("train7-42" is pod 42 of train7): one
		// workload of the whole fleet would be a single namespace shard
		// that no budget below the fleet's holds.
		pod := fmt.Sprintf("train%d-%d", h/100, h%100)
		add := func(l labels.Labels, v func(g, i int) float64) {
			if clusters > 0 {
				l = labels.NewBuilder(l).Set(vocab.DefaultClusterLabel, fmt.Sprintf("cluster-%d", g/per)).Labels()
			}
			all = append(all, &gen{lset: l, v: v})
		}
		// The exporter's identity labels (docs/METRICS.md): whole GPUs, not in MIG mode.
		add(gpuLabels("gpulens_gpu_info", node, uuid, a100, "pci_bus_id", fmt.Sprintf("00000000:%02X:00.0", g%8), "driver_version", "570.86.15", "cuda_version", "12.8", "mig_mode", "false"), func(int, int) float64 { return 1 })
		add(gpuLabels("gpulens_gpu_utilization_ratio", node, uuid, a100), func(g, i int) float64 { return float64((g+i)%10) / 10 })
		add(gpuLabels("gpulens_gpu_memory_total_bytes", node, uuid, a100), func(int, int) float64 { return 80 * gib })
		add(gpuLabels("gpulens_gpu_energy_joules_total", node, uuid, a100), func(_, i int) float64 { return 300 * 60 * float64(i) })
		add(containerLabels("gpulens_container_gpu_allocation_ratio", node, uuid, a100, "team", pod, "none", "", ""), func(int, int) float64 { return 1 })
		add(containerLabels("gpulens_container_gpu_utilization_ratio", node, uuid, a100, "team", pod, "none", "", "", "method", "device"), func(g, i int) float64 { return float64((g+i)%10) / 10 })
		add(containerLabels("gpulens_container_gpu_memory_used_bytes", node, uuid, a100, "team", pod, "none", "", "", "method", "device"), func(g, i int) float64 { return float64((g*i)%80) * gib })
	}
	for i := 1; i <= minutes; i++ {
		ts := minute(i).UnixMilli()
		for g, s := range all {
			ref, err := f.app.Append(s.ref, s.lset, ts, s.v(g/7, i))
			if err != nil {
				b.Fatal(err)
			}
			s.ref = ref
		}
		f.commit(b)
	}
}
