package inventory

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/workload"
)

func TestInferWorkload(t *testing.T) {
	tests := []struct {
		pod  string
		want workload.Ref
	}{
		{"web-7d9f8c6b5-x2k4q", workload.Ref{Kind: "Deployment", Namespace: "ns", Name: "web"}},
		{"triton-6b8f9c7d54-q9w7z", workload.Ref{Kind: "Deployment", Namespace: "ns", Name: "triton"}},
		{"llm-serving-api-5c7588df89-kw8vt", workload.Ref{Kind: "Deployment", Namespace: "ns", Name: "llm-serving-api"}},
		{"nightly-eval-29431200-7hq2m", workload.Ref{Kind: "CronJob", Namespace: "ns", Name: "nightly-eval"}},
		{"train-resnet-3-zl9xw", workload.Ref{Kind: "Job", Namespace: "ns", Name: "train-resnet"}}, // indexed Job, completion 3
		{"migrate-db-x7k2p", workload.Ref{Kind: "Job", Namespace: "ns", Name: "migrate-db"}},
		{"llm-finetune-0", workload.Ref{Kind: "StatefulSet", Namespace: "ns", Name: "llm-finetune"}},
		{"redis-12", workload.Ref{Kind: "StatefulSet", Namespace: "ns", Name: "redis"}},
		{"jupyter-alice", workload.Ref{Kind: "Pod", Namespace: "ns", Name: "jupyter-alice"}},           // "alice" has vowels: not random
		{"notebook", workload.Ref{Kind: "Pod", Namespace: "ns", Name: "notebook"}},                     // no dash
		{"gpu-burn-", workload.Ref{Kind: "Pod", Namespace: "ns", Name: "gpu-burn-"}},                   // trailing dash
		{"sleep-abcde", workload.Ref{Kind: "Pod", Namespace: "ns", Name: "sleep-abcde"}},               // vowels: not a generated suffix
		{"bert-large-x2k4q", workload.Ref{Kind: "Job", Namespace: "ns", Name: "bert-large"}},           // "large" is no hash
		{"vllm-bdfc-x2k4q", workload.Ref{Kind: "Job", Namespace: "ns", Name: "vllm-bdfc"}},             // 4 characters: too short for a hash
		{"vllm-7d9f8c6b5a-x2k4q", workload.Ref{Kind: "Job", Namespace: "ns", Name: "vllm-7d9f8c6b5a"}}, // 'a' never occurs in a hash
	}
	for _, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			if got := InferWorkload("ns", tt.pod); got != tt.want {
				t.Errorf("InferWorkload(%q) = %+v, want %+v", tt.pod, got, tt.want)
			}
		})
	}
}

func TestWorkloadPrefersOwnerReferences(t *testing.T) {
	inv := &Inventory{Pods: map[PodKey]Pod{
		// A StatefulSet whose name looks like a Deployment's pod: the
		// owner reference wins over the name.
		{"ml", "web-7d9f8c6b5-x2k4q"}: {WorkloadKind: "StatefulSet", WorkloadName: "web-7d9f8c6b5"},
		{"ml", "eval-8kq2m"}:          {WorkloadKind: "CronJob", WorkloadName: "eval", WorkloadInferred: true},
	}}
	tests := []struct {
		ns, pod  string
		want     workload.Ref
		inferred bool
	}{
		{"ml", "web-7d9f8c6b5-x2k4q", workload.Ref{Kind: "StatefulSet", Namespace: "ml", Name: "web-7d9f8c6b5"}, false},
		{"ml", "eval-8kq2m", workload.Ref{Kind: "CronJob", Namespace: "ml", Name: "eval"}, true},
		{"other", "web-7d9f8c6b5-x2k4q", workload.Ref{Kind: "Deployment", Namespace: "other", Name: "web"}, true}, // unknown pod
	}
	for _, tt := range tests {
		if got, inferred := inv.WorkloadOf(tt.ns, tt.pod); got != tt.want || inferred != tt.inferred {
			t.Errorf("WorkloadOf(%s, %s) = %+v inferred %v, want %+v inferred %v", tt.ns, tt.pod, got, inferred, tt.want, tt.inferred)
		}
		if got := inv.Workload(tt.ns, tt.pod); got != tt.want {
			t.Errorf("Workload(%s, %s) = %s, want %s", tt.ns, tt.pod, got, tt.want)
		}
	}
	var none *Inventory
	if w := none.Workload("ml", "llm-finetune-1"); w != (workload.Ref{Kind: "StatefulSet", Namespace: "ml", Name: "llm-finetune"}) {
		t.Errorf("nil inventory: Workload = %s", w)
	}
}
