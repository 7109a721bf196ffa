package quota

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestWriteHostileNames guards issue 52 for the quota outputs (which
// need cluster access, so cmd/gpulens's store test cannot run them): a
// queue, a flavor, a namespace or a cluster named with a tab, a line
// break, ESC and BEL leaves the table with its rows and columns and no
// control character, and the suggested kubectl command quotes each name
// as a POSIX shell reads it. At main 36bc8ff a tab in a name added a
// column, the notes wrote names raw, and the command held
// "-n team-a; rm -rf ~" unquoted.
func TestWriteHostileNames(t *testing.T) {
	honest := Advise(scenario(), inv(), 0)
	bad := Advise(scenario(), inv(), 0)
	evil := func(s string) string { return s + "; rm -rf ~\t\x1b]52;c;eA==\x07\n" }
	for i := range bad {
		a := &bad[i]
		a.Cluster, a.Name, a.Flavor = evil("eu"), evil(a.Name), evil(a.Flavor)
		if a.Namespace != "" {
			a.Namespace = evil(a.Namespace)
		}
		for j := range a.Namespaces {
			a.Namespaces[j] = evil(a.Namespaces[j])
		}
		honest[i].Cluster = "eu"
	}
	write := func(a []Advice, format string) string {
		var buf bytes.Buffer
		if err := Write(&buf, a, nil, format); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	// -o wide: a record a line, every column (the default table wraps
	// its notes at 120 columns, and a longer name makes more lines).
	want, got := write(honest, "wide"), write(bad, "wide")
	for _, l := range strings.Split(write(bad, "table"), "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("a default table line of %d columns: %q", n, l)
		}
	}
	if w, g := strings.Count(want, "\n"), strings.Count(got, "\n"); w != g {
		t.Errorf("%d lines, want %d:\n%s", g, w, got)
	}
	for _, r := range got {
		if r < 0x20 && r != '\n' || r == 0x7f {
			t.Fatalf("raw %U in the table:\n%q", r, got)
		}
	}
	// The header and each row have as many columns as the honest table's:
	// count the runs of two spaces or more tabwriter pads with (the
	// values hold single spaces only).
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	pad := regexp.MustCompile(`  +`)
	for i := range len(honest) + 1 {
		if w, g := len(pad.Split(strings.TrimSpace(wl[i]), -1)), len(pad.Split(strings.TrimSpace(gl[i]), -1)); w != g {
			t.Errorf("line %d has %d columns, want %d: %q", i, g, w, gl[i])
		}
	}
	patches := write(bad, "yaml")
	// The ResourceQuota team-a/gpu, its namespace quoted: the single
	// quotes keep ; ~ and the tab, and the comment escapes the controls
	// (a tab, which ends no comment, stays).
	if w := "# kubectl -n 'team-a; rm -rf ~\t" + `\x1b]52;c;eA==\a\n' patch resourcequota 'gpu; rm -rf ~` + "\t" + `\x1b]52;c;eA==\a\n' --type merge`; !strings.Contains(patches, w) {
		t.Errorf("patches lack %q:\n%s", w, patches)
	}
}
