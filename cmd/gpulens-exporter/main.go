// Command gpulens-exporter is the per-node agent: it samples the node's GPUs
// through NVML in the background and serves them as Prometheus metrics.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	webflag "github.com/prometheus/exporter-toolkit/web/kingpinflag"

	// Fills the version package from the build information.
	"github.com/gpulens/gpulens/exporter/collector"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/server"
	"github.com/gpulens/gpulens/exporter/sim"
	_ "github.com/gpulens/gpulens/internal/buildinfo"
	"github.com/gpulens/gpulens/internal/healthz"
)

const program = "gpulens_exporter"

// exitCode distinguishes configuration mistakes from runtime failures, so
// that a DaemonSet's CrashLoopBackOff reason is readable from the status.
const (
	exitRuntime = 1
	exitConfig  = 2
)

type config struct {
	backend     string
	simScenario string
	simNode     string
	simStart    string
	simKubelet  bool
	dump        bool

	podResourcesSocket    string
	podResourcesSocketSet bool
	resourceNames         []string
	draDrivers            []string
	procfs                string
	kubeconfig            string
	sharingStrategy       string
	nodeName              string
	nodeNameSet           bool
	collectInterval       time.Duration
	collectTimeout        time.Duration
	// podResourcesMaxMessage is the gRPC receive limit of pod-resources
	// answers.
	podResourcesMaxMessage units.Base2Bytes
	telemetryPath          string
	// healthAddress serves /healthz and /readyz without the web config;
	// empty: only the main listener serves them.
	healthAddress string
	web           *web.FlagConfig
	log           *promslog.Config
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr *os.File) int {
	cfg, err := parseFlags(args, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gpulens-exporter: %v\n", err)
		return exitConfig
	}
	if cfg == nil { // --version or --help already printed
		return 0
	}
	cfg.log.Writer = stderr
	logger := promslog.New(cfg.log)
	logger.Info("starting gpulens-exporter", "version", version.Info(), "backend", cfg.backend, "gogc", tuneGC())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	backend, err := openBackend(ctx, cfg, logger)
	if err != nil {
		logger.Error("cannot start backend", "backend", cfg.backend, "err", err)
		fmt.Fprintf(stderr, "gpulens-exporter: %v\n", err)
		return exitConfig
	}
	defer backend.Close()
	if sb, ok := backend.(*sim.Backend); ok && !cfg.nodeNameSet && os.Getenv("NODE_NAME") == "" {
		cfg.nodeName = sb.Node().Node().Name
	}
	if cfg.dump {
		if err := dumpSnapshot(ctx, backend, cfg.collectInterval, stdout); err != nil {
			logger.Error("dumping a snapshot", "err", err)
			return exitRuntime
		}
		return 0
	}

	attr, kubelet, cleanup, err := setupAttribution(ctx, cfg, backend, logger)
	if err != nil {
		logger.Error("cannot start pod attribution", "err", err)
		return exitRuntime
	}
	defer cleanup()

	logger.Info("collecting", "node", cfg.nodeName, "interval", cfg.collectInterval)
	sampler := collector.New(collector.Options{
		Backend:     backend,
		Node:        cfg.nodeName,
		Interval:    cfg.collectInterval,
		Timeout:     cfg.collectTimeout,
		Logger:      logger,
		Attribution: attr,
	})
	// The sampler's device series are served pre-encoded by its handler;
	// this registry holds only what must be live at scrape time.
	live := prometheus.NewRegistry()
	live.MustRegister(
		sampler.SelfCollector(),
		versioncollector.NewCollector(program),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if kubelet != nil {
		live.MustRegister(kubelet)
	}
	go sampler.Run(ctx)

	opts := server.Options{
		TelemetryPath: cfg.telemetryPath,
		Metrics:       sampler.Handler(live, logger),
		Healthy:       sampler.Healthy,
		Ready:         sampler.Ready,
	}
	handler, err := server.Handler(opts)
	if err != nil {
		logger.Error("cannot build HTTP handler", "err", err)
		return exitRuntime
	}
	var probes *healthz.Server
	if cfg.healthAddress != "" {
		if probes, err = healthz.Listen(cfg.healthAddress, server.Probes(opts)); err != nil {
			logger.Error("cannot serve the probes", "err", err)
			return exitRuntime
		}
		go func() {
			if err := probes.Serve(logger); err != nil {
				logger.Error("probes", "err", err)
			}
		}()
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, cfg.web, logger) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("HTTP server failed", "err", err)
			return exitRuntime
		}
	case <-ctx.Done():
		logger.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}
	if probes != nil {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = probes.Shutdown(shutdownCtx)
	}
	return 0
}

