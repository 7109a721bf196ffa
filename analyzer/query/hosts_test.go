package query_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/exporter/sim"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
)

// TestHostLabelHoldsExporterPod: dcgm-exporter deployed without NODE_NAME
// writes its own pod's name in the host label. With kube-state-metrics'
// kube_pod_info for those pods, the analysis names the same nodes, rows
// and figures as with NODE_NAME set; without it, the GPUs stay under the
// pods' names and a note says why and what to set.
func TestHostLabelHoldsExporterPod(t *testing.T) {
	s := sim.Default()
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(time.Hour), Step: time.Minute}
	var nodes []string
	for _, n := range s.Nodes {
		nodes = append(nodes, n.Name)
	}
	analyze := func(t *testing.T, hostIsPod, podInfo bool) *fleet.Result {
		ctx := context.Background()
		db := simulate(t, s, w, func(node string, tsdb *simfleet.TSDBSink) simfleet.Sink {
			d := simfleet.NewDCGMSink(simfleet.NewServiceMonitorSink(tsdb, simfleet.DCGMTarget(node)))
			d.Install.HostIsPod = hostIsPod
			return d
		})
		if podInfo {
			// kube-state-metrics' series of each exporter pod, scraped
			// every minute over the window.
			app := db.Appender(ctx)
			for _, node := range nodes {
				ls := labels.FromStrings("__name__", "kube_pod_info", "job", "kube-state-metrics", "namespace", simfleet.DCGMNamespace,
					"pod", simfleet.DCGMExporterPod(node), "node", node, "host_ip", "10.0.0.1", "created_by_kind", "DaemonSet")
				for ts := w.Start; !ts.After(w.End); ts = ts.Add(time.Minute) {
					if _, err := app.Append(0, ls, ts.UnixMilli(), 1); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := app.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		res, err := query.Analyze(ctx, db, dcgm.Schema{}, w)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	want := analyze(t, false, false)
	got := analyze(t, true, true)
	// Everything equal, but the note on the renaming.
	renamed := *got
	renamed.Notes = nil
	for _, n := range got.Notes {
		if !strings.Contains(n, "kube_pod_info") {
			renamed.Notes = append(renamed.Notes, n)
		}
	}
	if len(renamed.Notes) != len(got.Notes)-1 {
		t.Errorf("notes %q: want one on the renaming", got.Notes)
	}
	for _, d := range query.ResultDiff(want, &renamed) {
		t.Error(d)
	}
	gotNodes := map[string]bool{}
	for _, g := range got.GPUs {
		gotNodes[g.Node] = true
	}
	for _, n := range nodes {
		if !gotNodes[n] {
			t.Errorf("node %s has no GPU; nodes %v", n, gotNodes)
		}
	}

	bare := analyze(t, true, false)
	for _, g := range bare.GPUs {
		if !strings.HasPrefix(g.Node, "nvidia-dcgm-exporter-") {
			t.Errorf("GPU %s under node %q without kube_pod_info, want the exporter pod's name", g.UUID, g.Node)
		}
	}
	if notes := strings.Join(bare.Notes, "\n"); !strings.Contains(notes, "NODE_NAME") {
		t.Errorf("notes %q: want the unresolved host label said, with the fix", notes)
	}
}
