package inventory

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPDBMatches(t *testing.T) {
	pod := map[string]string{"app": "triton", "tier": "gpu"}
	tests := []struct {
		name string
		pdb  PDB
		want bool
	}{
		{"no selector selects nothing", PDB{NoSelector: true}, false},
		{"empty selector selects all", PDB{}, true},
		{"matchLabels", PDB{Selector: map[string]string{"app": "triton"}}, true},
		{"matchLabels mismatch", PDB{Selector: map[string]string{"app": "vllm"}}, false},
		{"matchExpressions", PDB{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gpu", "cpu"}},
		}}, true},
		{"both must hold", PDB{Selector: map[string]string{"app": "triton"}, MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist},
		}}, false},
		{"invalid selector matches nothing", PDB{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn},
		}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.pdb.Matches(pod); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
