// Package e2e checks that the analysis of one simulated window gives the
// same figures from the embedded TSDB and from real Prometheus and
// VictoriaMetrics servers filled by an OpenMetrics backfill of the same
// samples. The servers are the Debian packages .ci/run installs; without
// them the tests skip locally and fail in CI (internal/testenv).
package e2e

import (
	"context"
	"fmt"
	"github.com/gpulens/gpulens/signals/native"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/internal/openmetrics"
)

// The simulated time is fixed so that every run simulates the same
// samples. The servers never judge it against the wall clock: Prometheus
// applies retention relative to its newest block, and VictoriaMetrics,
// which does, is started with a retention of decades.
var (
	simStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	simEnd   = simStart.Add(6 * time.Hour)
	step     = time.Minute

	// fullWindow is the whole simulation. Inside it a pod ends (decode, at
	// 3h) and a GPU falls off the bus (4h): series that end, where servers
	// without staleness markers see them for longer (compare_test.go).
	fullWindow = fleetmodel.Window{Start: simStart, End: simEnd, Step: step}
	// liveWindow ends before any series does (ocr starts at 1h, the XID 13
	// is at 2h), so every figure of every row must match.
	liveWindow = fleetmodel.Window{Start: simStart, End: simStart.Add(2*time.Hour + 50*time.Minute), Step: step}
)

// fixture is the simulated window, analysed in process, and its export.
type fixture struct {
	// db is the embedded TSDB the simulation wrote, open for the whole
	// run: tests ask it for the exact figures a server should return where
	// the engines legitimately differ.
	db *source.Embedded
	// openMetrics is the path of the exported samples.
	openMetrics string
	// samples is the number of samples exported.
	samples int
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
	fixtureErr  error
	fixtureDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureVal != nil {
		fixtureVal.db.Close()
	}
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// simulated builds the fixture once for all tests of the package: the
// simulation is the slow part, and every test compares against it.
func simulated(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { fixtureVal, fixtureErr = buildFixture(context.Background()) })
	if fixtureErr != nil {
		t.Fatalf("building the simulated window: %v", fixtureErr)
	}
	return fixtureVal
}

func buildFixture(ctx context.Context) (*fixture, error) {
	dir, err := os.MkdirTemp("", "gpulens-e2e-")
	if err != nil {
		return nil, err
	}
	fixtureDir = dir
	sc, err := sim.Load(filepath.Join("testdata", "fleet.yaml"))
	if err != nil {
		return nil, err
	}
	db, err := source.OpenEmbedded(filepath.Join(dir, "tsdb"), source.EmbeddedOptions{})
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			db.Close()
		}
	}()

	var n atomic.Int64
	err = fleet.Run(ctx, fleet.Options{Scenario: sc, Start: simStart, End: simEnd, Step: step},
		func(string) fleet.Sink { return fleet.NewTSDBSink(ctx, db, &n) })
	if err != nil {
		return nil, fmt.Errorf("simulating: %w", err)
	}
	f := &fixture{db: db, openMetrics: filepath.Join(dir, "window.om")}
	if f.samples, err = export(ctx, db, f.openMetrics); err != nil {
		return nil, fmt.Errorf("exporting OpenMetrics: %w", err)
	}
	if f.samples == 0 {
		return nil, fmt.Errorf("exported no samples (the simulation wrote %d)", n.Load())
	}
	ok = true
	return f, nil
}

// export writes every simulated sample, as `gpulens demo
// --export-openmetrics` does.
func export(ctx context.Context, db *source.Embedded, path string) (int, error) {
	q, err := db.Querier(simStart.UnixMilli(), simEnd.UnixMilli())
	if err != nil {
		return 0, err
	}
	defer q.Close()
	out, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	n, err := openmetrics.Write(ctx, out, q, "gpulens_.+")
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// analyze runs the analysis of w against src.
func analyze(t *testing.T, src source.Source, w fleetmodel.Window) *fleetmodel.Result {
	t.Helper()
	res, err := query.Analyze(context.Background(), src, native.Schema{}, w)
	if err != nil {
		t.Fatalf("analysis against %s: %v", src.Describe(), err)
	}
	return res
}

// remoteEngine is a source for a Prometheus-compatible API at url that
// asks its engine for every figure, remote read or not.
func remoteEngine(t *testing.T, url string) source.Source {
	t.Helper()
	src, err := source.NewRemote(source.RemoteOptions{URL: url, Timeout: time.Minute, DisableRemoteRead: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// remote is a source for a Prometheus-compatible API at url.
func remote(t *testing.T, url string) source.Source {
	t.Helper()
	src, err := source.NewRemote(source.RemoteOptions{URL: url, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// TestFixtureWindows pins what the server tests rely on: in fullWindow
// exactly one allocation (decode) and one GPU's measurements (the L4 that
// falls off the bus) end, so the lookback bound is exercised on both kinds
// of row; in liveWindow nothing ends, so every figure is compared. It needs
// no server and so also runs where the others skip.
func TestFixtureWindows(t *testing.T) {
	f := simulated(t)
	full := endedSeries(t, f.db, fullWindow)
	if len(full.allocations) != 1 {
		t.Fatalf("fullWindow: %d allocations end inside it, want 1 (decode): %v", len(full.allocations), full.allocations)
	}
	for k, last := range full.allocations {
		if k.Pod != "decode" || !last.Equal(simStart.Add(3*time.Hour-step)) {
			t.Errorf("fullWindow: %s last seen %s, want decode at 02:59", k.Pod, last.Format(time.TimeOnly))
		}
	}
	res := analyze(t, f.db, fullWindow)
	var lost []fleetmodel.GPUKey
	for _, g := range res.GPUs {
		if g.DownSteps > 0 {
			lost = append(lost, g.GPUKey)
		}
	}
	if len(lost) != 1 || lost[0].Node != "gpu-l4-e2e" {
		t.Fatalf("fullWindow: GPUs down %v, want the one L4", lost)
	}
	for _, m := range []map[fleetmodel.GPUKey]time.Time{full.gpuUtil, full.gpuThrottle} {
		if _, ok := m[lost[0]]; len(m) != 1 || !ok {
			t.Errorf("fullWindow: GPU series ending %v, want only the lost L4's %v", m, lost[0])
		}
	}

	live := endedSeries(t, f.db, liveWindow)
	if n := len(live.allocations) + len(live.gpuUtil) + len(live.gpuThrottle); n != 0 {
		t.Errorf("liveWindow: %d series end inside it, want none: %+v", n, live)
	}
}
