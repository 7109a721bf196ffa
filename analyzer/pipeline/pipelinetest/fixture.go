// Package pipelinetest loads a described fleet into an embedded TSDB, with
// the series the native exporter writes (docs/METRICS.md), for tests of the
// analysis and of what is built on it. A fixture file states the fleet in a
// few lines instead of hand-written series, so a golden test's input can be
// read and changed without reading Go.
package pipelinetest

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/source"
)

// Fixture is a fleet over [Start, End], scraped every Scrape.
type Fixture struct {
	Start       time.Time     `yaml:"start"`
	End         time.Time     `yaml:"end"`
	Scrape      time.Duration `yaml:"scrape"`
	GPUs        []GPU         `yaml:"gpus"`
	Allocations []Allocation  `yaml:"allocations"`
	// Labels are added to every series, as a Prometheus's external labels
	// are on their way to a store shared by several clusters.
	Labels map[string]string `yaml:"labels"`
}

// GPU is one physical GPU, reporting for the whole fixture unless To
// (from the fixture's start) ends its series first or Gap leaves a hole.
type GPU struct {
	Node      string  `yaml:"node"`
	UUID      string  `yaml:"uuid"`
	Model     string  `yaml:"model"`
	MemoryGiB float64 `yaml:"memory_gib"`
	Util      Load    `yaml:"util"`
	// To is when the exporter last reported the GPU (a GPU that fell off
	// the bus and was gone from NVML after the exporter restarted); 0 is
	// the fixture's end.
	To time.Duration `yaml:"to"`
	// Gap is a span with no series of the GPU, which then comes back.
	Gap Span `yaml:"gap"`
	// Down are spans with gpulens_gpu_up 0 (NVML_ERROR_GPU_IS_LOST).
	Down []Span `yaml:"down"`
	// XIDs are events, each counted on gpulens_gpu_xid_errors_total from
	// the scrape after At while the GPU is reported.
	XIDs []XID `yaml:"xids"`
}

// Span is [From, To) from the fixture's start, to the scrape.
type Span struct {
	From time.Duration `yaml:"from"`
	To   time.Duration `yaml:"to"`
}

func (s Span) holds(off time.Duration) bool { return off > s.From && off <= s.To }

// XID is one XID event of Code at At.
type XID struct {
	Code string        `yaml:"code"`
	At   time.Duration `yaml:"at"`
}

// Allocation is a container holding a share of a GPU from From to To,
// measured from the fixture's start.
type Allocation struct {
	Node        string        `yaml:"node"`
	UUID        string        `yaml:"uuid"`
	Namespace   string        `yaml:"namespace"`
	Pod         string        `yaml:"pod"`
	Sharing     string        `yaml:"sharing"`
	Share       float64       `yaml:"share"`
	MIGProfile  string        `yaml:"mig_profile"`
	GPUInstance string        `yaml:"gpu_instance"`
	Util        Load          `yaml:"util"`
	MemoryGiB   float64       `yaml:"memory_gib"`
	From        time.Duration `yaml:"from"`
	To          time.Duration `yaml:"to"`
	// NoUtil leaves out the utilization series, as when the exporter
	// cannot attribute a shared GPU's use.
	NoUtil bool `yaml:"no_util"`
}

// Load is a utilization of Base, swinging by Diurnal with a 24h period
// (peak at noon), clamped to [0, 1.2]: values above 1 test the capping.
type Load struct {
	Base    float64 `yaml:"base"`
	Diurnal float64 `yaml:"diurnal"`
}

func (l Load) at(t time.Time) float64 {
	h := float64(t.Hour()) + float64(t.Minute())/60
	return min(1.2, max(0, l.Base+l.Diurnal*math.Sin((h-6)/24*2*math.Pi)))
}

const gib = 1 << 30

// Read parses a fixture file.
func Read(path string) (*Fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &Fixture{}
	if err := yaml.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Scrape <= 0 {
		f.Scrape = time.Minute
	}
	if !f.End.After(f.Start) {
		return nil, fmt.Errorf("%s: end must be after start", path)
	}
	return f, nil
}

// Open loads the fixture at path into a new embedded TSDB in a temporary
// directory, closed when the test ends.
func Open(t testing.TB, path string) (*source.Embedded, *Fixture) {
	t.Helper()
	dir := t.TempDir()
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src, f
}

// Dir loads the fixture at path into a TSDB in a temporary directory and
// closes it, for a test of what opens the directory itself.
func Dir(t testing.TB, path string) string {
	t.Helper()
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Write loads the fixture into the TSDB at dir and closes it, so a test of
// the CLI can open the directory itself.
func (f *Fixture) Write(dir string) error { return WriteAll(dir, f) }

// WriteAll loads several fixtures into the TSDB at dir at once, as the
// clusters of one shared store (each with its own Labels), and closes it.
func WriteAll(dir string, fs ...*Fixture) error {
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		return err
	}
	app := src.Appender(context.Background())
	for _, f := range fs {
		if err := f.append(app); err != nil {
			return err
		}
	}
	if err := app.Commit(); err != nil {
		return err
	}
	return src.Close()
}

