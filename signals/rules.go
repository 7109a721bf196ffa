package signals

// Shapes of the alerting rules, the same for every exporter.

// TargetDown is 1 per scrape target that is down (up == 0) and is the
// exporter's: by its job's name matching job (a regex), or, whatever the
// job is called, by the exporter's own series (seen, an expression with
// the target's job and instance labels, such as the last hour's
// last_over_time of a metric only the exporter writes).
func TargetDown(job, seen string) string {
	return `up{job=~"` + job + `"} == 0 or (up == 0 and on (job, instance) ` + seen + `)`
}
