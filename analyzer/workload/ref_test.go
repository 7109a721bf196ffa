package workload

import (
	"encoding/json"
	"testing"
)

func TestRef(t *testing.T) {
	for _, tt := range []struct {
		ref        Ref
		str, jsonS string
	}{
		{Ref{Kind: "Deployment", Namespace: "shop", Name: "web", Container: "main"}, "Deployment/shop/web", `{"kind":"Deployment","namespace":"shop","name":"web","container":"main"}`},
		{Ref{Cluster: "eu-1", Kind: "Job", Namespace: "team-a", Name: "trainer"}, "Job/team-a/trainer", `{"cluster":"eu-1","kind":"Job","namespace":"team-a","name":"trainer"}`},
		{Ref{Kind: "Pod", Namespace: "lab", Name: "nb-0"}, "Pod/lab/nb-0", `{"kind":"Pod","namespace":"lab","name":"nb-0"}`},
	} {
		if got := tt.ref.String(); got != tt.str {
			t.Errorf("String() = %q, want %q", got, tt.str)
		}
		b, err := json.Marshal(tt.ref)
		if err != nil || string(b) != tt.jsonS {
			t.Errorf("JSON %s (%v), want %s", b, err, tt.jsonS)
		}
	}
}
