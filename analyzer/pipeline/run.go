package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/schemas"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// Options configure one run.
type Options struct {
	Source source.Source
	// Schema is the schema to read; nil detects it from the metric names
	// present.
	Schema signals.Schema
	// DCGMFields maps dcgm-exporter's fields onto the store's own names
	// (--dcgm-fields) for a detected schema; nil reads every era's names.
	DCGMFields *dcgm.FieldMap
	// Start and End bound the window (Start, End]. The previous window is
	// the same length, ending at Start.
	Start, End time.Time
	// Step is the query resolution; zero means fleet.DefaultStep.
	Step time.Duration
	// Inventory may be nil: the analysis then runs from metric labels alone.
	Inventory *inventory.Inventory
	// Findings are the thresholds; nil means criteria.DefaultConfig().
	Findings *criteria.Config
	// Prices may be nil: every dollar figure is then unknown.
	Prices *price.Prices
	// TimelinePoints asks for per-namespace time series with about this
	// many points over the window; zero skips them. Sources that cannot
	// run range queries skip them too, with a note.
	TimelinePoints int
	// Lanes also keeps each allocation's use at every step of the current
	// window, folded out of the analysis's passes (query.Sharding.Lanes),
	// for a consolidation plan made without reading the window again
	// (Analysis.Usage).
	Lanes bool
	// CurrentOnly reads the current window only: Previous is then an
	// empty analysis of the window before, and no change is shown. For a
	// use case that needs the window's findings and not the change (a
	// plan after the advice), whose read of the previous window would be
	// the whole cost of a second analysis.
	CurrentOnly bool
	// Progress, when set, is told how many of the run's stages are done.
	Progress func(done, total int)
	// Sharding keeps each query of the analyses within a sample budget
	// (query.AnalyzeSharded); its zero value uses the default budget.
	Sharding query.Sharding
	// ClusterLabel names the label that tells the clusters of a shared
	// store apart (vocab.DefaultClusterLabel); empty reads the store as one
	// cluster. A store whose series lack it reads as one cluster either way.
	ClusterLabel string
	// Fleet, when set, gives each cluster of a store of several its
	// inventory (inventory.Fleet.Of); unset, Inventory is a fleet of one
	// unnamed cluster, which a store of several is not joined with.
	Fleet *inventory.Fleet
	// CurrentClusters, when set, gives the cluster label's values over
	// [Start, End] (query.ClusterValues), for a caller that reads them
	// once for several use cases: they read every sample of a series per
	// GPU, at 10,000 GPUs a week about 19 CPU-seconds. Unset, Run reads
	// them itself.
	CurrentClusters func(context.Context, signals.Schema) ([]string, error)
	// Detected says Schema was detected by the caller (analyzer/session,
	// once per session): Run takes it as it is, fitted already, and says
	// so (Analysis.Detected). DetectErr is the caller's detection that
	// failed, which Run reports as its own (a NoDataError where the store
	// holds no GPU series) rather than ask the store again.
	Detected  bool
	DetectErr error
}

// Analysis is the outcome of Run.
type Analysis struct {
	// Schema is the schema used; Detected says it was detected.
	Schema   signals.Schema
	Detected bool
	Source   string
	// Current is the window asked for and Previous the one before it, of
	// the same length. Previous has no GPUs when the data does not reach
	// that far back.
	Current, Previous *fleet.Result
	// Comparable is true when the previous window has data for at least
	// MinPreviousCoverage of its time: a change measured against a few
	// minutes of data would read as thousands of percent.
	Comparable bool
	Findings   *findings.Result
	// Inventory is what the run was given; nil without cluster access.
	// Where the store holds several clusters it is nil, and InventoryOf
	// gives each cluster's.
	Inventory *inventory.Inventory
	// Clusters are the cluster label values the store holds, each
	// analysed on its own and joined with its own inventory; nil where it
	// holds one cluster (no cluster label).
	Clusters []string
	// inventories are the clusters' inventories, by label value.
	inventories map[string]*inventory.Inventory
	// inventoryNotes say what of the clusters could not be read.
	inventoryNotes []string
	// timelines are the utilization over time each cluster's analysis
	// folded ("" where the store holds one cluster).
	timelines map[string]*fleet.Timeline
	// usage are the current window's analyses that folded their
	// allocations' use (Options.Lanes), by cluster ("" where the store
	// holds one cluster).
	usage map[string]*fleet.Result
	// Timeline is nil unless asked for and the source could provide it.
	Timeline *fleet.Timeline
	// Notes say what the run had to leave out, in words.
	Notes []string
	// Money charges every GPU-hour of Current to its tenants and rolls
	// it up by team, cluster and model (rollup.Build at Options.Prices),
	// each tenant of its ledger named with its team: the money of the
	// analysis, built once here, which the report, serve's series and the
	// dashboards' price series render. Nil where the passes did not fold
	// the hours it charges (Options.Lanes unset: recommend's and reclaim's
	// reads, which show no money of it) or read the current window only
	// (Options.CurrentOnly).
	Money *rollup.Money
}

