package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/rollup"
)

// The helpers below are the one place numbers become text for people
// (table, Markdown, HTML), so the three show the same figures.

const timeLayout = "2006-01-02 15:04 MST"

func (w Window) String() string {
	return fmt.Sprintf("%s to %s (%s)", w.Start.Format(timeLayout), w.End.Format(timeLayout), hoursText(w.Hours))
}

func hoursText(h float64) string {
	d := time.Duration(h * float64(time.Hour))
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return fmt.Sprintf("%gh", math.Round(h*10)/10)
}

func gpuHours(v float64) string { return thousands(v, 1) }

func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func efficiency(e *float64) string {
	if e == nil {
		return "n/a"
	}
	return percent(*e)
}

func (r *Report) money(v float64) string { return r.moneyDigits(v, 0) }

func (r *Report) moneyDigits(v float64, digits int) string {
	if !r.CostKnown {
		return "n/a"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	sym := "$"
	if r.Currency != "USD" {
		sym = r.Currency + " "
	}
	return sign + sym + thousands(v, digits)
}

// delta is a change with its unit and relative size: "+12.5 GPU-h (+8%)".
func delta(d, prev float64, digits int, unit string) string {
	s := signed(thousands(d, digits), d) + unit
	if prev > 0 {
		s += fmt.Sprintf(" (%+.0f%%)", 100*d/prev)
	}
	return s
}

func (r *Report) moneyDelta(d float64) string {
	if !r.CostKnown {
		return "n/a"
	}
	return signed(r.money(math.Abs(d)), d)
}

func signed(s string, v float64) string {
	switch {
	case v > 0:
		return "+" + s
	case v < 0:
		return "-" + strings.TrimPrefix(s, "-")
	}
	return s
}

func points(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f pts", *p)
}

// thousands formats v rounded to digits with comma separators.
func thousands(v float64, digits int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', digits, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

func (r *Report) price(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return r.moneyDigits(*p, 2)
}

// moneyOf is a figure some of whose GPU time may have no price: the
// figure where u is nil; "unknown (no price for M; add it to the price
// file)" where nothing of it was priced; "$1,234 + unknown for 3 GPUs of
// M" where part was. An unknown never reads as $0.
func (r *Report) moneyOf(v float64, u *rollup.Unpriced) string {
	if !r.CostKnown || u == nil {
		return r.money(v)
	}
	if !u.Partial {
		return unknownMoney(u.Models)
	}
	return r.money(v) + " + unknown for " + unpricedWhat(u)
}

// unknownMoney is a wholly unknown figure, naming the models to price.
func unknownMoney(models []string) string {
	if len(models) == 0 {
		return "unknown (no price; add the model to the price file)"
	}
	return "unknown (no price for " + modelNames(models) + "; add it to the price file)"
}

// modelNames lists models, a GPU without a model label (an exporter
// before modelName, gpu-monitoring-tools#138) said as such.
func modelNames(models []string) string {
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = cmp.Or(m, "a GPU without a model label")
	}
	return strings.Join(out, ", ")
}

// unpricedWhat says what an Unpriced counts: "3 GPUs of GRID A100-10C",
// "24.0 GPU-h of GRID A100-10C", "2 findings on GRID A100-10C".
func unpricedWhat(u *rollup.Unpriced) string {
	models := modelNames(u.Models)
	switch {
	case u.GPUs > 0:
		return fmt.Sprintf("%d %s of %s", u.GPUs, plural(u.GPUs, "GPU", "GPUs"), models)
	case u.Findings > 0:
		return fmt.Sprintf("%d %s on %s", u.Findings, plural(u.Findings, "finding", "findings"), models)
	}
	return gpuHours(u.GPUHours) + " GPU-h of " + models
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
