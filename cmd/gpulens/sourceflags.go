package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/units"
	"github.com/spf13/pflag"

	"github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// sourceFlags are the flags of every command that reads metrics: where
// they are, how to reach them, which window, which schema, and the cluster
// and configuration to join them with.
type sourceFlags struct {
	session.Flags
	quiet bool
}

func (f *sourceFlags) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "No progress line on a terminal (there is none when standard error is not a terminal)")
	fs.StringVar(&f.PrometheusURL, "prometheus-url", "", "Prometheus-compatible API root to query (Prometheus, VictoriaMetrics, Thanos, Mimir), e.g. http://prometheus:9090")
	fs.StringVar(&f.DataDir, "data-dir", "", "Query a local Prometheus TSDB directory instead (for example one written by 'gpulens demo')")
	fs.StringVar(&f.Remote.BearerTokenFile, "bearer-token-file", "", "File holding a bearer token for --prometheus-url (default: $"+session.EnvBearerToken+" if set)")
	fs.StringVar(&f.Remote.BasicAuthUser, "basic-auth-user", "", "Basic auth user for --prometheus-url (default: $"+session.EnvBasicAuthUser+"), or give it in the URL's user info")
	fs.StringVar(&f.Remote.BasicAuthPasswordFile, "basic-auth-password-file", "", "File holding the basic auth password (default: $"+session.EnvBasicAuthPassword+" if set)")
	fs.StringVar(&f.Remote.CAFile, "ca-file", "", "CA certificate to verify --prometheus-url with")
	fs.StringVar(&f.Remote.CertFile, "cert-file", "", "Client certificate for mutual TLS")
	fs.StringVar(&f.Remote.KeyFile, "key-file", "", "Client key for mutual TLS")
	fs.BoolVar(&f.Remote.InsecureSkipVerify, "insecure-skip-tls-verify", false, "Do not verify the server's certificate (insecure)")
	fs.StringArrayVar(&f.Headers, "header", nil, "HTTP header K=V sent with every query, e.g. X-Scope-OrgID=team-a (repeatable)")
	fs.DurationVar(&f.Remote.Timeout, "timeout", 2*time.Minute, "Timeout of one query")
	fs.BoolVar(&f.Remote.DisableRemoteRead, "no-remote-read", false, "Ask the server's PromQL engine for every figure, instead of reading raw samples through its remote-read endpoint (Prometheus, Mimir, Cortex) where it serves one")
	fs.IntVar(&f.Remote.Retries, "retries", 2, "Retries of a query after a network error, a 429 or a 5xx")
	fs.IntVar(&f.MaxSamples, "query.max-samples", 0, "The most samples one query may load: the analysis is split into shards of nodes and namespaces that each stay under it (0: 40M, under the 50M of Prometheus's --query.max-samples default; set it to the server's limit, e.g. VictoriaMetrics' -search.maxSamplesPerQuery). With --data-dir also the engine's own limit (0: 50M)")
	fs.StringVar(&f.MaxReplySize, session.InputMaxReply, units.Base2Bytes(source.DefaultMaxReplyBytes).String(), "The largest reply read from --prometheus-url, as Prometheus's body_size_limit (64MiB, 1GiB; 0: no limit): a larger one fails the query, unretried, before it fills the analyzer's memory")
	fs.StringVar(&f.Schema, "schema", session.SchemaAuto, "Metric schema: auto, "+strings.Join(source.SchemaNames(), " or "))
	fs.StringVar(&f.DCGMFields, "dcgm-fields", "", "YAML file mapping dcgm-exporter fields to the names this store holds them under (a pipeline that renames them, or --use-old-namespace), one \"DCGM_FI_DEV_FB_USED: dcgm_fb_used\" a line; dcgm-exporter's own names of every release are read without it")
	fs.StringVar(&f.Since, "since", "7d", "Length of the window, ending at --until (e.g. 36h, 7d, 2w)")
	fs.StringVar(&f.MaxWindow, "max-window", "400d", "The longest window read: --since starts at the store's first sample when that is later, and a window still longer than this is refused (0: no bound)")
	fs.StringVar(&f.Until, "until", "", "End of the window, RFC 3339 (default: now; with --data-dir, the store's last sample when that is earlier)")
	fs.DurationVar(&f.Step, "step", time.Minute, "Resolution the window is read at: the scrape interval, or longer")
	fs.StringVar(&f.TeamLabel, "team-label", kube.DefaultTeamLabel, "Namespace label naming the team that owns it")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "Kubeconfig file (default: in-cluster, $KUBECONFIG or ~/.kube/config)")
	fs.StringArrayVar(&f.Contexts, "context", nil, "Kubeconfig context to read the cluster through (default: the current one). Repeat it to read several clusters, each with its own credentials, "+
		"as CONTEXT or CONTEXT=CLUSTER: CLUSTER is the value of the cluster label that cluster's metrics carry (default: the context's name), e.g. --context prod-eu --context arn:aws:eks:us-east-1:1234:cluster/gpu=us-east")
	fs.BoolVar(&f.AllContexts, "all-contexts", false, "Read every context of the kubeconfig as a cluster of its own name, the current context first; --context CONTEXT=CLUSTER renames one. "+
		"A cluster that cannot be read degrades only its own part, which the report names")
	fs.StringVar(&f.ClusterLabel, "cluster-label", vocab.DefaultClusterLabel, "Label that names each series' cluster in a store shared by several clusters (the external label of Thanos, Mimir or the Prometheus Operator): "+
		"each cluster is analysed on its own and joined with its own --context. A store without it reads as one cluster; empty reads every store as one")
	fs.BoolVar(&f.NoKubernetes, "no-kubernetes", false, "Do not read the cluster: work from metric labels alone")
	fs.StringVar(&f.ConfigFile, "config", "", "Findings thresholds file (YAML, over the defaults)")
	fs.StringVar(&f.PricesFile, "prices", "", "Price table file (YAML, over the default table)")
}

// open is the one preamble of every command that reads metrics: the
// session the flags name, over the window ending at now, its errors mapped
// to exit codes. logger and obs are the command's: a one-shot command's
// warnings and progress line (reading.open), or serve's and reclaim's log.
func (f *sourceFlags) open(ctx context.Context, now time.Time, logger *slog.Logger, obs session.Observer) (*session.Session, error) {
	f.RemoteSecretsFromEnv(os.Getenv)
	cfg, err := f.Config(now, logger, obs)
	if fe := (*session.FlagError)(nil); errors.As(err, &fe) {
		return nil, usageError{fe.Err}
	} else if err != nil {
		return nil, err
	}
	s, err := openSession(ctx, cfg)
	if err != nil {
		return nil, f.exit(err)
	}
	return s, nil
}

// openSession is session.Open; a test counts the sessions a command opens.
var openSession = session.Open

// exit maps a session's error to the exit code scripts rely on, and its
// input to the flag that sets it.
func (f *sourceFlags) exit(err error) error {
	kind, err := session.Classify(err, f.DataDir != "")
	if kind == session.BadInput {
		return usageError{err}
	}
	if code, ok := exitCodes[kind]; ok {
		return exitError{code: code, err: err}
	}
	return err // session.Failed: exitFailure
}
