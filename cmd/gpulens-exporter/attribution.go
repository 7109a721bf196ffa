package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/attribution/cgroup"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/collector"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/simkube"
	"github.com/gpulens/gpulens/vocab"
)

// sharingLabel is GPU Feature Discovery's node label for the device
// plugin's sharing strategy.
const sharingLabel = vocab.LabelSharingStrategy

// setupAttribution starts what attribution reads in the background: the
// pod-resources client and the node's pod informer. With --backend=sim it
// first stands up the simulated kubelet, API server and host /proc, so the
// same clients run against them. cleanup releases what was started;
// kubelet is the pod-resources client, whose failure counters the caller
// serves.
func setupAttribution(ctx context.Context, cfg *config, backend gpu.Backend, logger *slog.Logger) (a *collector.Attribution, kubelet *podresources.Client, cleanup func(), err error) {
	cleanup = func() {}
	if cfg.podResourcesSocket == "" {
		logger.Info("pod attribution is off (--kubelet.pod-resources-socket is empty)")
		return nil, nil, cleanup, nil
	}
	socket, procRoot, sharedMode := cfg.podResourcesSocket, cfg.procfs, vocab.Sharing(cfg.sharingStrategy)
	// pods lists and watches the node's pods; labels reads the node's;
	// slices lists and watches a DRA driver's ResourceSlices of the node.
	var pods cache.ListerWatcher
	var labels func(context.Context) (map[string]string, error)
	var slices func(driver string) cache.ListerWatcher
	var syncSim func()

	if sb, ok := backend.(*sim.Backend); ok && cfg.simKubelet {
		dir, err := os.MkdirTemp("", "gpulens-sim-")
		if err != nil {
			return nil, nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if !cfg.podResourcesSocketSet {
			socket = filepath.Join(dir, "kubelet.sock")
		}
		node := sb.Node()
		stop, err := simkube.ServeKubelet(socket, node)
		if err != nil {
			return nil, nil, cleanup, fmt.Errorf("simulated kubelet: %w", err)
		}
		cluster, err := simkube.NewCluster(ctx, node)
		if err != nil {
			stop()
			return nil, nil, cleanup, err
		}
		tree, err := simkube.NewProcTree(filepath.Join(dir, "proc"))
		if err != nil {
			stop()
			return nil, nil, cleanup, err
		}
		prev := cleanup
		cleanup = func() { stop(); prev() }
		procRoot, pods, slices = tree.Dir, cluster, cluster.ResourceSlices
		labels = func(context.Context) (map[string]string, error) { return cluster.Node().Labels, nil }
		if sharedMode == "auto" {
			sharedMode = simkube.SharingStrategy(node.Devices())
		}
		// The simulated cluster follows the simulation at each collection.
		syncSim = func() {
			pods := node.Pods()
			if err := cluster.Sync(ctx, pods); err != nil {
				logger.Warn("simulated API server", "err", err)
			}
			if err := tree.Sync(pods); err != nil {
				logger.Warn("simulated /proc", "err", err)
			}
		}
		syncSim()
		logger.Info("simulated kubelet, API server and /proc", "socket", socket, "proc", procRoot)
	} else {
		rc, err := kubeConfig(cfg.kubeconfig)
		var kube, resource *rest.RESTClient
		if err == nil {
			kube, err = podindex.NewClient(rc)
		}
		if err == nil {
			resource, err = sliceindex.NewClient(rc)
		}
		if err == nil {
			pods = podindex.NodePods(kube, cfg.nodeName)
			labels = func(ctx context.Context) (map[string]string, error) {
				return podindex.NodeLabels(ctx, kube, cfg.nodeName)
			}
			slices = func(driver string) cache.ListerWatcher { return sliceindex.NodeSlices(resource, cfg.nodeName, driver) }
		} else {
			logger.Warn("no Kubernetes API access: shared GPUs get allocation-only attribution, and finished pods are only dropped when the kubelet drops them",
				"err", err)
		}
	}

	// The flag's names are the kubelet's, taken as they are.
	resourceNames := make([]vocab.Resource, len(cfg.resourceNames))
	for i, n := range cfg.resourceNames {
		resourceNames[i] = vocab.Resource(n)
	}
	client := podresources.New(podresources.Options{Socket: socket, Interval: cfg.collectInterval,
		MaxRecvBytes:  int(cfg.podResourcesMaxMessage),
		ResourceNames: resourceNames, DRADrivers: cfg.draDrivers, Logger: logger})
	// One synchronous refresh, so the first collection is attributed; a
	// failure is not fatal (the kubelet may come up later) and is logged by
	// the client.
	if _, err := os.Stat(socket); err == nil {
		refreshCtx, cancel := context.WithTimeout(ctx, startupWait)
		_ = client.Refresh(refreshCtx)
		cancel()
	}
	go client.Run(ctx)
	prev := cleanup
	cleanup = func() { client.Close(); prev() }

	var index podindex.Index
	if pods != nil {
		inf := podindex.New(pods, cfg.nodeName, 0, logger)
		go inf.Run(ctx)
		if !waitSynced(ctx, inf) {
			logger.Warn("the pod informer has not synced yet; collecting anyway", "waited", startupWait)
		}
		index = inf
		if sharedMode == "auto" {
			sharedMode = nodeSharingStrategy(ctx, labels, cfg.nodeName, logger)
		}
	}
	if sharedMode == "auto" {
		sharedMode = attribution.SharingTimeSlicing
	}
	procRoot = checkProcRoot(procRoot, logger)

	a = &collector.Attribution{Allocations: client.Snapshot, Pods: index, ProcRoot: procRoot, SharedMode: sharedMode,
		Changed: client.Changed()}
	if syncSim != nil {
		a.Allocations = func() *podresources.Allocations { syncSim(); return client.Snapshot() }
	}
	if len(cfg.draDrivers) > 0 && slices != nil {
		lazy := &lazySlices{ctx: ctx, node: cfg.nodeName, drivers: cfg.draDrivers, lw: slices, log: logger}
		allocations := a.Allocations
		a.Allocations = func() *podresources.Allocations { s := allocations(); lazy.observe(s); return s }
		a.Slices = lazy
		// Claims at startup: the first collection should find their GPUs,
		// as it finds the pods of the pod index. An index that does not
		// sync (refused: it has said so) leaves them unmatched meanwhile.
		if inf := lazy.observe(client.Snapshot()); inf != nil {
			_ = waitSynced(ctx, inf)
		}
	}
	return a, client, cleanup, nil
}

// startupWait bounds how long startup waits for the kubelet and the API
// server before collecting anyway.
const startupWait = 10 * time.Second

// waitSynced waits up to startupWait for inf to sync and reports whether
// it did.
func waitSynced(ctx context.Context, inf interface{ Synced() bool }) bool {
	deadline := time.Now().Add(startupWait)
	for !inf.Synced() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// kubeConfig uses --kubernetes.kubeconfig, else the in-cluster service
// account.
func kubeConfig(kubeconfig string) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, err
	}
	rc.UserAgent = "gpulens-exporter"
	return rc, nil
}

