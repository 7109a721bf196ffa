package series

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// analyzerOwned are the prefixes of the families this package describes;
// the exporter's rows of docs/METRICS.md are checked by its own test.
var analyzerOwned = []string{"gpulens_finding", "gpulens_team_", "gpulens_serve_", "gpulens_analysis_", "gpulens_fleet_", "gpulens_price_"}

// TestMetricsDoc keeps docs/METRICS.md and Families in step: the same
// names and types both ways, and for the series Build makes, the labels.
func TestMetricsDoc(t *testing.T) {
	f, err := os.Open("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type row struct {
		typ    string
		labels []string
	}
	doc := map[string]row{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 7 {
			continue
		}
		name := strings.TrimSpace(cells[1])
		if !slices.ContainsFunc(analyzerOwned, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		var labels []string
		for l := range strings.SplitSeq(cells[4], ",") {
			// "cluster (several clusters)": a label present only where
			// it applies; the clustered fixture below has it.
			l, _, _ = strings.Cut(l, "(")
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		doc[name] = row{strings.TrimSpace(cells[2]), labels}
	}
	for _, fam := range Families {
		r, ok := doc[fam.Name]
		if !ok {
			t.Errorf("%s is missing from docs/METRICS.md", fam.Name)
			continue
		}
		if r.typ != fam.Type {
			t.Errorf("%s: METRICS.md says %s, the code %s", fam.Name, r.typ, fam.Type)
		}
	}
	for name := range doc {
		if _, ok := families[name]; !ok {
			t.Errorf("docs/METRICS.md lists %s, which is not in Families", name)
		}
	}

	// Every series of a clustered analysis, which carries every label.
	in := fixture()
	for i := range in.Findings {
		in.Findings[i].Cluster = "eu"
	}
	for i := range in.Teams {
		in.Teams[i].Cluster = "eu"
	}
	in.Ledger = ledgerFixture("eu")
	var b strings.Builder
	Build(in).WritePrometheus(&b)
	seen := map[string]bool{}
	for l := range strings.Lines(b.String()) {
		fam, rest, _ := strings.Cut(l[:strings.LastIndexByte(l, ' ')], "{")
		if seen[fam] {
			continue
		}
		var labels []string
		for kv := range strings.SplitSeq(strings.TrimSuffix(rest, "}"), `",`) {
			if k, _, ok := strings.Cut(kv, "="); ok {
				labels = append(labels, k)
			}
		}
		slices.Sort(labels)
		if fam == "gpulens_finding" && len(labels) < 7 {
			continue // the fixture's full-identity series is checked; others omit empty labels
		}
		seen[fam] = true
		if !slices.Equal(labels, doc[fam].labels) {
			t.Errorf("%s: METRICS.md says labels %v, Build writes %v", fam, doc[fam].labels, labels)
		}
	}
}
