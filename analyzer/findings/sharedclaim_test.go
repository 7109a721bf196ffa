package findings

import (
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// TestSharedClaim is issue 47: a week of testdata/sharing/
// shared-claim-week.yaml, two pods of Deployment team-chat/vllm sharing
// one H100 through ResourceClaim team-chat/vllm-shared-gpu while their
// memory leaks towards the device's, read from every layout that carries
// DRA claims: gpulens-exporter's gpulens_container_gpu_claim_info, and
// dcgm-exporter's --kubernetes-enable-dra copies (a copy of the device's
// series per pod of the claim, each labelled dra_*:
// transformation/kubernetes.go, NVIDIA/dcgm-exporter d5e5f51, 454-511),
// scraped directly or through a ServiceMonitor (honorLabels true and
// false); and the same pods with a claim each, on GPUs of their own.
//
// A shared claim gives one OOM-risk finding naming the claim, its pods and
// the device, with the device's memory once (never the copies summed),
// and advice through the claim: a ResourceClaimTemplate per pod, or a
// device with more memory, priced. Every expected figure is computed here
// from the scenario, the price table and the policy, not from a run.
func TestSharedClaim(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "sharing", "shared-claim-week.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		mib, gibB = 1 << 20, 1 << 30
		week      = 7 * 24 * time.Hour
		ns, claim = "team-chat", "vllm-shared-gpu"
		// prices.yaml: H100-80GB and H200-141GB, per GPU-hour.
		h100, h200 = 6.88, 7.91
	)
	pods := []string{"vllm-7c9f8d6b5-k2m4x", "vllm-7c9f8d6b5-x9p2q"}
	// go-nvml's dgxh100 mock: 80 GiB. Each pod holds 18 GiB + 112 MiB an
	// hour; the two share the device, whose memory is their sum.
	device := 80.0 * gibB
	podAt := func(h float64) float64 { return 18*gibB + h*112*mib }
	wantLast := 2 * podAt(week.Hours())            // 72.75 GiB
	wantP99 := 2 * podAt(0.99*week.Hours())        // 72.38 GiB: a ramp's 99th percentile of steps
	wantGrowth := 2 * 112.0 * mib                  // per hour
	wantToFull := (device - wantLast) / wantGrowth // 33.1 h, inside the week's horizon
	// A device per pod: two H100s where one is paid for.
	wantCost, wantSavings := h100*730, -h100*730
	// The device's trend fills it within the horizon, so what the claim's
	// device must hold is all of it plus 20% margin, 96 GiB: the
	// H100-NVL-94GB's 94 (scaled from the measured 80 GiB by 94/80) is
	// too little, the H200-141GB's is the cheapest that holds it.
	wantLarger := math.Round((h200-h100)*730*100) / 100

	uuids := uuidsOf(s)
	nativeMonitored := mode{schema: native.Schema{}, serviceMonitor: true}
	for _, tt := range []struct {
		name string
		m    mode
		// copies: every pod's series is a copy of the device's.
		copies bool
	}{
		{"gpulens-exporter", nativeMode, false},
		{"gpulens-exporter/honorLabels-false", nativeMonitored, false},
		{"dcgm-exporter-dra/honorLabels-true", dcgmOnePod, true},
		{"dcgm-exporter-dra/honorLabels-false", dcgmStock, true},
		{"dcgm-exporter-dra/per-process-layout", dcgmPerProc, true},
	} {
		t.Run("shared/"+tt.name, func(t *testing.T) {
			res := analyzeScenario(t, s, tt.m, scenarioStart, scenarioStart.Add(week), scenarioStep)
			for _, cluster := range []bool{false, true} {
				var inv *inventory.Inventory
				if cluster {
					inv = sharedClaimCluster(s, ns, claim, pods)
				}
				r := Detect(res, inv, criteria.DefaultConfig(), price.DefaultPrices())
				noFigureAboveDevice(t, r, device)
				var ooms []Finding
				for _, f := range r.Findings {
					if f.Kind == vocab.KindTimesliceOOMRisk {
						ooms = append(ooms, f)
					}
				}
				if len(ooms) != 1 {
					t.Fatalf("cluster %v: %d OOM-risk findings, want 1:\n%s", cluster, len(ooms), summaries(r))
				}
				f := ooms[0]
				if f.GPUUUID != uuids[0] || f.Sharing != SharingSharedClaim || f.AllocationPath != vocab.AllocationPathDRA ||
					!slices.Equal(f.Claims, []string{ns + "/" + claim}) || !slices.Equal(f.Pods, pods) ||
					f.Namespace != ns || f.Workload != "vllm" || f.WorkloadKind != "Deployment" || f.Severity != Warning {
					t.Errorf("cluster %v: finding %+v", cluster, f)
				}
				for _, s := range append([]string{"shared ResourceClaim " + ns + "/" + claim, "Deployment team-chat/vllm", uuids[0], "gpu-h100-dra",
					"72.4 GiB of its 80.0 GiB", "+0.2 GiB/h it runs out within 33 h"}, pods...) {
					if !strings.Contains(f.Summary, s) {
						t.Errorf("cluster %v: summary %q does not say %q", cluster, f.Summary, s)
					}
				}
				if strings.Contains(f.Summary, "time-slic") {
					t.Errorf("a shared claim called time-slicing: %s", f.Summary)
				}
				ev := f.Evidence
				near := func(key string, want, tol float64) {
					if math.Abs(ev[key]-want) > tol {
						t.Errorf("cluster %v: %s = %.4g, want %.4g", cluster, key, ev[key], want)
					}
				}
				near("device_memory_bytes", device, 0)
				near("memory_in_use_p99_bytes", wantP99, 0.1*gibB)
				near("device_memory_used_last_bytes", wantLast, 0.05*gibB)
				near("device_memory_growth_bytes_per_hour", wantGrowth, 0.01*wantGrowth)
				near("hours_to_full", wantToFull, 0.5)
				near("projected_memory_bytes", device, 0)
				near("tenants", 2, 0)
				// The per-pod split: each pod's own where the exporter
				// measures it, and nowhere a sum of copies.
				if tt.copies {
					if _, ok := ev["tenants_memory_p99_bytes"]; ok || ev["tenant_memory_unknown"] != 1 || !strings.Contains(f.Summary, "how it splits between the pods is not known") {
						t.Errorf("cluster %v: copies summed or the split claimed known: %v %s", cluster, ev, f.Summary)
					}
				} else {
					near("tenants_memory_p99_bytes", wantP99, 0.1*gibB)
					if !strings.Contains(f.Summary, "36.2 GiB") { // one pod: 18 GiB + 0.99 × 168 h × 112 MiB
						t.Errorf("cluster %v: summary %q does not give a pod's own memory", cluster, f.Summary)
					}
				}
				if !f.CostKnown || math.Abs(f.MonthlyCostUSD-wantCost) > 0.01 || math.Abs(f.MonthlySavingsUSD-wantSavings) > 0.01 {
					t.Errorf("cluster %v: cost %.2f savings %.2f, want %.2f and %.2f", cluster, f.MonthlyCostUSD, f.MonthlySavingsUSD, wantCost, wantSavings)
				}
				rec := f.Recommendation
				if rec == nil || rec.Action != recommend.ActionClaimPerPod || rec.Allocation != vocab.AllocationPathDRA ||
					rec.Claim != "ResourceClaim "+ns+"/"+claim || rec.CurrentShare != 1 || rec.RecommendedShare != 2 || !rec.Reliability ||
					strings.HasPrefix(rec.From, "nvidia.com/") || strings.HasPrefix(rec.To, "nvidia.com/") || rec.DevicePluginConfig != "" {
					t.Fatalf("cluster %v: recommendation %+v, want a claim per pod through the claim", cluster, rec)
				}
				notes := strings.Join(rec.Notes, "\n")
				for _, s := range []string{"H200-141GB", "$" + strconv.FormatFloat(wantLarger, 'f', 0, 64) + " a month more",
					"$" + strconv.FormatFloat(h100*730, 'f', 0, 64) + " a month more"} {
					if !strings.Contains(notes, s) {
						t.Errorf("cluster %v: notes %q do not say %q", cluster, notes, s)
					}
				}
				if !cluster {
					if rec.Patch != nil || rec.ClaimTemplate != nil || !strings.Contains(notes, "resourceClaimTemplateName instead of resourceClaimName") {
						t.Errorf("without the claim's spec: patch %v template %v notes %q", rec.Patch, rec.ClaimTemplate, notes)
					}
					continue
				}
				// With the claim's spec: a template of the same spec, and
				// the pod template's entry pointed at it.
				wantTemplate := `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
    name: vllm-gpu-per-pod
    namespace: team-chat
spec:
    spec:
        devices:
            requests:
                - exactly:
                    allocationMode: ExactCount
                    count: 1
                    deviceClassName: gpu.nvidia.com
                  name: gpu
`
				if rec.ClaimTemplate == nil || rec.ClaimTemplate.YAML != wantTemplate {
					t.Errorf("template:\n%v\nwant\n%s", rec.ClaimTemplate, wantTemplate)
				}
				wantPatch := `{"spec":{"template":{"spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"vllm-gpu-per-pod"}]}}}}`
				if rec.Patch == nil || rec.Patch.JSON != wantPatch || rec.Patch.Target != "Deployment/team-chat/vllm" {
					t.Errorf("patch %+v, want %s", rec.Patch, wantPatch)
				}
				if rec.From != "gpu.nvidia.com shared by 2 pods" || rec.To != "gpu.nvidia.com per pod" {
					t.Errorf("%s → %s", rec.From, rec.To)
				}
			}
			// The notebook beside it keeps its own claim and verdict.
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			if f := match(r, want{vocab.KindIdleAllocation, "alice-jupyter", 1, Warning}, uuids); f == nil ||
				f.AllocationPath != vocab.AllocationPathDRA || !slices.Equal(f.Claims, []string{"research/alice-jupyter-gpu"}) {
				t.Errorf("notebook: %+v", f)
			}
		})
	}

	// The same pods with a claim each (a ResourceClaimTemplate's), each on
	// a GPU of its own: 36.4 GiB of 80 is 45%, no risk, in any layout.
	perPod := *s
	perPod.Nodes = slices.Clone(s.Nodes)
	perPod.Nodes[0].Pods = slices.Clone(s.Nodes[0].Pods)
	perPod.Nodes[0].Pods[0].Claim, perPod.Nodes[0].Pods[1].Claim, perPod.Nodes[0].Pods[1].GPU = "", "", 2
	for _, tt := range []struct {
		name string
		m    mode
	}{
		{"gpulens-exporter", nativeMode},
		{"dcgm-exporter-dra/honorLabels-true", dcgmOnePod},
		{"dcgm-exporter-dra/honorLabels-false", dcgmStock},
	} {
		t.Run("per-pod/"+tt.name, func(t *testing.T) {
			res := analyzeScenario(t, &perPod, tt.m, scenarioStart, scenarioStart.Add(week), scenarioStep)
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			noFigureAboveDevice(t, r, device)
			if f := match(r, want{vocab.KindTimesliceOOMRisk, "", -1, ""}, uuids); f != nil {
				t.Errorf("OOM risk on a GPU of its own: %s", f.Summary)
			}
			for _, w := range res.Workloads {
				if w.Name != "vllm" {
					continue
				}
				var claims []string
				for _, c := range w.Claims {
					claims = append(claims, c.String())
				}
				if w.AllocationPath != vocab.AllocationPathDRA || w.Sharing != vocab.SharingNone ||
					!slices.Equal(claims, []string{ns + "/" + pods[0] + "-gpu", ns + "/" + pods[1] + "-gpu"}) {
					t.Errorf("workload %+v", w)
				}
				if math.Abs(w.P99MemoryBytes-podAt(0.99*week.Hours())) > 0.1*gibB {
					t.Errorf("a pod's p99 memory %.2f GiB, want its own %.2f", w.P99MemoryBytes/gibB, podAt(0.99*week.Hours())/gibB)
				}
			}
		})
	}
}

