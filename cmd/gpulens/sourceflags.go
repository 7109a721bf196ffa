package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/progress"
)

// sourceFlags are the flags of every command that reads metrics: where
// they are, how to reach them, which window, which schema, and the cluster
// and configuration to join them with.
type sourceFlags struct {
	maxSamples    int
	prometheusURL string
	dataDir       string
	remote        source.RemoteOptions
	headers       []string

	schema string
	since  string
	until  string

	teamLabel    string
	kubeconfig   string
	kubeContext  string
	noKubernetes bool

	configFile string
	pricesFile string

	quiet bool
}

func (f *sourceFlags) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "No progress line on a terminal (there is none when standard error is not a terminal)")
	fs.StringVar(&f.prometheusURL, "prometheus-url", "", "Prometheus-compatible API root to query (Prometheus, VictoriaMetrics, Thanos, Mimir), e.g. http://prometheus:9090")
	fs.StringVar(&f.dataDir, "data-dir", "", "Query a local Prometheus TSDB directory instead (for example one written by 'gpulens demo')")
	fs.StringVar(&f.remote.BearerTokenFile, "bearer-token-file", "", "File holding a bearer token for --prometheus-url")
	fs.StringVar(&f.remote.BasicAuthUser, "basic-auth-user", "", "Basic auth user for --prometheus-url")
	fs.StringVar(&f.remote.BasicAuthPasswordFile, "basic-auth-password-file", "", "File holding the basic auth password")
	fs.StringVar(&f.remote.CAFile, "ca-file", "", "CA certificate to verify --prometheus-url with")
	fs.StringVar(&f.remote.CertFile, "cert-file", "", "Client certificate for mutual TLS")
	fs.StringVar(&f.remote.KeyFile, "key-file", "", "Client key for mutual TLS")
	fs.BoolVar(&f.remote.InsecureSkipVerify, "insecure-skip-tls-verify", false, "Do not verify the server's certificate (insecure)")
	fs.StringArrayVar(&f.headers, "header", nil, "HTTP header K=V sent with every query, e.g. X-Scope-OrgID=team-a (repeatable)")
	fs.DurationVar(&f.remote.Timeout, "timeout", 2*time.Minute, "Timeout of one query")
	fs.IntVar(&f.remote.Retries, "retries", 2, "Retries of a query after a network error, a 429 or a 5xx")
	fs.IntVar(&f.maxSamples, "query.max-samples", 0, "The most samples one query may load: the analysis is split into shards of nodes and namespaces that each stay under it (0: 40M, under the 50M of Prometheus's --query.max-samples default; set it to the server's limit, e.g. VictoriaMetrics' -search.maxSamplesPerQuery). With --data-dir also the engine's own limit (0: 50M)")
	fs.StringVar(&f.schema, "schema", pipeline.SchemaAuto, "Metric schema: auto, "+strings.Join(schema.Names(), " or "))
	fs.StringVar(&f.since, "since", "7d", "Length of the window, ending at --until (e.g. 36h, 7d, 2w)")
	fs.StringVar(&f.until, "until", "", "End of the window, RFC 3339 (default: now)")
	fs.StringVar(&f.teamLabel, "team-label", inventory.DefaultTeamLabel, "Namespace label naming the team that owns it")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Kubeconfig file (default: in-cluster, $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.kubeContext, "context", "", "Kubeconfig context to use")
	fs.BoolVar(&f.noKubernetes, "no-kubernetes", false, "Do not read the cluster: work from metric labels alone")
	fs.StringVar(&f.configFile, "config", "", "Findings thresholds file (YAML, over the defaults)")
	fs.StringVar(&f.pricesFile, "prices", "", "Price table file (YAML, over the default table)")
}

// window parses --since and --until; malformed values are usage errors.
func (f *sourceFlags) window(now time.Time) (start, end time.Time, err error) {
	length, err := parseWindow(f.since)
	if err != nil {
		return start, end, usageError{fmt.Errorf("--since: %w", err)}
	}
	end = now.UTC().Truncate(time.Minute)
	if f.until != "" {
		if end, err = time.Parse(time.RFC3339, f.until); err != nil {
			return start, end, usageError{fmt.Errorf("--until: %q is not an RFC 3339 time such as 2026-01-05T14:00:00Z", f.until)}
		}
	}
	return end.Add(-length), end, nil
}

// settings loads the findings thresholds and the price table; a broken
// file is the user's to fix, hence a usage error naming it.
func (f *sourceFlags) settings() (findings.Config, *recommend.Prices, error) {
	if f.schema != pipeline.SchemaAuto {
		if _, err := schema.ByName(f.schema); err != nil {
			return findings.Config{}, nil, usageError{fmt.Errorf("--schema: %w", err)}
		}
	}
	cfg, err := findings.LoadConfig(f.configFile)
	if err != nil {
		return cfg, nil, usageError{fmt.Errorf("--config: %w", err)}
	}
	prices, err := recommend.LoadPrices(f.pricesFile)
	if err != nil {
		return cfg, nil, usageError{fmt.Errorf("--prices: %w", err)}
	}
	return cfg, prices, nil
}

