package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResolveOwner(t *testing.T) {
	r := &reader{
		replicaSets: map[objectKey]ownerRef{
			{"ml", "web-7d9f8c6b5"}:     {"Deployment", "web"},
			{"ml", "canary-5c7588df89"}: {"Rollout", "canary"}, // Argo Rollouts
			{"ml", "bare"}:              {},
		},
		jobs: map[objectKey]ownerRef{
			{"ml", "eval-29431200"}: {"CronJob", "eval"},
			{"ml", "once"}:          {},
		},
	}
	hash := map[string]string{"pod-template-hash": "6b8f9c7d54"}
	tests := []struct {
		name         string
		labels       map[string]string
		ref          ownerRef
		want         ownerRef
		wantInferred bool
	}{
		{"Deployment", nil, ownerRef{"ReplicaSet", "web-7d9f8c6b5"}, ownerRef{"Deployment", "web"}, false},
		{"operator owning a ReplicaSet", nil, ownerRef{"ReplicaSet", "canary-5c7588df89"}, ownerRef{"Rollout", "canary"}, false},
		{"bare ReplicaSet", nil, ownerRef{"ReplicaSet", "bare"}, ownerRef{"ReplicaSet", "bare"}, false},
		{"unknown ReplicaSet, hash label", hash, ownerRef{"ReplicaSet", "triton-6b8f9c7d54"}, ownerRef{"Deployment", "triton"}, true},
		{"unknown ReplicaSet, hash not in name", hash, ownerRef{"ReplicaSet", "triton"}, ownerRef{"ReplicaSet", "triton"}, false},
		{"CronJob", nil, ownerRef{"Job", "eval-29431200"}, ownerRef{"CronJob", "eval"}, false},
		{"bare Job", nil, ownerRef{"Job", "once"}, ownerRef{"Job", "once"}, false},
		{"unknown Job named by a CronJob", nil, ownerRef{"Job", "backup-29431260"}, ownerRef{"CronJob", "backup"}, true},
		{"unknown Job", nil, ownerRef{"Job", "migrate"}, ownerRef{"Job", "migrate"}, false},
		{"StatefulSet is not climbed", nil, ownerRef{"StatefulSet", "db"}, ownerRef{"StatefulSet", "db"}, false},
		{"Kubeflow Notebook", nil, ownerRef{"Notebook", "alice"}, ownerRef{"Notebook", "alice"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, inferred := r.resolveOwner("ml", tt.labels, tt.ref)
			if got != tt.want || inferred != tt.wantInferred {
				t.Errorf("resolveOwner = %+v inferred=%v, want %+v inferred=%v", got, inferred, tt.want, tt.wantInferred)
			}
		})
	}
}

func TestControllerOf(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want ownerRef
	}{
		{"none", nil, ownerRef{}},
		{"controller wins", []metav1.OwnerReference{{Kind: "ConfigMap", Name: "a"}, {Kind: "ReplicaSet", Name: "b", Controller: &yes}}, ownerRef{"ReplicaSet", "b"}},
		{"first owner without controller", []metav1.OwnerReference{{Kind: "Workflow", Name: "w"}}, ownerRef{"Workflow", "w"}},
	}
	for _, tt := range tests {
		if got := controllerOf(&metav1.ObjectMeta{OwnerReferences: tt.refs}); got != tt.want {
			t.Errorf("%s: controllerOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
