package serve

import (
	"maps"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

const runbook = "https://github.com/gpulens/gpulens/blob/main/docs/runbooks.md"

func TestAlertname(t *testing.T) {
	for _, tt := range []struct {
		kind vocab.Kind
		want vocab.AlertName
	}{
		// The rule files' name for the same condition.
		{vocab.KindIdleAllocation, "GPULensGPUAllocatedIdle"},
		{vocab.KindThermal, "GPULensGPUThermalThrottling"},
		{vocab.KindTimesliceOOMRisk, "GPULensTimesliceOOMRisk"},
		{vocab.KindMIGOversized, "GPULensMIGOversized"},
		{vocab.KindNoGPUQuota, "GPULensNamespaceWithoutGPUQuota"},
		// A kind outside the list is still sent, under a mechanical name.
		{"a--b-", "GPULensAB"},
		{"", "GPULens"},
	} {
		if got := Alertname(tt.kind); got != tt.want {
			t.Errorf("Alertname(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}

func TestFromFindings(t *testing.T) {
	idle := func(pod string, savings float64, known bool) findings.Finding {
		return findings.Finding{Kind: vocab.KindIdleAllocation, Severity: findings.Warning, Namespace: "team-a",
			Workload: "notebook", Pod: pod, Node: "n1", GPUUUID: "GPU-1", Summary: pod + " is idle",
			MonthlySavingsUSD: savings, CostKnown: known,
			Recommendation: &recommend.Recommendation{Summary: "release the GPU"}}
	}
	tests := []struct {
		name   string
		in     []findings.Finding
		labels []map[string]string
		annots []map[string]string
	}{
		{
			name: "one finding",
			in:   []findings.Finding{idle("p1", 1000, true)},
			labels: []map[string]string{{"alertname": "GPULensGPUAllocatedIdle", "severity": "warning",
				"namespace": "team-a", "workload": "notebook", "node": "n1", "gpu_uuid": "GPU-1"}},
			annots: []map[string]string{{"summary": "p1 is idle", "recommendation": "release the GPU", "description": "p1 is idle. Recommended: release the GPU.", "runbook_url": runbook + "#gpulensgpuallocatedidle",
				"savings": "$1000/month", "monthly_savings_usd": "1000.00", "report": "http://g/api/v1/report"}},
		},
		{
			name: "pods of one workload are one alert, savings summed",
			in:   []findings.Finding{idle("p1", 1000, true), idle("p2", 500.5, true)},
			labels: []map[string]string{{"alertname": "GPULensGPUAllocatedIdle", "severity": "warning",
				"namespace": "team-a", "workload": "notebook", "node": "n1", "gpu_uuid": "GPU-1"}},
			annots: []map[string]string{{"summary": "p1 is idle (and 1 more like it)", "recommendation": "release the GPU", "description": "p1 is idle (and 1 more like it). Recommended: release the GPU.", "runbook_url": runbook + "#gpulensgpuallocatedidle",
				"savings": "$1500/month", "monthly_savings_usd": "1500.50", "report": "http://g/api/v1/report"}},
		},
		{
			name: "one workload in two clusters is two alerts, each routable by its cluster",
			in: func() []findings.Finding {
				eu, us := idle("p1", 1000, true), idle("p1", 700, true)
				eu.Cluster, us.Cluster = "eu", "us"
				return []findings.Finding{eu, us}
			}(),
			labels: []map[string]string{
				{"alertname": "GPULensGPUAllocatedIdle", "severity": "warning", "cluster": "eu", "namespace": "team-a", "workload": "notebook", "node": "n1", "gpu_uuid": "GPU-1"},
				{"alertname": "GPULensGPUAllocatedIdle", "severity": "warning", "cluster": "us", "namespace": "team-a", "workload": "notebook", "node": "n1", "gpu_uuid": "GPU-1"},
			},
			annots: []map[string]string{
				{"summary": "p1 is idle", "recommendation": "release the GPU", "description": "p1 is idle. Recommended: release the GPU.", "runbook_url": runbook + "#gpulensgpuallocatedidle",
					"savings": "$1000/month", "monthly_savings_usd": "1000.00", "report": "http://g/api/v1/report"},
				{"summary": "p1 is idle", "recommendation": "release the GPU", "description": "p1 is idle. Recommended: release the GPU.", "runbook_url": runbook + "#gpulensgpuallocatedidle",
					"savings": "$700/month", "monthly_savings_usd": "700.00", "report": "http://g/api/v1/report"},
			},
		},
		{
			name:   "no price, no savings; empty labels left out",
			in:     []findings.Finding{{Kind: vocab.KindUnallocated, Severity: findings.Info, Node: "n2", Summary: "spare"}},
			labels: []map[string]string{{"alertname": "GPULensUnallocatedCapacity", "severity": "info", "node": "n2"}},
			annots: []map[string]string{{"summary": "spare", "description": "spare.", "runbook_url": runbook + "#gpulensunallocatedcapacity", "report": "http://g/api/v1/report"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := alertsOf(tt.in, "http://g/api/v1/report")
			if len(got) != len(tt.labels) {
				t.Fatalf("%d alerts, want %d: %+v", len(got), len(tt.labels), got)
			}
			for i, a := range got {
				if !maps.Equal(a.Labels, tt.labels[i]) {
					t.Errorf("labels %v, want %v", a.Labels, tt.labels[i])
				}
				if !maps.Equal(a.Annotations, tt.annots[i]) {
					t.Errorf("annotations %v, want %v", a.Annotations, tt.annots[i])
				}
			}
		})
	}
}
