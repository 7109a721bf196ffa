package findings

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/query"
)

// TestDRAWorkloads judges four hours of the DRA fleet of
// signals/testdata/*.dra.prom, under each exporter's series,
// without cluster access. Of the workloads only the Deployment infer, at
// 10% of the whole A100 a ResourceClaim gave it, has a verdict
// (underused), and the A30 that PR #664's paste shows unheld beside the
// claimed one is unallocated capacity; trainer-0 (the
// device plugin's, 90%) and the shared claim's and the MIG claim's
// tenants are left alone, as on the device plugin's path. infer's finding
// says its path and claim, and its right-sizing, which without the
// claim's spec cannot be a patch, carries no limits patch.
func TestDRAWorkloads(t *testing.T) {
	for _, sch := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
		t.Run(sch.Name(), func(t *testing.T) {
			file := map[string]string{native.SchemaName: "native.dra.prom", dcgm.SchemaName: "dcgm-exporter.dra.prom"}[sch.Name()]
			res := replay(t, sch, "../../signals/testdata/"+file, 4*time.Hour)
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			if len(r.Findings) != 2 || r.Findings[1].Kind != vocab.KindUnallocated || r.Findings[1].AllocationPath != "" {
				t.Fatalf("findings %+v, want infer's and the unheld A30's", r.Findings)
			}
			f := r.Findings[0]
			const claim = "ml/infer-7d9f8c6b5-x2k9q-gpu-m4t7w"
			if f.Kind != vocab.KindUnderusedGPU || f.Workload != "infer" || f.AllocationPath != vocab.AllocationPathDRA ||
				len(f.Claims) != 1 || f.Claims[0] != claim || !strings.Contains(f.Summary, "allocated through ResourceClaim "+claim) {
				t.Errorf("finding %+v", f)
			}
			rec := f.Recommendation
			if rec == nil || rec.Patch != nil || rec.Allocation != vocab.AllocationPathDRA || rec.Claim != "ResourceClaim "+claim || len(rec.Notes) == 0 {
				t.Errorf("recommendation %+v, want no limits patch, the claim and a note", rec)
			}
			// Its sizes are the driver's device classes, not the device
			// plugin's resources the pod never asked for.
			if rec != nil && (strings.HasPrefix(rec.From, "nvidia.com/") || !strings.HasPrefix(rec.To, "mig.nvidia.com ")) {
				t.Errorf("recommendation %s → %s, want DRA device classes", rec.From, rec.To)
			}
			if rec != nil && strings.Contains(strings.Join(rec.Notes, "\n"), "mig.config") {
				t.Errorf("notes %q send a DRA workload to the MIG manager's node config", rec.Notes)
			}
			// Under dcgm-exporter's one-pod layout a GPU with one tenant
			// may be time-sliced, which only the cluster could tell; not
			// a claimed one (one labelled copy per pod of the claim): of
			// the mixed node's two, trainer-0's GPU only.
			if sch.Name() == dcgm.SchemaName && !strings.Contains(strings.Join(r.Skipped, "\n"), ": 1 GPUs show at most one pod per device") {
				t.Errorf("skipped %q, want trainer-0's GPU alone unknown", r.Skipped)
			}
			// Every workload says its path, whatever its verdict.
			paths := map[string]vocab.AllocationPath{}
			for _, w := range res.Workloads {
				paths[w.Name] = w.AllocationPath
			}
			want := map[string]vocab.AllocationPath{"infer": "dra", "trainer": "device-plugin", "pod1": "dra", "pod2": "dra", "pod": "dra"}
			for name, p := range want {
				if paths[name] != p {
					t.Errorf("workload %s: path %q, want %q (%v)", name, paths[name], p, paths)
				}
			}
		})
	}
}

// replay stores an exposition file scraped once a minute over d, and
// analyses it.
func replay(t *testing.T, sch signals.Schema, file string, d time.Duration) *fleet.Result {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	w := fleet.Window{Start: scenarioStart, End: scenarioStart.Add(d), Step: time.Minute}
	db := pipelinetest.Scraped(t, data, w.Start, w.End, w.Step)
	res, err := query.Analyze(context.Background(), db, sch, w)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