// gibFigure is a figure in GiB in a sentence.
var gibFigure = regexp.MustCompile(`(\d+(?:\.\d+)?) GiB`)

// noFigureAboveDevice: no finding says, in its evidence, summary or
// advice, a memory figure larger than the device (device memory, bytes)
// it is about.
func noFigureAboveDevice(t *testing.T, r *Result, device float64) {
	t.Helper()
	for _, f := range r.Findings {
		for k, v := range f.Evidence {
			if strings.HasSuffix(k, "_bytes") && v > device {
				t.Errorf("%s: %s %.1f GiB exceeds the device's %.1f GiB", f.Kind, k, v/(1<<30), device/(1<<30))
			}
		}
		if f.Evidence["memory_ratio"] > 1 {
			t.Errorf("%s: memory ratio %v", f.Kind, f.Evidence["memory_ratio"])
		}
		text := []string{f.Summary}
		if f.Recommendation != nil {
			text = append(text, f.Recommendation.Summary)
			text = append(text, f.Recommendation.Notes...)
		}
		for _, s := range text {
			for _, m := range gibFigure.FindAllStringSubmatch(s, -1) {
				if v, _ := strconv.ParseFloat(m[1], 64); v*(1<<30) > device+0.05*(1<<30) {
					t.Errorf("%s: %s GiB exceeds the device's %.1f GiB: %s", f.Kind, m[1], device/(1<<30), s)
				}
			}
		}
		if strings.Contains(f.Summary, "%") {
			for _, m := range regexp.MustCompile(`(\d+)%`).FindAllStringSubmatch(f.Summary, -1) {
				if v, _ := strconv.Atoi(m[1]); v > 100 && strings.Contains(f.Summary, m[0]+" within") {
					t.Errorf("%s: projected past the device: %s", f.Kind, f.Summary)
				}
			}
		}
	}
}

