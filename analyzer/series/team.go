package series

// Team is one team's roll-up as the series expose it: the figures of the
// analysis's team roll-up (report.Team) that gpulens_team_* carry, so that
// serve's /metrics links neither the report nor its renderers.
type Team struct {
	// Cluster is the store's cluster label value; two clusters' team-a
	// are two teams.
	Cluster, Team                                 string
	AllocatedGPUHours, UsedGPUHours, IdleGPUHours float64
	// Cost is of the priced hours; CostKnown is false when any allocated
	// hour had no price, and the team then has no cost series.
	Cost      float64
	CostKnown bool
	// Efficiency is used over measured hours; nil when nothing was measured.
	Efficiency *float64
}
