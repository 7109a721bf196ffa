package report

import (
	"time"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/vocab"
)

// Report is the weekly utilization report. JSON tags are its JSON format.
type Report struct {
	Window   Window `json:"window"`
	Previous Window `json:"previous_window"`
	Schema   string `json:"schema"`
	// Currency and PricesDate describe the price table; CostKnown is false
	// without one, and UnpricedModels lists models it has no price for
	// (their hours count, their dollars do not: every money figure that
	// holds some of them has its own cost_known false and says what is
	// unpriced, so an unknown reads as unknown, never as $0).
	Currency       string   `json:"currency"`
	PricesDate     string   `json:"prices_date,omitempty"`
	CostKnown      bool     `json:"cost_known"`
	UnpricedModels []string `json:"unpriced_models"`

	// Cluster is the whole fleet's summary, of every cluster the store
	// holds; Clusters are each cluster's, present only where the store
	// holds several (its series carry a cluster label), and sum to it.
	Cluster         rollup.Cluster      `json:"cluster"`
	Clusters        []ClusterSummary    `json:"clusters,omitempty"`
	Fleet           []rollup.ModelFleet `json:"fleet"`
	Teams           []rollup.Team       `json:"teams"`
	Recommendations []Recommendation    `json:"recommendations"`
	Findings        Findings            `json:"findings"`
	Coverage        Coverage            `json:"coverage"`
	Consolidation   *Consolidation      `json:"consolidation,omitempty"`
	// Savings are the two savings the report states, each a month, read
	// off Consolidation (SavingsOf); nil where it is.
	Savings        *Savings        `json:"savings,omitempty"`
	ReclaimPreview *ReclaimPreview `json:"reclaim_preview,omitempty"`
	// Ledger charges every GPU's cost to its tenants on both bases, with
	// the idle and unallocated remainder (analyzer/ledger); CostBasis is
	// the basis the teams' cost column shows (ledger.Allocation, the
	// default, or ledger.Usage).
	Ledger    *ledger.Ledger `json:"ledger"`
	CostBasis ledger.Basis   `json:"cost_basis"`

	// Timeline is per team, for charts only.
	Timeline []TeamSeries `json:"-"`
}

// Window is a reported period, (Start, End].
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Hours float64   `json:"hours"`
	// DataStops are the nodes whose data stops before the window's end
	// (fleet.Result.Stale), the longest stopped first: they are judged at
	// their last sample, and none is advised to scale down. The notes
	// say it in words.
	DataStops []DataStop `json:"data_stops,omitempty"`
}

// DataStop is a node whose data stops before the window's end.
type DataStop struct {
	Cluster string `json:"cluster,omitempty"`
	Node    string `json:"node"`
	// LastSeen is the last step its series were seen at: its last
	// sample, or up to the engine's lookback (5m) after it where the
	// store has no staleness markers.
	LastSeen time.Time `json:"last_seen"`
	// AbsentHours is from LastSeen to the window's last step.
	AbsentHours float64 `json:"absent_hours"`
}

// ClusterSummary is one cluster's part of the fleet, with the figures of
// the fleet-wide summary. Previous is nil where the previous window has
// no data of this cluster.
type ClusterSummary struct {
	// Name is the cluster's label value; "" stands for the series without
	// the label in a store where others have it.
	Name string `json:"cluster"`
	rollup.Cluster
	// MonthlySavings is what acting on the cluster's findings banks a
	// month (as Findings.MonthlySavings, of which it is a part), and
	// SavingsUnpriced the findings whose savings have no price.
	MonthlySavings  float64          `json:"monthly_savings"`
	SavingsUnpriced *rollup.Unpriced `json:"savings_unpriced,omitempty"`
}

