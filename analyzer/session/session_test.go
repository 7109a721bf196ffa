package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/source"
)

var weekEnd = time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)

// fixtureDir writes the pipeline's fixture fleet to a TSDB directory.
func fixtureDir(t *testing.T) string { return pipelinetest.Dir(t, "../pipeline/testdata/fleet.yaml") }

// TestReportOpensTheSourceOnce: the analysis, the schema detection and the
// consolidation's plan all read the one source Open opened; with a data
// directory that is one TSDB open and one head replay per report.
func TestReportOpensTheSourceOnce(t *testing.T) {
	var opens atomic.Int64
	defer func(open func(string, source.EmbeddedOptions) (*source.Embedded, error)) { openEmbedded = open }(openEmbedded)
	openEmbedded = func(dir string, o source.EmbeddedOptions) (*source.Embedded, error) {
		opens.Add(1)
		return source.OpenEmbedded(dir, o)
	}
	ctx := context.Background()
	s, err := Open(ctx, Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, a, err := s.Report(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Consolidation == nil || r.Consolidation.Unavailable != "" || r.Consolidation.GPUsToday != len(a.Current.GPUs) {
		t.Errorf("consolidation %+v, want a plan of the window's %d GPUs", r.Consolidation, len(a.Current.GPUs))
	}
	if r.Schema != "native" || !a.Detected {
		t.Errorf("schema %q detected %v, want native detected", r.Schema, a.Detected)
	}
	if _, err := s.Plan(ctx, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("the TSDB was opened %d times for a report and a plan, want 1", n)
	}
}

// TestInputErrorsNameTheInput: what the user got wrong is named, before
// anything is opened.
func TestInputErrorsNameTheInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("findings:\n  idle: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	ok := Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-time.Hour), End: weekEnd, NoKubernetes: "test"}
	for _, c := range []struct {
		name   string
		edit   func(*Config)
		input  string // an InputError's; "" means a DataDirError
		reason string
	}{
		{"unknown schema", func(c *Config) { c.Schema = "nvidia-smi" }, InputSchema, "nvidia-smi"},
		{"broken thresholds", func(c *Config) { c.ConfigFile = bad }, InputConfig, "bad.yaml"},
		{"broken prices", func(c *Config) { c.PricesFile = bad }, InputPrices, "bad.yaml"},
		{"empty window", func(c *Config) { c.End = c.Start }, InputWindow, "after its start"},
		{"no source", func(c *Config) { c.DataDir = "" }, InputSource, "no metrics source"},
		{"two sources", func(c *Config) { c.PrometheusURL = "http://127.0.0.1:9" }, InputSource, "exclusive"},
		{"empty data directory", func(c *Config) { c.DataDir = empty }, "", "empty, not a Prometheus TSDB"},
		{"missing data directory", func(c *Config) { c.DataDir = filepath.Join(dir, "nope") }, "", "nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			s, err := Open(context.Background(), cfg)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			var ie *InputError
			var de *DataDirError
			switch {
			case c.input != "" && (!errors.As(err, &ie) || ie.Input != c.input):
				t.Errorf("%v (%T), want an InputError of %s", err, err, c.input)
			case c.input == "" && !errors.As(err, &de):
				t.Errorf("%v (%T), want a DataDirError", err, err)
			case !strings.Contains(err.Error(), c.reason):
				t.Errorf("%q lacks %q", err, c.reason)
			}
		})
	}
}

type plainSource struct{ queries *int }

func (p plainSource) Query(context.Context, string, time.Time) (model.Vector, error) {
	*p.queries++
	return nil, nil
}
func (plainSource) MetricNames(context.Context, time.Time, time.Time) ([]string, error) {
	return nil, nil
}
func (plainSource) Describe() string { return "plain" }
func (plainSource) Close() error     { return nil }

type rangeSource struct{ plainSource }

func (r rangeSource) QueryRange(context.Context, string, time.Time, time.Time, time.Duration) (model.Matrix, error) {
	*r.queries++
	return nil, nil
}

type counter struct {
	noObserver
	n int
}

func (c *counter) Query() { c.n++ }

// TestObservedKeepsRangeQueries: the analysis draws its charts only from a
// source that is a RangeQuerier, so observing must not hide it, nor add it.
func TestObservedKeepsRangeQueries(t *testing.T) {
	var c counter
	var sent int
	ctx := context.Background()
	plain := observed(plainSource{&sent}, &c)
	if _, ok := plain.(source.RangeQuerier); ok {
		t.Error("a source without range queries gained them")
	}
	_, _ = plain.Query(ctx, "up", time.Time{})
	ranged := observed(rangeSource{plainSource{&sent}}, &c)
	rq, ok := ranged.(source.RangeQuerier)
	if !ok {
		t.Fatal("the range queries were hidden")
	}
	_, _ = ranged.Query(ctx, "up", time.Time{})
	_, _ = rq.QueryRange(ctx, "up", time.Time{}, time.Time{}, time.Minute)
	if c.n != 3 || sent != 3 {
		t.Errorf("observed %d queries of %d sent, want 3", c.n, sent)
	}
}
