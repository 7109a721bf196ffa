package report

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed report.html.tmpl
var htmlTemplate string

// page is everything the HTML template shows.
type page struct {
	*Report
	Title, Headline string
	Sections        []section
	Timelines       []chart
	Bars            []chart
	// Figures are the headline, above every chart and table.
	Figures []figure
}

var htmlTmpl = template.Must(template.New("report").Parse(htmlTemplate))

// writeHTML prints one self-contained page: inline CSS and inline SVG, no
// scripts and no external URLs, so it can be mailed, attached to a ticket
// or opened offline, and prints as it shows.
func writeHTML(w io.Writer, r *Report) error {
	p := page{Report: r, Title: r.title(), Headline: r.subtitle(), Sections: r.sections(), Timelines: r.timelineCharts(), Figures: r.headlineFigures()}
	if c := r.costChart(); c != nil {
		p.Bars = append(p.Bars, *c)
	}
	if len(r.Teams) > 0 {
		p.Bars = append(p.Bars, r.allocatedUsedChart())
	}
	p.Bars = append(p.Bars, r.wasteChart())
	return htmlTmpl.Execute(w, p)
}
