package signals_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulens/gpulens/signals"
)

// TestUnpricedKnownOnly: with serve's price for the H100 alone, the
// allocation on the other model is Unpriced while the flat price is NaN,
// and KnownOnly drops the team that holds it: team-a's H100 is its
// $2 an hour, team-b (an H100 and the unpriced model) has no figure. A
// flat price, from the variable or the recording rule, prices every
// model: nothing is unpriced, and team-b costs $2 + $3.
func TestUnpricedKnownOnly(t *testing.T) {
	const (
		price = "gpulens_price_gpu_hour_usd"
		rule  = "cluster:gpulens_gpu_hourly_price_usd:config"
		alloc = "gpulens_container_gpu_allocation_ratio"
	)
	series := alloc + `{namespace="team-a",pod="a1",uuid="GPU-a",model="H100"} 1
` + alloc + `{namespace="team-b",pod="b1",uuid="GPU-b",model="X"} 1
` + alloc + `{namespace="team-b",pod="b2",uuid="GPU-c",model="H100"} 1
` + price + `{model="H100"} 2
`
	byTeam, keys := []string{"namespace"}, []string{"namespace", "pod", "uuid", "model"}
	allocs := signals.MaxBy(keys, alloc) // as a schema's Allocation, without the name
	for _, c := range []struct {
		name, rule, variable string
		unpriced, cost       []row
	}{
		{"NaN", "", "NaN",
			[]row{{"namespace=team-b,pod=b1,uuid=GPU-b,model=X", 1}},
			[]row{{"namespace=team-a", 2}}},
		{"variable", "", "3", nil, []row{{"namespace=team-a", 2}, {"namespace=team-b", 5}}},
		{"rule", rule + " 3\n", "NaN", nil, []row{{"namespace=team-a", 2}, {"namespace=team-b", 5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "m.prom")
			if err := os.WriteFile(f, []byte(series+c.rule), 0o644); err != nil {
				t.Fatal(err)
			}
			src := loadFixtures(t, f)
			flat := signals.FlatPrice(rule, c.variable)
			unpriced := signals.Unpriced(allocs, price, flat)
			if got := query(t, src, unpriced, keys); !rowsNear(got, c.unpriced) {
				t.Errorf("unpriced %v, want %v", got, c.unpriced)
			}
			cost := signals.KnownOnly(signals.SumBy(byTeam, signals.Priced(allocs, price, flat)), byTeam, unpriced)
			if got := query(t, src, cost, byTeam); !rowsNear(got, c.cost) {
				t.Errorf("cost by team %v, want %v", got, c.cost)
			}
		})
	}
}
