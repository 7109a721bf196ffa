package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// Session is one open analyzer session. It is not safe for concurrent use:
// a server opens one per cycle.
type Session struct {
	cfg    Config
	obs    Observer
	src    source.Source
	close  func() error
	window fleet.Window
	// schema is the schema the session reads, fixed when it is made
	// (settle, start): the one --schema names, or the one the store's
	// metric names tell, detected once (detected). Where detection failed
	// it is nil and schemaErr says why, to each use case that needs it, in
	// its own words (schemaError; pipeline.Options.DetectErr).
	schema     signals.Schema
	detected   bool
	schemaErr  error
	dcgmFields *dcgm.FieldMap // --dcgm-fields; nil for none
	thresholds criteria.Config
	prices     *price.Prices
	// members are the clusters Config.Contexts and AllContexts name; nil
	// when one cluster is read the usual way.
	members []inventory.Member
	// fleet holds one inventory per cluster; inv is the one results are
	// joined with (the fleet's primary, see clusterNotes).
	fleet *inventory.Fleet
	inv   *inventory.Inventory
	// clusterNotes say, with several clusters, which inventory results are
	// joined with and which clusters could not be read, naming each.
	clusterNotes []string
	// primaryNote says, with several clusters, whose inventory stands for
	// all where results cannot be joined per cluster; its reason is the
	// caller's.
	primaryNote string
}

// openEmbedded is source.OpenEmbedded; a test counts the opens through it.
var openEmbedded = source.OpenEmbedded

// Open checks cfg, opens its source and reads the cluster. Close releases
// the source.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	s, err := settle(cfg)
	if err != nil {
		return nil, err
	}
	src, err := s.openSource()
	if err != nil {
		return nil, err
	}
	s.close = src.Close
	if err := s.start(ctx, src); err != nil {
		_ = src.Close()
		return nil, err
	}
	return s, nil
}