func (f *Fixture) append(app storage.Appender) error {
	for _, g := range f.GPUs {
		dev := []string{"node", g.Node, "gpu", "0", "uuid", g.UUID, "model", g.Model}
		up := func(t time.Time) float64 {
			for _, s := range g.Down {
				if s.holds(t.Sub(f.Start)) {
					return 0
				}
			}
			return 1
		}
		series := map[string]func(time.Time) float64{
			"gpulens_gpu_info":               func(time.Time) float64 { return 1 },
			"gpulens_gpu_up":                 up,
			"gpulens_gpu_utilization_ratio":  g.Util.at,
			"gpulens_gpu_memory_total_bytes": func(time.Time) float64 { return g.MemoryGiB * gib },
		}
		for _, span := range g.spans(f) {
			for name, v := range series {
				if err := f.series(app, name, dev, span[0], span[1], v); err != nil {
					return err
				}
			}
			if err := g.xids(f, app, dev, span); err != nil {
				return err
			}
		}
	}
	for _, a := range f.Allocations {
		model := ""
		for _, g := range f.GPUs {
			if g.UUID == a.UUID {
				model = g.Model
			}
		}
		l := []string{"node", a.Node, "gpu", "0", "uuid", a.UUID, "model", model, "namespace", a.Namespace, "pod", a.Pod,
			"container", "main", "gpu_instance", a.GPUInstance, "mig_profile", a.MIGProfile}
		from, to := f.Start.Add(a.From), f.Start.Add(a.To)
		if a.To == 0 {
			to = f.End
		}
		err := f.series(app, "gpulens_container_gpu_allocation_ratio", append(l, "sharing", a.Sharing), from, to, func(time.Time) float64 { return a.Share })
		if err == nil && !a.NoUtil {
			err = f.series(app, "gpulens_container_gpu_utilization_ratio", append(l, "method", "process"), from, to, a.Util.at)
		}
		if err == nil {
			err = f.series(app, "gpulens_container_gpu_memory_used_bytes", append(l, "method", "process"), from, to, func(time.Time) float64 { return a.MemoryGiB * gib })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// spans are the intervals the GPU was reported in.
func (g GPU) spans(f *Fixture) [][2]time.Time {
	end := f.End
	if g.To > 0 {
		end = f.Start.Add(g.To)
	}
	if g.Gap.To <= g.Gap.From {
		return [][2]time.Time{{f.Start, end}}
	}
	return [][2]time.Time{{f.Start, f.Start.Add(g.Gap.From)}, {f.Start.Add(g.Gap.To), end}}
}

// xids writes each code's counter within span, as the exporter creates it
// with its first event: from the scrape after the first event on.
func (g GPU) xids(f *Fixture, app storage.Appender, dev []string, span [2]time.Time) error {
	codes := map[string][]time.Time{}
	for _, x := range g.XIDs {
		codes[x.Code] = append(codes[x.Code], f.Start.Add(x.At))
	}
	for code, at := range codes {
		first := slices.MinFunc(at, time.Time.Compare)
		if !first.Before(span[1]) {
			continue
		}
		count := func(t time.Time) float64 {
			n := 0
			for _, x := range at {
				if x.Before(t) {
					n++
				}
			}
			return float64(n)
		}
		from := span[0]
		if first.After(from) {
			from = first
		}
		if err := f.series(app, "gpulens_gpu_xid_errors_total", append(slices.Clone(dev), "xid", code), from, span[1], count); err != nil {
			return err
		}
	}
	return nil
}

// series writes a sample every scrape in (from, to] and, as Prometheus's
// scrape loop does when a target stops exposing a series, a staleness marker
// one scrape later.
func (f *Fixture) series(app storage.Appender, name string, lbls []string, from, to time.Time, v func(time.Time) float64) error {
	lbls = append([]string{"__name__", name}, lbls...)
	for k, v := range f.Labels {
		lbls = append(lbls, k, v)
	}
	lset := labels.FromStrings(lbls...)
	t := from.Add(f.Scrape)
	for ; !t.After(to); t = t.Add(f.Scrape) {
		if _, err := app.Append(0, lset, t.UnixMilli(), v(t)); err != nil {
			return fmt.Errorf("%s: %w", lset, err)
		}
	}
	_, err := app.Append(0, lset, t.UnixMilli(), math.Float64frombits(value.StaleNaN))
	return err
}
