package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/rollup"
)

// chart is an SVG chart laid out in Go, so the template only places
// elements. Every element that stands for a number has class "mark" and
// carries its value in data-value, which tests (and people inspecting the
// page) can read without parsing geometry.
type chart struct {
	ID, Kind, Title string
	W, H            int
	Rects           []rect
	Lines           []polyline
	Dots            []dot
	Texts           []text
	Grid            []gridLine
}

type rect struct {
	X, Y, W, H   float64
	Class, Title string
	Value        string
}

type polyline struct {
	Points string
	Values string
}

type dot struct {
	X, Y  float64
	Value string
}

type text struct {
	X, Y          float64
	Anchor, Class string
	Text          string
	// Room is the width the text may take without being cut (bar
	// charts' labels and values), 0 where not measured.
	Room float64
}

type gridLine struct{ X1, Y1, X2, Y2 float64 }

const (
	chartW     = 720
	rowH       = 34
	timelineH  = 170
	plotTop    = 12
	plotBottom = 24 // room for the time axis
	plotLeft   = 44
	plotRight  = 12
	barHeight  = 12
)

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// r2 rounds a coordinate: hundredths of a pixel are below what any screen
// or printer shows, and keep the page small and diffable.
func r2(v float64) float64 { return math.Round(v*100) / 100 }

// timelineCharts draws each team's utilization over the window. Buckets
// without data break the line rather than drawing it down to zero.
func (r *Report) timelineCharts() []chart {
	var out []chart
	for i, ts := range r.Timeline {
		c := chart{ID: fmt.Sprintf("chart-util-%d-%s", i+1, slug(ts.Team)), Kind: "timeline", Title: "Utilization of " + ts.Team + "'s allocations", W: chartW, H: timelineH}
		plotW := float64(chartW - plotLeft - plotRight)
		plotH := float64(timelineH - plotTop - plotBottom)
		for _, v := range []float64{0, 0.5, 1} {
			y := plotTop + plotH*(1-v)
			c.Grid = append(c.Grid, gridLine{plotLeft, y, chartW - plotRight, y})
			c.Texts = append(c.Texts, text{X: plotLeft - 6, Y: r2(y + 4), Anchor: "end", Class: "axis", Text: percent(v)})
		}
		n := len(ts.Points)
		x := func(j int) float64 {
			if n == 1 {
				return plotLeft + plotW/2
			}
			return plotLeft + plotW*float64(j)/float64(n-1)
		}
		var seg []dot
		flush := func() {
			switch len(seg) {
			case 0:
			case 1: // a lone bucket between gaps: a line needs two points
				c.Dots = append(c.Dots, seg[0])
			default:
				pts, vals := make([]string, len(seg)), make([]string, len(seg))
				for k, d := range seg {
					pts[k], vals[k] = f2(d.X)+","+f2(d.Y), d.Value
				}
				c.Lines = append(c.Lines, polyline{Points: strings.Join(pts, " "), Values: strings.Join(vals, " ")})
			}
			seg = nil
		}
		for j, p := range ts.Points {
			if !p.OK {
				flush()
				continue
			}
			seg = append(seg, dot{X: r2(x(j)), Y: r2(plotTop + plotH*(1-p.Utilization)), Value: strconv.FormatFloat(p.Utilization, 'f', 4, 64)})
		}
		flush()
		if n > 0 {
			y := float64(timelineH - 6)
			c.Texts = append(c.Texts,
				text{X: plotLeft, Y: y, Anchor: "start", Class: "axis", Text: ts.Points[0].End.Format("Jan 2 15:04")},
				text{X: chartW - plotRight, Y: y, Anchor: "end", Class: "axis", Text: ts.Points[n-1].End.Format("Jan 2 15:04 MST")})
		}
		out = append(out, c)
	}
	return out
}

// barRow is one labelled row of a bar chart, with one bar per series.
type barRow struct {
	Label  string
	Values []float64
	Texts  []string
}

// textWidth estimates how wide s is drawn at the charts' 11px font, in
// the SVG's units: 6.6 per character is a sans-serif's widest digits and
// lower case (Helvetica's digits are 6.1 at 11px, DejaVu Sans's 7.0; its
// lower case averages 6.3), so a label laid out by it is not cut. The
// Chromium test (TestHTMLInChromium) measures the drawn text against the
// room it was given (data-room).
func textWidth(s string) float64 { return 6.6 * float64(len([]rune(s))) }

const (
	labelMax = 240 // the widest a label column gets; a longer label is cut with an ellipsis
	valueMax = 300 // the widest room for values; a longer one ("unknown (no price for …)") is cut, its bar's title has it whole
	valueGap = 6   // between a bar's end and its value
)

// fitText cuts s to room, an ellipsis last, so it is drawn within it.
func fitText(s string, room float64) string {
	if textWidth(s) <= room {
		return s
	}
	rs := []rune(s)
	n := max(int(room/6.6)-1, 1)
	return string(rs[:min(n, len(rs))]) + "…"
}