// New is Open over a source the caller opened and will close, such as the
// demo's TSDB it has just written; the Config's source fields are ignored.
func New(ctx context.Context, src source.Source, cfg Config) (*Session, error) {
	s, err := settle(cfg)
	if err != nil {
		return nil, err
	}
	s.close = func() error { return nil }
	if err := s.start(ctx, src); err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the source Open opened.
func (s *Session) Close() error { return s.close() }

// settle checks and loads everything that does not need the source.
func settle(cfg Config) (*Session, error) {
	s := &Session{cfg: cfg, obs: cfg.Observer}
	if s.obs == nil {
		s.obs = noObserver{}
	}
	if s.cfg.Logger == nil {
		s.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := fleet.Window{Start: cfg.Start, End: cfg.End, Step: cfg.Step}.WithDefaults()
	if err != nil {
		return nil, &InputError{Input: InputWindow, Err: err}
	}
	s.window = w
	if s.dcgmFields, err = dcgm.LoadFieldMap(cfg.DCGMFieldsFile); err != nil {
		return nil, &InputError{Input: InputDCGMFields, Err: err}
	}
	if cfg.Schema != "" && cfg.Schema != SchemaAuto {
		if s.schema, err = source.SchemaByName(cfg.Schema, s.dcgmFields); err != nil {
			return nil, &InputError{Input: InputSchema, Err: err}
		}
	}
	if s.thresholds, err = criteria.LoadConfig(cfg.ConfigFile); err != nil {
		return nil, &InputError{Input: InputConfig, Err: err}
	}
	if s.prices, err = price.LoadPrices(cfg.PricesFile); err != nil {
		return nil, &InputError{Input: InputPrices, Err: err}
	}
	if cfg.NoKubernetes == "" && (len(cfg.Contexts) > 0 || cfg.AllContexts) {
		if s.members, err = kube.ResolveMembers(cfg.Kubernetes, cfg.Contexts, cfg.AllContexts); err != nil {
			input := InputContext
			if len(cfg.Contexts) == 0 {
				input = InputAllCtx
			}
			return nil, &InputError{Input: input, Err: err}
		}
	}
	return s, nil
}

// openSource opens the one source the config names. A remote source logs
// its retries and the server's PromQL warnings: a slow or flapping server,
// and a query the server only half answered, should be visible.
func (s *Session) openSource() (source.Source, error) {
	cfg := s.cfg
	switch {
	case cfg.PrometheusURL != "" && cfg.DataDir != "":
		return nil, &InputError{Input: InputSource, Err: ErrTwoSources}
	case cfg.DataDir != "":
		// An absent or empty directory is refused here: opening it would
		// create an empty TSDB and report "no data" about a typo.
		if entries, err := os.ReadDir(cfg.DataDir); err != nil {
			return nil, &DataDirError{Err: err}
		} else if len(entries) == 0 {
			return nil, &DataDirError{Err: fmt.Errorf("%s is empty, not a Prometheus TSDB", cfg.DataDir)}
		}
		// Read-only: the directory may be a copy of a Prometheus data
		// directory, which a read-write open would compact, truncate and
		// apply retention to.
		src, err := openEmbedded(cfg.DataDir, source.EmbeddedOptions{MaxSamples: cfg.MaxSamples, ReadOnly: true})
		if err != nil {
			return nil, &DataDirError{Err: err}
		}
		return src, nil
	case cfg.PrometheusURL != "":
		o := cfg.Remote
		o.URL = cfg.PrometheusURL
		o.Logger = cfg.Logger
		o.MaxReplyFlag = "--" + InputMaxReply
		src, err := source.NewRemote(o)
		if err != nil {
			return nil, &InputError{Input: InputURL, Err: err}
		}
		return src, nil
	default:
		return nil, &InputError{Input: InputSource, Err: ErrNoSource}
	}
}

// start fits the window to the data (fitWindow), wraps the source so
// that the observer sees each query, detects the schema where --schema
// left it to the data (once: every use case reads s.schema), and reads
// the cluster. The inventory never fails the session: without the cluster,
// teams are namespaces and the findings that need it are skipped, which
// the report says.
func (s *Session) start(ctx context.Context, src source.Source) error {
	if err := s.fitWindow(ctx, src); err != nil {
		return err
	}
	s.src = observed(src, s.obs)
	if s.schema == nil {
		s.schema, s.schemaErr = source.Detect(ctx, s.src, s.window.Start, s.window.End, s.dcgmFields)
		s.detected = s.schemaErr == nil
	}
	s.inv = s.readCluster(ctx)
	if s.fleet == nil {
		s.fleet = inventory.SingleFleet(s.inv)
	}
	return nil
}

// readCluster reads the one cluster, or every cluster of the fleet, and
// returns the inventory results are joined with.
func (s *Session) readCluster(ctx context.Context) *inventory.Inventory {
	if s.cfg.NoKubernetes != "" {
		return inventory.Unavailable(s.cfg.NoKubernetes)
	}
	o := s.cfg.Kubernetes
	o.Logger = s.cfg.Logger
	if len(s.members) == 0 {
		c, err := kube.NewClient(o)
		if err != nil {
			return inventory.Unavailable(err.Error())
		}
		return kube.Read(ctx, c, o)
	}
	s.fleet = kube.ReadFleet(ctx, o, s.members, 0)
	if s.fleet.Len() == 1 {
		return s.fleet.For(s.members[0].Cluster)
	}
	// Where the store's series carry the cluster label, the analysis
	// joins each cluster with its own inventory (Analyze). Where they do
	// not, or for what is not yet read per cluster, the primary's
	// inventory stands for all and the notes say so: merging the
	// inventories would not be safe, since namespaces, pods and nodes of
	// the same name in two clusters would join one cluster's metrics with
	// the other's owners, teams and quotas. Its own gaps are said with
	// the others', each naming its cluster, rather than as the cluster's.
	m, inv := s.fleet.Primary()
	var names []string
	for _, x := range s.fleet.Members {
		names = append(names, x.Cluster)
	}
	s.primaryNote = fmt.Sprintf("inventories of %d clusters read (%s), joined with %s's inventory only", len(names), strings.Join(names, ", "), m)
	for _, u := range s.fleet.Unread() {
		s.clusterNotes = append(s.clusterNotes, "not read from "+u)
	}
	view := *inv
	view.Skipped = nil
	return &view
}

// Fleet is the inventory of each cluster the session read, by cluster
// label value (inventory.Fleet.For); one cluster read without
// Config.Contexts is the fleet's only member, of cluster value "".
func (s *Session) Fleet() *inventory.Fleet { return s.fleet }

// ClusterNotes say, when several clusters were read, what could not be
// read of each, naming the cluster; none with one cluster.
func (s *Session) ClusterNotes() []string { return slices.Clone(s.clusterNotes) }