// sharedClaimCluster is the cluster as the inventory reads it for the
// shared-claim week: the Deployment's pods, each naming ResourceClaim
// ns/claim in its spec.resourceClaims entry "gpu", and the claim, one
// whole GPU of NVIDIA's DRA driver, reserved for both.
func sharedClaimCluster(s *sim.Scenario, ns, claim string, pods []string) *inventory.Inventory {
	inv := &inventory.Inventory{Available: true, ReadAt: scenarioEnd, Pods: map[inventory.PodKey]inventory.Pod{},
		Namespaces: map[string]inventory.Namespace{ns: {Name: ns, Team: ns}}, Nodes: map[string]inventory.Node{},
		Claims: map[inventory.ClaimKey]inventory.ResourceClaim{}}
	node := s.Nodes[0].Name
	inv.Nodes[node] = inventory.Node{Name: node, Count: s.Nodes[0].GPUs, SharingStrategy: vocab.SharingNone, Replicas: 1,
		Taints: []inventory.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}
	for _, p := range pods {
		k := inventory.PodKey{Namespace: ns, Name: p}
		inv.Pods[k] = inventory.Pod{PodKey: k, Node: node, Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "vllm",
			Claims: []inventory.PodClaim{{Name: "gpu", Claim: claim, Containers: map[string][]string{"main": nil}}}}
	}
	inv.Claims[inventory.ClaimKey{Namespace: ns, Name: claim}] = inventory.ResourceClaim{
		ClaimSpec: inventory.ClaimSpec{
			GPU: []dra.Request{{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1}},
			Spec: map[string]any{"devices": map[string]any{"requests": []any{map[string]any{"name": "gpu",
				"exactly": map[string]any{"deviceClassName": dra.ClassGPU, "allocationMode": dra.ModeExactCount, "count": 1}}}}},
		},
		ReservedFor: pods, Allocated: true,
	}
	return inv
}