// Recommendation is a right-sizing change with its monthly savings.
type Recommendation struct {
	// Cluster is the workload's cluster label value; empty where the
	// store holds one cluster.
	Cluster   string     `json:"cluster,omitempty"`
	Team      string     `json:"team"`
	Namespace string     `json:"namespace"`
	Workload  string     `json:"workload"`
	Kind      vocab.Kind `json:"finding"`
	Action    string     `json:"action"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	// Allocation is the allocation path the change is made on
	// (device-plugin: the container's limits; dra: the workload's claim,
	// Claim); empty for a change to no GPU request.
	Allocation        vocab.AllocationPath `json:"allocation,omitempty"`
	Claim             string               `json:"claim,omitempty"`
	Summary           string               `json:"summary"`
	MonthlySavings    float64              `json:"monthly_savings"`
	MonthlyCurrentUSD float64              `json:"monthly_cost"`
	// CostKnown is false where the GPU (Model) has no price: the change
	// saves GPU time, and its dollars are unknown, not 0.
	CostKnown bool   `json:"cost_known"`
	Model     string `json:"model,omitempty"`
}

// Findings are the analysis's findings, counted and listed most severe
// first.
type Findings struct {
	Critical int       `json:"critical"`
	Warning  int       `json:"warning"`
	Info     int       `json:"info"`
	Items    []Finding `json:"items"`
	// MonthlySavings is what acting on every finding banks a month (the
	// recommendations' savings; changes for reliability cost, and are left
	// out), beside the window's waste: waste is paid and not used, savings
	// are what acting takes off the bill.
	MonthlySavings float64 `json:"monthly_savings"`
	// SavingsUnpriced are the findings whose change saves GPU time of a
	// model without a price: MonthlySavings leaves them out.
	SavingsUnpriced *rollup.Unpriced `json:"savings_unpriced,omitempty"`
	// ReliabilityMonthlyCost is what the changes made for reliability
	// (a dedicated GPU for a workload at risk of OOM on a shared one) add
	// to the bill each month, priced ones only: MonthlySavings minus it is
	// what acting on every priced recommendation nets.
	ReliabilityMonthlyCost float64 `json:"reliability_monthly_cost"`
	// Skipped are the kinds that could not be checked, and why.
	Skipped []string `json:"skipped"`
}

// Finding is one finding, reduced to what a report shows.
type Finding struct {
	// Cluster is the subject's cluster label value; empty where the
	// store holds one cluster.
	Cluster   string     `json:"cluster,omitempty"`
	Severity  string     `json:"severity"`
	Kind      vocab.Kind `json:"kind"`
	Team      string     `json:"team"`
	Namespace string     `json:"namespace"`
	Subject   string     `json:"subject"`
	// AllocationPath is how a workload's GPUs were allocated
	// (device-plugin, or dra through Claims, namespace/name); empty on a
	// GPU's or a node's finding.
	AllocationPath vocab.AllocationPath `json:"allocation_path,omitempty"`
	Claims         []string             `json:"claims,omitempty"`
	Summary        string               `json:"summary"`
	Confidence     float64              `json:"confidence"`
	MonthlyCost    float64              `json:"monthly_cost"`
	MonthlySavings float64              `json:"monthly_savings"`
	// CostKnown is false where the finding's GPU has no price: its
	// cost and savings are then unknown, not 0.
	CostKnown bool `json:"cost_known"`
}

// Coverage is how much of the window the data covers.
type Coverage struct {
	StepSeconds                int     `json:"step_seconds"`
	ExpectedSteps              int     `json:"expected_steps"`
	GPUs                       int     `json:"gpus"`
	GPUsFullyCovered           int     `json:"gpus_fully_covered"`
	AvgGPUCoverage             float64 `json:"avg_gpu_coverage"`
	Allocations                int     `json:"allocations"`
	AllocationsWithUtilization int     `json:"allocations_with_utilization"`
	// Workloads is how many workloads the findings judged, and
	// WorkloadSources how each one's owner was found (api, pod-name).
	Workloads       int            `json:"workloads"`
	WorkloadSources map[string]int `json:"workload_sources"`
	// AllocationPaths counts the workloads by the path their GPUs were
	// allocated through, as the exporter's series say (device-plugin,
	// dra).
	AllocationPaths map[string]int `json:"allocation_paths"`
	// AbsentGPUs are the GPUs gone before the window's end from nodes
	// that kept reporting (fleet.Result.Absent), the longest gone first.
	AbsentGPUs []AbsentGPU `json:"absent_gpus,omitempty"`
	Notes      []string    `json:"notes"`
}

// AbsentGPU is a GPU that stopped reporting while its node went on.
type AbsentGPU struct {
	Cluster string `json:"cluster,omitempty"`
	Node    string `json:"node"`
	UUID    string `json:"gpu_uuid"`
	Model   string `json:"model"`
	// LastSeen is the last step it was reported at; AbsentHours from it
	// to the window's last step.
	LastSeen    time.Time `json:"last_seen"`
	AbsentHours float64   `json:"absent_hours"`
	// NodeGPUsReporting is how many of its node's other GPUs were
	// reported at the window's end.
	NodeGPUsReporting int `json:"node_gpus_reporting"`
}

// TeamSeries is a team's utilization per bucket; OK is false for buckets
// without a measured allocation.
type TeamSeries struct {
	Team   string
	Points []Point
}

// Point is one bucket of a TeamSeries.
type Point struct {
	End         time.Time
	Utilization float64
	OK          bool
}
