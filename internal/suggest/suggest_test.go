package suggest

import "testing"

func TestNearest(t *testing.T) {
	keys := []string{"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "L4", "T4"}
	for _, c := range []struct {
		word, want string
		close      bool
	}{
		{"H100-80G", "H100-80GB", true},    // a dropped letter
		{"h10080gb", "H100-80GB", true},    // case and a dropped dash
		{"H200-141BG", "H200-141GB", true}, // swapped letters: one edit
		{"L5", "L4", true},
		{"RTX-PRO-6000", "", false}, // nothing near: a new name, not a typo
	} {
		got, close := Nearest(c.word, keys)
		if close != c.close || (c.close && got != c.want) {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.word, got, close, c.want, c.close)
		}
	}
	// Two swapped neighbours are one edit, so a short word's swap is
	// still a likely typo (Levenshtein counts two).
	if got, ok := Nearest("tema", []string{"kind", "team", "node"}); !ok || got != "team" {
		t.Errorf(`Nearest("tema") = %q, %v; want "team", true`, got, ok)
	}
	if _, ok := Nearest("x", nil); ok {
		t.Error("no candidates: nothing is near")
	}
}