// barChart draws rows of bars scaled to the largest value, series in
// classes[i] stacked in one row. The label column and the room right of
// the longest bar are as wide as their longest text, so no label is cut
// at the chart's edge ("1,553.8 allocat…" at 36bc8ff).
func barChart(id, kind, title string, rows []barRow, classes []string) chart {
	c := chart{ID: id, Kind: kind, Title: title, W: chartW, H: rowH*len(rows) + 8}
	maxV, labelW, valueW := 0.0, 60.0, 0.0
	for _, row := range rows {
		for _, v := range row.Values {
			maxV = max(maxV, v)
		}
		labelW = max(labelW, min(textWidth(row.Label)+16, labelMax))
		for _, t := range row.Texts {
			valueW = max(valueW, textWidth(t)+valueGap+4)
		}
	}
	labelW, valueW = math.Ceil(labelW), min(valueW, valueMax)
	plotW := float64(chartW) - labelW - valueW
	for i, row := range rows {
		top := float64(4 + i*rowH)
		room := labelW - 8
		c.Texts = append(c.Texts, text{X: labelW - 8, Y: top + rowH/2 + 4, Anchor: "end", Class: "label", Text: fitText(row.Label, room), Room: r2(room)})
		for k, v := range row.Values {
			w := 0.0
			if maxV > 0 {
				w = plotW * v / maxV
			}
			y := top + float64(k*barHeight) + float64(rowH-len(row.Values)*barHeight)/2
			c.Rects = append(c.Rects, rect{X: labelW, Y: r2(y), W: r2(w), H: barHeight - 2, Class: classes[k], Title: row.Label + ": " + row.Texts[k],
				Value: strconv.FormatFloat(v, 'f', 4, 64)})
			x := r2(labelW + w + valueGap)
			c.Texts = append(c.Texts, text{X: x, Y: r2(y + barHeight - 3), Anchor: "start", Class: "value", Text: fitText(row.Texts[k], chartW-x), Room: r2(chartW - x)})
		}
	}
	return c
}

// costChart is each team's cost in the window, in money, with the idle
// part of it said beside: the chart a finance partner looks for. Nil
// without prices (the GPU-hours chart says it in hours).
func (r *Report) costChart() *chart {
	if !r.CostKnown || len(r.Teams) == 0 {
		return nil
	}
	rows := make([]barRow, len(r.Teams))
	for i, t := range r.Teams {
		v := r.teamCost(t)
		rows[i] = barRow{Label: r.teamLabel(t), Values: []float64{v}, Texts: []string{r.moneyOf(v, t.Unpriced) + " (idle " + r.moneyOf(t.Waste, t.Unpriced) + ")"}}
	}
	title := "Cost per team in the window"
	if r.CostBasis == ledger.Usage {
		title += " (usage basis)"
	}
	c := barChart("chart-cost", "bars", title, rows, []string{"mark cost"})
	return &c
}

func (r *Report) allocatedUsedChart() chart {
	rows := make([]barRow, len(r.Teams))
	for i, t := range r.Teams {
		rows[i] = barRow{Label: r.teamLabel(t), Values: []float64{t.AllocatedGPUHours, t.UsedGPUHours},
			Texts: []string{gpuHours(t.AllocatedGPUHours) + " allocated", gpuHours(t.UsedGPUHours) + " used"}}
	}
	return barChart("chart-allocated-used", "bars", "Allocated vs used GPU-hours", rows, []string{"mark allocated", "mark used"})
}

// wasteChart splits the estimated waste into each team's idle allocations
// and the capacity nobody held; in GPU-hours when there are no prices.
func (r *Report) wasteChart() chart {
	var rows []barRow
	add := func(label string, cost, hours float64, u *rollup.Unpriced) {
		if r.CostKnown {
			rows = append(rows, barRow{Label: label, Values: []float64{cost}, Texts: []string{r.moneyOf(cost, u)}})
		} else {
			rows = append(rows, barRow{Label: label, Values: []float64{hours}, Texts: []string{gpuHours(hours) + " GPU-h"}})
		}
	}
	for _, t := range r.Teams {
		add(r.teamLabel(t)+" (idle)", t.Waste, t.IdleGPUHours, t.Unpriced)
	}
	add("Unallocated capacity", r.Cluster.UnallocatedCost, r.Cluster.UnallocatedGPUHours, r.Cluster.CapacityUnpriced)
	// The window's, as the cost chart's: the headline above is a month.
	title := "Estimated waste in the window"
	if !r.CostKnown {
		title += " (GPU-hours, no prices)"
	}
	return barChart("chart-waste", "bars", title, rows, []string{"mark waste"})
}

// teamLabel names a team in a chart: cluster/team where the report is
// clustered, since two clusters' team-a are two bars.
func (r *Report) teamLabel(t rollup.Team) string {
	if !r.clustered() {
		return t.Team
	}
	return clusterCell(t.Cluster) + "/" + t.Team
}

// slug makes a team name usable in an id.
func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
