package collector

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/gpulens/gpulens/exporter/podresources"
)

// docRow is one row of a docs/METRICS.md table.
type docRow struct {
	typ    string
	labels []string
}

func readMetricsDoc(t *testing.T) map[string]docRow {
	t.Helper()
	f, err := os.Open("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]docRow{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "gpulens_") {
			continue
		}
		name := strings.TrimSpace(cells[1])
		var labels []string
		for l := range strings.SplitSeq(cells[4], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		if _, dup := rows[name]; dup {
			t.Errorf("METRICS.md lists %s twice", name)
		}
		rows[name] = docRow{typ: strings.TrimSpace(cells[2]), labels: labels}
	}
	return rows
}

// TestMetricsDocMatchesCode gathers a snapshot that exercises every family
// and compares name, type and label names with docs/METRICS.md, both ways.
func TestMetricsDocMatchesCode(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "n", Attribution: testAttribution(t)})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The kubelet client's failure counters are served beside the
	// sampler's series (cmd/gpulens-exporter registers both).
	kubelet := podresources.New(podresources.Options{Socket: "/nonexistent/kubelet.sock"})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s, kubelet, versioncollector.NewCollector("gpulens_exporter"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	doc := readMetricsDoc(t)

	// Every described family must show up in the gathered output, or this
	// test would silently skip it.
	descs := make(chan *prometheus.Desc, 128)
	s.Describe(descs)
	kubelet.Describe(descs)
	close(descs)
	if n := len(descs); n+1 != len(mfs) {
		t.Errorf("test snapshot exercises %d families, the collector describes %d (+1 build_info): extend testSnapshot", len(mfs), n)
	}

	seen := map[string]bool{}
	for _, mf := range mfs {
		name := mf.GetName()
		seen[name] = true
		row, ok := doc[name]
		if !ok {
			t.Errorf("%s is exposed but missing from docs/METRICS.md", name)
			continue
		}
		if want := strings.ToLower(mf.GetType().String()); row.typ != want {
			t.Errorf("%s: METRICS.md says type %q, code exposes %q", name, row.typ, want)
		}
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		slices.Sort(labels)
		if !slices.Equal(labels, row.labels) {
			t.Errorf("%s: METRICS.md says labels %v, code exposes %v", name, row.labels, labels)
		}
	}
	// The analyzer's series live in the same document; only the exporter's
	// prefixes must all be exposed here.
	for name := range doc {
		exporterOwned := strings.HasPrefix(name, "gpulens_gpu_") || strings.HasPrefix(name, "gpulens_mig_") ||
			strings.HasPrefix(name, "gpulens_container_") || strings.HasPrefix(name, "gpulens_exporter_")
		if exporterOwned && !seen[name] {
			t.Errorf("docs/METRICS.md lists %s, the exporter does not expose it", name)
		}
	}
}
