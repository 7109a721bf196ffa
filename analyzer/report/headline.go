package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/vocab"
)

// figure is one line of the headline: the money a team lead or a finance
// partner reads first, a month of it. Every format shows the same figures
// from headlineFigures, so a change to what the headline says (issue 54's
// two savings) is made here once.
type figure struct {
	// Key is the figure's name in the JSON's headline object.
	Key   string
	Label string
	// Amount is a month of the figure; nil where it is unknown (a GPU
	// without a price, no previous window), Why then says why.
	Amount *float64
	Why    string
	// Text is Amount for people, "unknown (...)" where it is nil; Note
	// follows it, in a smaller voice in the HTML.
	Text, Note string
	// Signed figures are changes, written with their sign.
	Signed bool
}

// monthly scales a window's figure to a 730-hour month, the period of
// every money figure in the headline: a weekly waste beside a monthly
// saving reads as a contradiction (issue 54).
func (r *Report) monthly(v float64) float64 {
	if r.Window.Hours <= 0 {
		return 0
	}
	return v / r.Window.Hours * vocab.HoursPerMonth
}

// headlineFigures are the headline's rows: the fleet's cost split into
// used, idle and unallocated (the ledger's usage basis, which adds up to
// the cost), the savings, and the change against the previous window.
func (r *Report) headlineFigures() []figure {
	var out []figure
	known := func(f figure, v float64) figure {
		m := math.Round(r.monthly(v)*100) / 100
		f.Amount = &m
		f.Text = r.money(m)
		if f.Signed {
			f.Text = r.moneyDelta(m)
		}
		return f
	}
	unknown := func(f figure, why string) figure {
		f.Why, f.Text = why, "unknown ("+why+")"
		return f
	}
	// The ledger's usage basis adds up to the cost; a report built
	// without one (tests, a store without GPUs) has the cluster's sums.
	c := r.Cluster
	t := ledger.Totals{Cost: ledger.Amount{Cost: c.CapacityCost}, Idle: ledger.Amount{Cost: c.Waste},
		Unallocated: ledger.Amount{Cost: c.UnallocatedCost}, Attributed: ledger.Amount{Cost: c.CapacityCost - c.Waste - c.UnallocatedCost}}
	if r.Ledger != nil {
		t = r.Ledger.Usage
	}
	priced := r.CostKnown && c.CapacityUnpriced == nil && (r.Ledger == nil || len(r.Ledger.Unpriced) == 0)
	fleet := []struct {
		key, label, note string
		v                float64
	}{
		{"fleet_cost", "Fleet cost", fmt.Sprintf("%d GPUs", r.Cluster.GPUs), t.Cost.Cost},
		{"used", "Used", fmt.Sprintf("%s of it, the GPU time the allocations used", share(t.Attributed.Cost, t.Cost.Cost)), t.Attributed.Cost},
		{"idle", "Idle", fmt.Sprintf("%s, held and not used", share(t.Idle.Cost, t.Cost.Cost)), t.Idle.Cost},
		{"unallocated", "Unallocated", fmt.Sprintf("%s, held by nobody", share(t.Unallocated.Cost, t.Cost.Cost)), t.Unallocated.Cost},
	}
	for _, x := range fleet {
		f := figure{Key: x.key, Label: x.label}
		switch {
		case !r.CostKnown:
			f = unknown(f, "no price table")
		case !priced:
			f = unknown(f, "no price for "+modelNames(r.UnpricedModels))
		default:
			f = known(f, x.v)
			f.Note = x.note
		}
		out = append(out, f)
	}
	out = append(out, r.savingsFigures()...)
	out = append(out, r.changeFigure())
	return out
}

