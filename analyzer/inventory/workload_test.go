package inventory

import "testing"

func TestInferWorkload(t *testing.T) {
	tests := []struct {
		pod  string
		want WorkloadRef
	}{
		{"web-7d9f8c6b5-x2k4q", WorkloadRef{"Deployment", "web", true}},
		{"triton-6b8f9c7d54-q9w7z", WorkloadRef{"Deployment", "triton", true}},
		{"llm-serving-api-5c7588df89-kw8vt", WorkloadRef{"Deployment", "llm-serving-api", true}},
		{"nightly-eval-29431200-7hq2m", WorkloadRef{"CronJob", "nightly-eval", true}},
		{"train-resnet-3-zl9xw", WorkloadRef{"Job", "train-resnet", true}}, // indexed Job, completion 3
		{"migrate-db-x7k2p", WorkloadRef{"Job", "migrate-db", true}},
		{"llm-finetune-0", WorkloadRef{"StatefulSet", "llm-finetune", true}},
		{"redis-12", WorkloadRef{"StatefulSet", "redis", true}},
		{"jupyter-alice", WorkloadRef{"Pod", "jupyter-alice", true}},           // "alice" has vowels: not random
		{"notebook", WorkloadRef{"Pod", "notebook", true}},                     // no dash
		{"gpu-burn-", WorkloadRef{"Pod", "gpu-burn-", true}},                   // trailing dash
		{"sleep-abcde", WorkloadRef{"Pod", "sleep-abcde", true}},               // vowels: not a generated suffix
		{"bert-large-x2k4q", WorkloadRef{"Job", "bert-large", true}},           // "large" is no hash
		{"vllm-bdfc-x2k4q", WorkloadRef{"Job", "vllm-bdfc", true}},             // 4 characters: too short for a hash
		{"vllm-7d9f8c6b5a-x2k4q", WorkloadRef{"Job", "vllm-7d9f8c6b5a", true}}, // 'a' never occurs in a hash
	}
	for _, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			if got := InferWorkload(tt.pod); got != tt.want {
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
		ns, pod string
		want    WorkloadRef
	}{
		{"ml", "web-7d9f8c6b5-x2k4q", WorkloadRef{"StatefulSet", "web-7d9f8c6b5", false}},
		{"ml", "eval-8kq2m", WorkloadRef{"CronJob", "eval", true}},
		{"other", "web-7d9f8c6b5-x2k4q", WorkloadRef{"Deployment", "web", true}}, // unknown pod
	}
	for _, tt := range tests {
		if got := inv.WorkloadOf(tt.ns, tt.pod); got != tt.want {
			t.Errorf("WorkloadOf(%s, %s) = %+v, want %+v", tt.ns, tt.pod, got, tt.want)
		}
		if k, n := inv.Workload(tt.ns, tt.pod); k != tt.want.Kind || n != tt.want.Name {
			t.Errorf("Workload(%s, %s) = %s/%s, want %s/%s", tt.ns, tt.pod, k, n, tt.want.Kind, tt.want.Name)
		}
	}
	var none *Inventory
	if k, n := none.Workload("ml", "llm-finetune-1"); k != "StatefulSet" || n != "llm-finetune" {
		t.Errorf("nil inventory: Workload = %s/%s", k, n)
	}
}