// open opens the one source the flags name. A remote source logs its
// retries and the server's PromQL warnings to logger: a slow or flapping
// server, and a query the server only half answered, should be visible.
func (f *sourceFlags) open(logger *slog.Logger) (source.Source, error) {
	switch {
	case f.prometheusURL != "" && f.dataDir != "":
		return nil, usageError{errors.New("--prometheus-url and --data-dir are exclusive: give one")}
	case f.dataDir != "":
		// An absent or empty directory is refused here: opening it would
		// create an empty TSDB and report "no data" about a typo.
		if entries, err := os.ReadDir(f.dataDir); err != nil {
			return nil, exitError{code: exitData, err: fmt.Errorf("--data-dir: %w", err)}
		} else if len(entries) == 0 {
			return nil, exitError{code: exitData, err: fmt.Errorf("--data-dir: %s is empty, not a Prometheus TSDB", f.dataDir)}
		}
		// Read-only: the directory may be a copy of a Prometheus data
		// directory, which a read-write open would compact, truncate and
		// apply retention to.
		src, err := source.OpenEmbedded(f.dataDir, source.EmbeddedOptions{MaxSamples: f.maxSamples, ReadOnly: true})
		if err != nil {
			return nil, exitError{code: exitData, err: err}
		}
		return src, nil
	case f.prometheusURL != "":
		o := f.remote
		o.URL = f.prometheusURL
		o.Logger = logger
		o.Headers = map[string]string{}
		for _, h := range f.headers {
			k, v, ok := strings.Cut(h, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usageError{fmt.Errorf("--header: %q is not K=V", h)}
			}
			o.Headers[strings.TrimSpace(k)] = v
		}
		src, err := source.NewRemote(o)
		if err != nil {
			return nil, usageError{err}
		}
		return src, nil
	default:
		return nil, usageError{errors.New("no metrics source: give --prometheus-url URL or --data-dir DIR")}
	}
}

// inventory reads the cluster, or says why it did not. It never fails the
// command: without the cluster, teams are namespaces and the findings that
// need it are skipped, which the report says.
func (f *sourceFlags) inventory(ctx context.Context, logger *slog.Logger) *inventory.Inventory {
	if f.noKubernetes {
		return inventory.Unavailable("--no-kubernetes was given")
	}
	o := inventory.Options{Kubeconfig: f.kubeconfig, Context: f.kubeContext, TeamLabel: f.teamLabel, Logger: logger}
	c, err := inventory.NewClient(o)
	if err != nil {
		return inventory.Unavailable(err.Error())
	}
	return inventory.Read(ctx, c, o)
}

// analysisExit maps a failed analysis to the exit code scripts rely on.
func (f *sourceFlags) analysisExit(err error) error {
	var re *source.RemoteError
	switch {
	case errors.Is(err, query.ErrBudget):
		return exitError{code: exitData, err: err}
	case errors.Is(err, pipeline.ErrNoData):
		return exitError{code: exitNoData, err: err}
	case errors.As(err, &re):
		return exitError{code: exitUnreachable, err: err}
	case f.dataDir != "" && strings.Contains(err.Error(), "too many samples"):
		// The engine's words do not say which knob raises the limit.
		return exitError{code: exitData, err: fmt.Errorf("%w (raise --query.max-samples, or shorten --since)", err)}
	case f.dataDir != "":
		return exitError{code: exitData, err: err}
	}
	return err
}

// analyze runs the analysis pipeline over the window the flags name, with
// a progress bar on stderr when it is a terminal: what every command that
// reads metrics does first. timeline asks for that many chart points.
func (f *sourceFlags) analyze(ctx context.Context, now time.Time, stderr io.Writer, timeline int) (*pipeline.Analysis, *recommend.Prices, error) {
	start, end, err := f.window(now)
	if err != nil {
		return nil, nil, err
	}
	cfg, prices, err := f.settings()
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := f.open(logger)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	inv := f.inventory(ctx, logger)

	var queries, shardsDone, shards atomic.Int64
	bar := progress.New(stderr, "analyzing", f.quiet)
	bar.Detail = func(done, total int) string {
		detail := fmt.Sprintf("%d/%d stages done, %d queries", done, total, queries.Load())
		if n := shards.Load(); n > 1 {
			detail += fmt.Sprintf(", %d/%d shards", shardsDone.Load(), n)
		}
		return detail
	}
	a, err := pipeline.Run(ctx, pipeline.Options{
		Source: countQueries(src, &queries, bar.Tick), Schema: f.schema, Start: start, End: end, Inventory: inv,
		Findings: &cfg, Prices: prices, TimelinePoints: timeline, Progress: bar.Set,
		Sharding: query.Sharding{MaxSamples: f.maxSamples, Flag: "--query.max-samples", Progress: func(done, total int) {
			shardsDone.Store(int64(done))
			shards.Store(int64(total))
			bar.Tick()
		}},
	})
	bar.Done()
	if err != nil {
		return nil, nil, f.analysisExit(err)
	}
	if a.Detected {
		fmt.Fprintf(stderr, "Using the %s schema (detected).\n", a.Schema)
	}
	return a, prices, nil
}