// MinPreviousCoverage is the part of the previous window its GPUs must
// have reported, on average, for a week-over-week change to be shown.
const MinPreviousCoverage = 0.5

const stages = 5 // detect, current, previous, timeline, findings

// Run analyses the window and the one before it.
func Run(ctx context.Context, o Options) (*Analysis, error) {
	if o.Source == nil {
		return nil, errors.New("pipeline: no source")
	}
	if !o.End.After(o.Start) {
		return nil, fmt.Errorf("window end %s is not after its start %s", o.End.UTC().Format(time.RFC3339), o.Start.UTC().Format(time.RFC3339))
	}
	done := 0
	progress := func() {
		done++
		if o.Progress != nil {
			o.Progress(done, stages)
		}
	}

	sch, detected, err := pickSchema(ctx, o)
	if err != nil {
		return nil, err
	}
	progress()

	cur := fleet.Window{Start: o.Start, End: o.End, Step: o.Step}
	length := o.End.Sub(o.Start)
	prevW := fleet.Window{Start: o.Start.Add(-length), End: o.Start, Step: o.Step}
	clusters := []string{""}
	if o.ClusterLabel != "" {
		if clusters, err = clustersOf(ctx, o, sch, cur, prevW); err != nil {
			return nil, err
		}
	}
	a := &Analysis{Schema: sch, Detected: detected, Source: o.Source.Describe(), Inventory: o.Inventory}
	if len(clusters) <= 1 && (len(clusters) == 0 || clusters[0] == "") {
		if err := a.analyzeOne(ctx, o, sch, cur, prevW, progress); err != nil {
			return nil, err
		}
	} else if err := a.analyzeClusters(ctx, o, sch, clusters, cur, prevW, progress); err != nil {
		return nil, err
	}
	var cov float64
	for _, g := range a.Previous.GPUs {
		cov += g.Coverage / float64(len(a.Previous.GPUs))
	}
	a.Comparable = cov >= MinPreviousCoverage
	switch {
	case len(a.Previous.GPUs) == 0:
		a.Notes = append(a.Notes, fmt.Sprintf("no data in the previous %s: week-over-week change is unknown", signals.Duration(length)))
	case !a.Comparable:
		a.Notes = append(a.Notes, fmt.Sprintf("the previous %s has data for only %.0f%% of its time: week-over-week change is not shown", signals.Duration(length), 100*cov))
	}
	if o.TimelinePoints > 0 {
		// Every source the analysis accepts has range queries
		// (query.AnalyzeScoped refuses the others), so the timeline is
		// folded wherever there is data to fold.
		a.Timeline = a.timeline()
	}
	progress()

	a.Notes = append(a.Notes, a.inventoryNotes...)
	if o.Lanes && !o.CurrentOnly {
		var prev *fleet.Result // a previous window too thin to compare gives no team a change
		if a.Comparable {
			prev = a.Previous
		}
		a.Money = rollup.Build(rollup.Input{Current: a.Current, Previous: prev, Team: a.TeamOf, UsedWithoutPod: a.Findings.UsedWithoutPod}, o.Prices)
	}
	progress()
	return a, nil
}

// analyzeOne analyses a store of one cluster: both windows, and the
// findings joined with Options.Inventory.
func (a *Analysis) analyzeOne(ctx context.Context, o Options, sch signals.Schema, cur, prevW fleet.Window, progress func()) error {
	res, err := query.AnalyzeSharded(ctx, o.Source, sch, cur, o.currentSharding())
	if err != nil {
		return err
	}
	a.timelines = map[string]*fleet.Timeline{"": res.Timeline}
	a.keepUsage("", res)
	if len(res.GPUs) == 0 {
		return noData(o, []signals.Schema{sch}, "")
	}
	progress()
	prev, err := o.previous(ctx, query.Scope{}, sch, prevW)
	if err != nil {
		return fmt.Errorf("previous window: %w", err)
	}
	progress()
	a.Current, a.Previous = res, prev
	if err := readHAMi(ctx, o.Source, query.Scope{}, sch, cur, res); err != nil {
		return err
	}
	a.Findings = findings.Detect(res, o.Inventory, o.findingsConfig(), o.Prices)
	addHAMi(o, res, a.Findings)
	if o.CurrentOnly {
		// No previous window read: nothing of HAMi's to read for it.
	} else if err := previousHAMi(ctx, o.Source, query.Scope{}, sch, prevW, prev); err != nil {
		return err
	}
	a.inventoryNotes = inventoryNotes(o.Inventory, "")
	return nil
}

