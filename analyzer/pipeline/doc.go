// Package pipeline runs one complete analysis for the commands that report
// on a window: schema detection, the query set over the window and over the
// window before it (for week-over-week change), the findings, and optionally
// the per-namespace time series that charts draw.
//
// It opens nothing itself. The caller hands it a Source, an inventory (or
// nil) and the configuration, so the same run serves the CLI, the server and
// the tests, and so every resource is closed by whoever opened it.
package pipeline
