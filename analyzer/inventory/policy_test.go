package inventory

import "testing"

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
		{"matchExpressions", PDB{MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: SelectorOpIn, Values: []string{"gpu", "cpu"}},
		}}, true},
		{"both must hold", PDB{Selector: map[string]string{"app": "triton"}, MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: SelectorOpDoesNotExist},
		}}, false},
		{"invalid selector matches nothing", PDB{MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: SelectorOpIn},
		}}, false},
		{"NotIn holds without the label", PDB{MatchExpressions: []LabelSelectorRequirement{
			{Key: "zone", Operator: SelectorOpNotIn, Values: []string{"a"}},
		}}, true},
		{"NotIn fails on a listed value", PDB{MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: SelectorOpNotIn, Values: []string{"gpu"}},
		}}, false},
		{"Exists", PDB{MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: SelectorOpExists}}}, true},
		{"Exists with values is invalid", PDB{MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: SelectorOpExists, Values: []string{"gpu"}},
		}}, false},
		{"an unknown operator is invalid", PDB{MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: "Gt", Values: []string{"1"}}}}, false},
		{"invalid as the API parsed it", PDB{Selector: map[string]string{"app": "triton"}, InvalidSelector: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.pdb.Matches(pod); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
