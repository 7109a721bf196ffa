package session

import (
	"log/slog"
	"time"

	"github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/source"
)

// SchemaAuto asks the session to detect the schema from the metric names
// present; so does an empty Config.Schema.
const SchemaAuto = "auto"

// Config is what a session is opened with: plain values, parsed already.
type Config struct {
	// PrometheusURL and DataDir name the metrics source; give one.
	PrometheusURL string
	DataDir       string
	// Remote configures a PrometheusURL source (its URL and Logger are
	// set by Open).
	Remote source.RemoteOptions
	// MaxSamples is the most samples one query may load (0: the default
	// budget); with DataDir also the engine's own limit.
	MaxSamples int
	// Schema is a schema name, or SchemaAuto (or empty) to detect it.
	Schema string
	// Start and End bound the window (Start, End]; Step is its resolution
	// (0: one minute). Every use case reads this one window's grid.
	Start, End time.Time
	Step       time.Duration
	// EndAtLastSample ends the window at the store's last sample, where
	// that is before End and the source can tell it without reading
	// (source.LastSampler: a store on disk), keeping the window's
	// length: a --data-dir read without --until. A store read after its
	// last sample would otherwise end in minutes without data.
	EndAtLastSample bool
	// MaxWindow bounds the window once started at the store's first
	// sample (0: no bound): a mistyped --since over a store of years is
	// refused rather than read.
	MaxWindow time.Duration
	// ConfigFile and PricesFile are YAML files over the default thresholds
	// and prices; empty means the defaults.
	ConfigFile, PricesFile string
	// DCGMFieldsFile maps dcgm-exporter's fields onto a store's own
	// names (signals/dcgm.FieldMap); empty reads every era's names.
	DCGMFieldsFile string
	// CostBasis is the basis of the report's teams' cost column
	// (gpulens report --cost-basis); empty is the allocation basis.
	CostBasis ledger.Basis
	// Kubernetes says how to read the cluster. NoKubernetes, when set,
	// says why the cluster is not read: the analysis then works from metric
	// labels alone.
	Kubernetes   kube.Options
	NoKubernetes string
	// Contexts and AllContexts read several clusters, each through its own
	// kubeconfig context with its own credentials (Kubernetes.Context is
	// then ignored): each of Contexts is "CONTEXT" or "CONTEXT=CLUSTER",
	// the cluster label value its metrics carry (default: the context's
	// name); AllContexts reads every context of the kubeconfig
	// (inventory.ResolveMembers). With neither, the one cluster
	// Kubernetes names is read.
	Contexts    []string
	AllContexts bool
	// ClusterLabel is the label that tells the clusters of a shared store
	// apart (Thanos's, Mimir's, a Prometheus Operator's external label):
	// each cluster's series are analysed on their own and joined with that
	// cluster's inventory (Contexts). Empty, or a store whose series lack
	// it, reads the store as one cluster.
	ClusterLabel string
	// Logger receives a remote source's retries and warnings, and the
	// inventory's progress; nil discards them.
	Logger *slog.Logger
	// Observer is told about long work; nil tells no one.
	Observer Observer
}

// Observer watches a session's long work, for a progress display. Query may
// be called from several goroutines at once.
type Observer interface {
	// Begin starts a phase: "analyzing", "planning".
	Begin(phase string)
	// Progress says how many of the phase's stages are done.
	Progress(done, total int)
	// Shards says how many of a sharded analysis's shards are done.
	Shards(done, total int)
	// Query says one more query was answered.
	Query()
	// End ends the phase.
	End()
}

type noObserver struct{}

func (noObserver) Begin(string)      {}
func (noObserver) Progress(int, int) {}
func (noObserver) Shards(int, int)   {}
func (noObserver) Query()            {}
func (noObserver) End()              {}
