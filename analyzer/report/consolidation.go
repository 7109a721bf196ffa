package report

import (
	"fmt"
	"strconv"
)

// Consolidation is the headline of `gpulens plan` for the report: how
// many GPUs the fleet needs if its workloads were packed by their
// per-step use, proven by replaying the window on the layout. The
// command that builds the report sets it; nil leaves the section out.
type Consolidation struct {
	GPUsToday  int `json:"gpus_today"`
	GPUsNeeded int `json:"gpus_needed"`
	// MonthlySaving is for the priced pools; SavingKnown is false when
	// none was priced.
	MonthlySaving float64 `json:"monthly_saving"`
	SavingKnown   bool    `json:"saving_known"`
	// ReplaySteps and OvercommittedSteps are the proof: the window's steps
	// replayed on the layout, and those at which memory did not fit (0,
	// or there is no plan).
	ReplaySteps        int                 `json:"replay_steps"`
	OvercommittedSteps int                 `json:"overcommitted_steps"`
	Pools              []ConsolidationPool `json:"pools"`
	// Unavailable says why there is no plan, when there is none.
	Unavailable string `json:"unavailable,omitempty"`
}

// ConsolidationPool is one GPU model's part of it.
type ConsolidationPool struct {
	Model      string `json:"model"`
	GPUsToday  int    `json:"gpus_today"`
	GPUsNeeded int    `json:"gpus_needed"`
}

func (r *Report) consolidationSection() section {
	c := r.Consolidation
	s := section{ID: "consolidation", Title: "Consolidation", Header: []string{"Model", "GPUs today", "GPUs needed", "Freed"}}
	if c.Unavailable != "" {
		s.Empty = "No consolidation plan: " + c.Unavailable
		return s
	}
	saving := "unknown"
	if c.SavingKnown {
		saving = r.money(c.MonthlySaving)
	}
	s.Intro = fmt.Sprintf("Packed by their per-step use, the workloads need %d of the %d GPUs (%d freed, %s a month). "+
		"Replaying the window's %d steps on that layout overcommits memory at %d. 'gpulens plan' gives the layout.",
		c.GPUsNeeded, c.GPUsToday, c.GPUsToday-c.GPUsNeeded, saving, c.ReplaySteps, c.OvercommittedSteps)
	for _, p := range c.Pools {
		s.Rows = append(s.Rows, []string{p.Model, strconv.Itoa(p.GPUsToday), strconv.Itoa(p.GPUsNeeded), strconv.Itoa(p.GPUsToday - p.GPUsNeeded)})
	}
	return s
}
