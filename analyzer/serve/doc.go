// Package serve runs the analysis on an interval and serves its outcome:
// the findings and team figures as series (analyzer/series), the findings
// and the report as JSON, and the findings as alerts (analyzer/notify).
//
// Each successful analysis is published whole, with one atomic pointer
// swap, so a scrape or an API call never sees half of one analysis and
// half of the next. An analysis that fails leaves the last good one in
// place, marked stale.
package serve