// previous is the analysis of the window before cur in scope sc: an
// empty one of its window where o.CurrentOnly.
func (o Options) previous(ctx context.Context, sc query.Scope, sch signals.Schema, prevW fleet.Window) (*fleet.Result, error) {
	if o.CurrentOnly {
		return &fleet.Result{Schema: sch.Name(), Window: prevW}, nil
	}
	return query.AnalyzeScoped(ctx, o.Source, sc, sch, prevW, o.Sharding)
}

// currentSharding is the current window's: it also folds the utilization
// over time out of the analysis's own passes (query.Sharding.
// TimelinePoints), so that the report's charts read nothing again.
func (o Options) currentSharding() query.Sharding {
	sh := o.Sharding
	sh.TimelinePoints = o.TimelinePoints
	sh.Lanes = o.Lanes
	return sh
}

// keepUsage keeps a cluster's analysis of the current window where it
// folded its allocations' use.
func (a *Analysis) keepUsage(cluster string, res *fleet.Result) {
	if res.Usage == nil {
		return
	}
	if a.usage == nil {
		a.usage = map[string]*fleet.Result{}
	}
	a.usage[cluster] = res
}

// Usage is cluster's analysis of the current window with its
// allocations' use at every step (fleet.Result.Usage), for the
// consolidation plan (plan.FromAnalysis); "" where the store holds one
// cluster. It is nil where Options.Lanes was not set, the passes did not
// run, or the cluster had no series; each is handed out once, so that its
// arrays are freed with the plan.
func (a *Analysis) Usage(cluster string) *fleet.Result {
	res := a.usage[cluster]
	delete(a.usage, cluster)
	return res
}

func (o Options) findingsConfig() criteria.Config {
	if o.Findings != nil {
		return *o.Findings
	}
	return criteria.DefaultConfig()
}

// inventoryNotes say what of the cluster inv could not be read; prefix
// names the cluster where the store holds several.
func inventoryNotes(inv *inventory.Inventory, prefix string) []string {
	var notes []string
	if inv == nil || !inv.Available {
		notes = append(notes, prefix+"no cluster access: teams are namespaces, workloads are inferred from pod names")
	}
	if inv != nil {
		for _, s := range inv.Skipped {
			notes = append(notes, prefix+"not read from the cluster: "+s)
		}
	}
	return notes
}

// pickSchema resolves Options.Schema. Detect wraps the source's error when
// listing the metric names fails, and returns a bare error when the names
// match no schema: only the latter is ErrNoData.
func pickSchema(ctx context.Context, o Options) (signals.Schema, bool, error) {
	if o.Detected && o.Schema != nil {
		return o.Schema, true, nil
	}
	if d, ok := o.Schema.(dcgm.Schema); ok {
		// Named, it still fits the store's names as a detected one does
		// (a counters file without FB_USED: dcgm.Schema.Fit).
		names, err := o.Source.MetricNames(ctx, o.Start, o.End)
		if err != nil {
			return nil, false, fmt.Errorf("reading the metric names: %w", err)
		}
		d, err = source.FitDCGM(ctx, o.Source, d, names, o.Start, o.End)
		return d, false, err
	}
	if o.Schema != nil {
		return o.Schema, false, nil
	}
	sch, err := o.Schema, o.DetectErr
	if err == nil {
		sch, err = source.Detect(ctx, o.Source, o.Start, o.End, o.DCGMFields)
	}
	if err != nil {
		if errors.Unwrap(err) != nil {
			return nil, false, err
		}
		e := noData(o, schemas.All(o.DCGMFields), err.Error())
		var unread *source.UnreadNamesError
		if errors.As(err, &unread) {
			e.Unread = unread.Error()
		}
		return nil, false, e
	}
	return sch, true, nil
}

func noData(o Options, tried []signals.Schema, detail string) *NoDataError {
	e := &NoDataError{Source: o.Source.Describe(), Start: o.Start, End: o.End, Detail: detail}
	for _, s := range tried {
		e.Schemas = append(e.Schemas, s.Name())
		e.Metrics = append(e.Metrics, s.Identifying())
	}
	return e
}
