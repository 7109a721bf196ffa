package rollup

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/price"
)

// Pricer looks prices up and remembers the models without one, so that a
// report can say whose dollars are missing.
type Pricer struct {
	p       *price.Prices
	missing map[string]bool
}

// NewPricer prices from p, which may be nil: no price table.
func NewPricer(p *price.Prices) *Pricer { return &Pricer{p: p, missing: map[string]bool{}} }

// Known says there is a price table.
func (p *Pricer) Known() bool { return p.p != nil }

// Prices is the table; nil without one.
func (p *Pricer) Prices() *price.Prices { return p.p }

// PerHour is model's price an hour, and false where it has none.
func (p *Pricer) PerHour(model string) (float64, bool) {
	if p.p == nil {
		return 0, false
	}
	v, err := p.p.PerHour(model)
	if err != nil {
		p.missing[model] = true
		return 0, false
	}
	return v, true
}

// Missing are the models asked for that had no price, sorted.
func (p *Pricer) Missing() []string {
	out := make([]string, 0, len(p.missing))
	for m := range p.missing {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