// kubeClient is kubeConfig's client of core/v1 only.
func kubeClient(kubeconfig string) (*rest.RESTClient, error) {
	rc, err := kubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return podindex.NewClient(rc)
}

// nodeSharingStrategy reads GPU Feature Discovery's label once: the device
// plugin's config does not change without a plugin restart, and device IDs
// of time-slicing and MPS replicas look the same.
func nodeSharingStrategy(ctx context.Context, labels func(context.Context) (map[string]string, error), node string, logger *slog.Logger) vocab.Sharing {
	l, err := labels(ctx)
	if err != nil {
		logger.Info("cannot read the node's sharing strategy; assuming time-slicing for shared GPUs", "node", node, "err", err)
		return attribution.SharingTimeSlicing
	}
	if vocab.Sharing(l[sharingLabel]) == attribution.SharingMPS {
		return attribution.SharingMPS
	}
	return attribution.SharingTimeSlicing
}

// checkProcRoot turns per-process attribution off, with one log line, when
// the proc root cannot serve it: NVML reports host PIDs, so without
// hostPID the container's own /proc cannot resolve them. In a container
// without hostPID, PID 1 is the container's entrypoint, inside a kubepods
// cgroup; with hostPID it is the host's init.
func checkProcRoot(procRoot string, logger *slog.Logger) string {
	if procRoot == "" {
		logger.Info("per-process attribution is off (--path.procfs is empty): shared GPUs get allocation-only attribution")
		return ""
	}
	_, err := cgroup.ReadPID(procRoot, 1)
	switch {
	case err == nil:
		logger.Warn("per-process attribution is off: "+procRoot+" is not the host's PID namespace (run the exporter with hostPID: true); shared GPUs get allocation-only attribution",
			"procfs", procRoot)
		return ""
	case errors.Is(err, cgroup.ErrNotKubernetes):
		return procRoot
	default:
		logger.Warn("per-process attribution is off: cannot read "+procRoot+"/1/cgroup; shared GPUs get allocation-only attribution", "err", err)
		return ""
	}
}