func parseFlags(args []string, stdout, stderr *os.File) (*config, error) {
	app := kingpin.New("gpulens-exporter",
		"Per-node GPU exporter: samples NVML in the background and serves the GPUs' metrics, attributed to Kubernetes pods.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	app.Version(version.Print("gpulens-exporter"))
	app.HelpFlag.Short('h')
	app.Terminate(nil)

	cfg := &config{log: &promslog.Config{}}
	app.Flag("backend", "Where GPU data comes from: nvml (the NVIDIA driver) or sim (a simulated fleet, no GPU needed).").
		Default("nvml").EnumVar(&cfg.backend, "nvml", "sim")
	app.Flag("sim.scenario", "Scenario file of the simulated fleet (--backend=sim); the embedded default scenario when empty.").
		StringVar(&cfg.simScenario)
	app.Flag("sim.node", "Node of the scenario this exporter simulates; the scenario's first node when empty.").
		StringVar(&cfg.simNode)
	app.Flag("sim.start", "Pin the simulated clock (RFC 3339): it starts there and moves exactly one --collect.interval per collection, for reproducible output. Default: real time.").
		StringVar(&cfg.simStart)
	app.Flag("sim.kubelet", "With --backend=sim, also simulate the kubelet, the API server and the host /proc from the scenario's pods; --no-sim.kubelet reads --kubelet.pod-resources-socket like on a real node.").
		Default("true").BoolVar(&cfg.simKubelet)
	hostname, _ := os.Hostname()
	app.Flag("node-name", "Kubernetes node name put on every series (set from the downward API); with --backend=sim, the simulated node's name by default.").
		Envar("NODE_NAME").Default(hostname).IsSetByUser(&cfg.nodeNameSet).StringVar(&cfg.nodeName)
	app.Flag("collect.interval", "Interval between two background samples of the GPUs.").
		Default("10s").DurationVar(&cfg.collectInterval)
	app.Flag("collect.timeout", "Time one GPU may take to answer before it is reported down (up 0).").
		Default("5s").DurationVar(&cfg.collectTimeout)
	app.Flag("kubelet.pod-resources-socket", "Kubelet pod-resources socket, to attribute GPUs to pods; empty turns attribution off. With --backend=sim, a simulated kubelet serves it.").
		Default(podresources.DefaultSocket).IsSetByUser(&cfg.podResourcesSocketSet).StringVar(&cfg.podResourcesSocket)
	app.Flag("kubelet.pod-resources-max-message-size", "Largest answer read from the kubelet pod-resources API (gRPC receive limit, e.g. 16MiB): List carries every pod of the node. A larger answer fails the refresh with reason too_large.").
		Default(units.Base2Bytes(podresources.DefaultMaxRecvBytes).String()).BytesVar(&cfg.podResourcesMaxMessage)
	app.Flag("kubelet.resource-names", "Extra extended resources that are GPUs, besides nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-* (repeatable).").
		StringsVar(&cfg.resourceNames)
	app.Flag("attribution.dra-driver", "Dynamic Resource Allocation driver whose devices are GPUs (repeatable); GPUs containers hold through its ResourceClaims are attributed from the node's ResourceSlices, read once the kubelet reports such a claim. An empty value turns this off.").
		Default(podresources.DefaultDRADriver).StringsVar(&cfg.draDrivers)
	app.Flag("path.procfs", "The host's /proc, to map GPU processes to containers on shared GPUs (needs hostPID). Empty: allocation-only attribution.").
		Default("/proc").StringVar(&cfg.procfs)
	app.Flag("kubernetes.kubeconfig", "Kubeconfig for the node's pod informer; default the in-cluster service account.").
		StringVar(&cfg.kubeconfig)
	app.Flag("attribution.sharing-strategy", "What replicated GPUs are: time-slicing, mps, or auto (GPU Feature Discovery's nvidia.com/gpu.sharing-strategy node label).").
		Default("auto").EnumVar(&cfg.sharingStrategy, "auto", "time-slicing", "mps")
	app.Flag("debug.dump-snapshot", "Sample the GPUs twice, one --collect.interval apart, print what the backend read as JSON, and exit (for bug reports and fixtures).").
		BoolVar(&cfg.dump)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").StringVar(&cfg.telemetryPath)
	app.Flag("web.health-address", "Also serve /healthz and /readyz, and nothing else, on this address (e.g. :9847) in plain HTTP without the --web.config.file's TLS and basic auth, for Kubernetes probes, which send no credentials. Empty: only --web.listen-address serves them.").
		StringVar(&cfg.healthAddress)
	cfg.web = webflag.AddFlags(app, ":9845")
	promslogflag.AddFlags(app, cfg.log)

	exited := false
	app.Terminate(func(int) { exited = true })
	if _, err := app.Parse(args); err != nil {
		return nil, err
	}
	if exited {
		return nil, nil
	}
	if err := cfg.checkLimits(); err != nil {
		return nil, err
	}
	if cfg.backend != "sim" && (cfg.simScenario != "" || cfg.simNode != "" || cfg.simStart != "") {
		return nil, errors.New("--sim.scenario, --sim.node and --sim.start need --backend=sim")
	}
	if cfg.simStart != "" {
		if _, err := time.Parse(time.RFC3339, cfg.simStart); err != nil {
			return nil, fmt.Errorf("--sim.start: %q is not an RFC 3339 time such as 2026-01-05T14:00:00Z", cfg.simStart)
		}
	}
	if cfg.nodeName == "" {
		return nil, errors.New("--node-name is empty and the hostname is unknown; set NODE_NAME")
	}
	cfg.draDrivers = slices.DeleteFunc(cfg.draDrivers, func(d string) bool { return d == "" })
	return cfg, nil
}
