package series

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/ledger"
)

// ledgerFixture is a week of two priced GPUs in cluster: an A100 a tenant
// held half of and used a quarter of, and an unallocated L4.
func ledgerFixture(cluster string) *ledger.Ledger {
	a100 := ledger.GPU{Cluster: cluster, Node: "n1", UUID: "GPU-1", Model: "NVIDIA A100-SXM4-80GB", Hours: 168,
		PricePerHour: 3.43, PriceKnown: true, Cost: 576.24,
		Tenants: []ledger.Tenant{{Namespace: "ml", Pod: "p", Container: "c", Charge: ledger.Charge{
			Allocation: ledger.Amount{GPUHours: 84, Cost: 288.12}, Usage: ledger.Amount{GPUHours: 42, Cost: 144.06}}}},
		Allocation: ledger.Remainder{Unallocated: ledger.Amount{GPUHours: 84, Cost: 288.12}},
		Usage:      ledger.Remainder{Idle: ledger.Amount{GPUHours: 42, Cost: 144.06}, Unallocated: ledger.Amount{GPUHours: 84, Cost: 288.12}}}
	l4 := ledger.GPU{Cluster: cluster, Node: "n2", UUID: "GPU-2", Model: "NVIDIA L4", Hours: 168,
		PricePerHour: 0.8, PriceKnown: true, Cost: 134.4,
		Allocation: ledger.Remainder{Unallocated: ledger.Amount{GPUHours: 168, Cost: 134.4}},
		Usage:      ledger.Remainder{Unallocated: ledger.Amount{GPUHours: 168, Cost: 134.4}}}
	return &ledger.Ledger{GPUs: []ledger.GPU{a100, l4}}
}

func TestMoney(t *testing.T) {
	unpriced := ledgerFixture("")
	unpriced.GPUs = append(unpriced.GPUs, ledger.GPU{Node: "n3", UUID: "GPU-3", Model: "Mystery GPU", Hours: 168})
	tests := []struct {
		name      string
		in        Input
		want, not []string
	}{
		{name: "priced fleet", in: Input{CostKnown: true, WindowHours: 168, Ledger: ledgerFixture("")}, want: []string{
			`gpulens_price_gpu_hour_usd{model="NVIDIA A100-SXM4-80GB"} 3.43`,
			`gpulens_price_gpu_hour_usd{model="NVIDIA L4"} 0.8`,
			// 144.06 / 168 h × 730 h, and so on: the three add up to
			// the fleet's 710.64 a week.
			`gpulens_fleet_monthly_cost_usd{state="used"} 625.975`,
			`gpulens_fleet_monthly_cost_usd{state="idle"} 625.975`,
			`gpulens_fleet_monthly_cost_usd{state="unallocated"} 1835.95`,
		}},
		{name: "one cluster of several", in: Input{CostKnown: true, WindowHours: 168, Ledger: ledgerFixture("eu")}, want: []string{
			`gpulens_fleet_monthly_cost_usd{cluster="eu",state="idle"} 625.975`,
		}},
		// A GPU without a price: its model has no price series and the
		// fleet no cost, which would be a part of it.
		{name: "a GPU without a price", in: Input{CostKnown: true, WindowHours: 168, Ledger: unpriced}, want: []string{
			`gpulens_price_gpu_hour_usd{model="NVIDIA L4"} 0.8`,
		}, not: []string{"gpulens_fleet_monthly_cost_usd", "Mystery"}},
		{name: "no price table", in: Input{WindowHours: 168, Ledger: ledgerFixture("")}, not: []string{"gpulens_price_", "gpulens_fleet_"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			Build(tc.in).WritePrometheus(&b)
			lines := strings.Split(b.String(), "\n")
			for _, w := range tc.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return sameSample(l, w) }) {
					t.Errorf("missing %s in\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("%q written:\n%s", n, b.String())
				}
			}
		})
	}
}

// sameSample: the same series with the value to a millionth (the monthly
// figures are divisions).
func sameSample(got, want string) bool {
	cut := func(l string) (string, string, bool) {
		i := strings.LastIndexByte(l, ' ')
		return l[:max(i, 0)], l[i+1:], i > 0
	}
	gs, gv, ok1 := cut(got)
	ws, wv, ok2 := cut(want)
	g, err1 := strconv.ParseFloat(gv, 64)
	w, err2 := strconv.ParseFloat(wv, 64)
	return ok1 && ok2 && gs == ws && err1 == nil && err2 == nil && math.Abs(g-w) < 1e-6
}