// savingsFigures are the report's two savings and never a third (issue
// 54): the plan of the fleet after the advice's, what leaves the bill when
// the freed nodes go, and the capacity it frees on the nodes that stay,
// both a month (Report.Savings, the figures 'gpulens plan' prints).
func (r *Report) savingsFigures() []figure {
	banked := figure{Key: "banked", Label: "Saved when the freed nodes go"}
	freed := figure{Key: "capacity_freed", Label: "Capacity freed for other work"}
	s := r.Savings
	switch {
	case s == nil || s.Unavailable != "":
		why := "no consolidation plan"
		if s != nil {
			why += ": " + s.Unavailable
		}
		banked.Why, banked.Text = why, "unknown ("+why+")"
		freed.Why, freed.Text = why, "unknown ("+why+")"
		return []figure{banked, freed}
	case !r.CostKnown:
		banked.Why, banked.Text = "no price table", "unknown (no price table)"
		freed.Why, freed.Text = "no price table", "unknown (no price table)"
	default:
		if s.Banked == nil {
			banked.Why, banked.Text = "no node price", "unknown (no node price)"
		} else {
			v := *s.Banked
			banked.Amount, banked.Text = &v, r.money(v)
		}
		if s.CapacityFreed == nil {
			freed.Why, freed.Text = "no price for the GPUs freed", "unknown (no price for the GPUs freed)"
		} else {
			v := *s.CapacityFreed
			freed.Amount, freed.Text = &v, r.money(v)
		}
	}
	switch {
	case r.Consolidation != nil && s.NodesFreed <= 0:
		banked.Note = fmt.Sprintf("the plan of the fleet after the advice keeps all %d nodes", r.Consolidation.NodesToday)
	case r.Consolidation != nil:
		banked.Note = fmt.Sprintf("%d of %d nodes can go", s.NodesFreed, r.Consolidation.NodesToday)
	}
	freed.Note = fmt.Sprintf("%d GPUs on the nodes that stay, still on the bill until a node goes", s.CapacityFreedGPUs)
	return []figure{banked, freed}
}

// changeFigure is the allocations' cost against the previous window, a
// month of each: the column a team lead reads first.
func (r *Report) changeFigure() figure {
	f := figure{Key: "change_vs_previous", Label: "Change vs previous window", Signed: true}
	c := r.Cluster
	switch {
	case c.Change == nil:
		f.Why, f.Text = "no data in the previous window", "unknown (no data in the previous window)"
	case !r.CostKnown || !c.Change.CostKnown:
		f.Why, f.Text = "a price is missing in either window", "unknown (a price is missing in either window)"
	default:
		v := math.Round(r.monthly(c.Change.Cost)*100) / 100
		f.Amount, f.Text = &v, r.moneyDelta(v)
		f.Note = "allocations' cost"
		if c.Previous != nil && c.Previous.Cost > 0 {
			// A change under half a percent keeps a decimal: rounded, it
			// read -0% beside a fall of $45.
			pct, digits := 100*c.Change.Cost/c.Previous.Cost, 0
			if math.Abs(pct) < 0.5 {
				digits = 1
			}
			f.Note += fmt.Sprintf(" (%+.*f%%)", digits, pct)
		}
		f.Note += "; idle " + r.moneyDelta(math.Round(r.monthly(c.Change.Waste)))
	}
	return f
}

// share is part as a percentage of whole, "" when whole is 0.
func share(part, whole float64) string {
	if whole <= 0 {
		return "0%"
	}
	return percent(part / whole)
}

// headlineValue is the JSON's top-level headline object: each figure a
// number, or null with its reason under "unknown", as every money figure
// of the JSON is (jsonmoney.go).
func (r *Report) headlineValue() *value {
	h := &value{object: true}
	h.set("period", &value{raw: `"month"`}, "")
	h.set("hours_per_month", &value{raw: fmt.Sprint(vocab.HoursPerMonth)}, "")
	h.set("currency", jsonString(r.Currency), "")
	why := &value{object: true}
	for _, f := range r.headlineFigures() {
		if f.Amount == nil {
			h.set(f.Key, &value{raw: "null"}, "")
			why.set(f.Key, jsonString(f.Why), "")
			continue
		}
		h.set(f.Key, &value{raw: strconv.FormatFloat(*f.Amount, 'f', -1, 64)}, "")
	}
	h.set("unknown", why, "")
	return h
}

func jsonString(s string) *value {
	b, _ := json.Marshal(s)
	return &value{raw: string(b)}
}

// headlineSection is the headline as a table, for the formats that print
// tables (text, Markdown): before every other section.
func (r *Report) headlineSection() section {
	s := section{ID: "headline", Title: "The month's money", Header: []string{"Figure", "A month", "What it is"}, Wrap: []string{"What it is"},
		Intro: fmt.Sprintf("This window's figures at a %d-hour month's rate.", vocab.HoursPerMonth)}
	for _, f := range r.headlineFigures() {
		s.Rows = append(s.Rows, []string{f.Label, f.Text, f.Note})
	}
	return s
}
