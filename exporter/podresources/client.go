package podresources

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultSocket   = "/var/lib/kubelet/pod-resources/kubelet.sock"
	DefaultInterval = 10 * time.Second
	DefaultTimeout  = 5 * time.Second
	// DefaultMaxRecvBytes raises gRPC's 4 MiB default: List carries every
	// pod of the node with CPU and memory assignments, which exceeds 4 MiB
	// on large nodes.
	DefaultMaxRecvBytes = 16 << 20
)

const (
	// reconnectAfterFailures bounds how long a connection in a bad state is
	// trusted: after this many failed refreshes in a row it is replaced, so
	// recovery never depends on gRPC's internal reconnect state machine.
	reconnectAfterFailures = 3
	// maxReconnectDelay caps gRPC's reconnect backoff (120 s by default):
	// dialling a unix socket that is missing costs one syscall, and the
	// kubelet should be picked up within seconds of coming back.
	maxReconnectDelay = time.Second

	// serviceConfig makes every call wait for a connection (so a call made
	// while gRPC reconnects to a restarted kubelet succeeds within Timeout
	// instead of failing fast) and retries UNAVAILABLE: a call written to a
	// connection the kubelet closed a moment ago fails that way, and both
	// RPCs are read-only, so repeating them is safe.
	serviceConfig = `{"methodConfig": [{
	  "name": [{"service": "v1.PodResourcesLister"}],
	  "waitForReady": true,
	  "retryPolicy": {
	    "maxAttempts": 3,
	    "initialBackoff": "0.05s",
	    "maxBackoff": "0.5s",
	    "backoffMultiplier": 2,
	    "retryableStatusCodes": ["UNAVAILABLE"]
	  }
	}]}`
)

// Options configure a Client. Zero values take the defaults above.
type Options struct {
	Socket        string        // kubelet pod-resources socket path
	Interval      time.Duration // between refreshes in Run
	Timeout       time.Duration // for one refresh, both RPCs together
	MaxRecvBytes  int           // gRPC receive limit
	ResourceNames []string      // custom GPU resource names (time-slicing "rename")
	DRADrivers    []string      // DRA drivers whose claim devices are GPUs; none when empty
	Logger        *slog.Logger
}

// Client polls the kubelet pod-resources API and publishes the GPU
// allocations it finds.
//
// When a refresh fails, the previous snapshot is dropped rather than kept:
// a failing kubelet is usually restarting, and pods may come and go meanwhile,
// so reporting no attribution for a few seconds is better than attributing
// GPUs to pods that no longer hold them. Readers see Snapshot() == nil and
// Up() == false until the next successful refresh.
type Client struct {
	opts   Options
	target string
	log    *slog.Logger

	// mu serialises refreshes and guards the fields below it.
	mu               sync.Mutex
	conn             *grpc.ClientConn
	failures         int       // consecutive failed refreshes
	outageSince      time.Time // zero while reachable
	allocUnsupported bool      // GetAllocatableResources is unimplemented
	everSucceeded    bool

	snap            atomic.Pointer[Allocations]
	up              atomic.Bool
	parseErrors     atomic.Uint64
	refreshFailures atomic.Uint64
}

// New returns a Client; it does not connect until the first refresh.
func New(opts Options) *Client {
	if opts.Socket == "" {
		opts.Socket = DefaultSocket
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRecvBytes <= 0 {
		opts.MaxRecvBytes = DefaultMaxRecvBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	socket := opts.Socket
	// The unix:// scheme needs an absolute path; a relative one would be
	// read as an authority.
	if abs, err := filepath.Abs(socket); err == nil {
		socket = abs
	}
	return &Client{
		opts:   opts,
		target: "unix://" + socket,
		log:    opts.Logger.With("socket", opts.Socket),
	}
}

// Run refreshes immediately and then every Interval until ctx is done, and
// closes the connection on return. Failures are logged and visible through
// Up; they never stop the loop.
func (c *Client) Run(ctx context.Context) {
	defer c.Close()
	ticker := time.NewTicker(c.opts.Interval)
	defer ticker.Stop()
	for {
		_ = c.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Snapshot returns the latest allocations, or nil before the first
// successful refresh and after a failed one.
func (c *Client) Snapshot() *Allocations { return c.snap.Load() }

// Up reports whether the last refresh succeeded.
func (c *Client) Up() bool { return c.up.Load() }

// ParseErrors counts device IDs skipped because they could not be parsed,
// over the life of the Client.
func (c *Client) ParseErrors() uint64 { return c.parseErrors.Load() }

// RefreshFailures counts failed refreshes over the life of the Client.
func (c *Client) RefreshFailures() uint64 { return c.refreshFailures.Load() }

// Close releases the connection. A later Refresh opens a new one.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeConnLocked()
}

// Refresh reads the kubelet once, synchronously, and publishes the result.
// A refresh abandoned because ctx ended changes no state: it says nothing
// about the kubelet.
func (c *Client) Refresh(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()

	list, alloc, err := c.fetchLocked(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.failLocked(err)
		return err
	}
	snap, errs := buildAllocations(time.Now(), list, alloc, Selection{ResourceNames: c.opts.ResourceNames, DRADrivers: c.opts.DRADrivers})
	if len(errs) > 0 {
		c.parseErrors.Add(uint64(len(errs)))
		c.log.Debug("skipped unparseable GPU device IDs", "count", len(errs), "first", errs[0])
	}
	c.succeedLocked(snap)
	return nil
}

func (c *Client) fetchLocked(ctx context.Context) (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse, error) {
	conn, err := c.connLocked()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	client := v1.NewPodResourcesListerClient(conn)
	list, err := client.List(ctx, &v1.ListPodResourcesRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("pod-resources List on %s: %w", c.target, err)
	}
	if c.allocUnsupported {
		return list, nil, nil
	}
	alloc, err := client.GetAllocatableResources(ctx, &v1.AllocatableResourcesRequest{})
	if status.Code(err) == codes.Unimplemented {
		// Old kubelets or a disabled feature gate: attribution still works,
		// only replica counts become unknown.
		c.allocUnsupported = true
		c.log.Info("kubelet does not implement GetAllocatableResources; replica counts of shared GPUs are unknown")
		return list, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pod-resources GetAllocatableResources on %s: %w", c.target, err)
	}
	return list, alloc, nil
}

func (c *Client) connLocked() (*grpc.ClientConn, error) {
	if c.conn != nil {
		return c.conn, nil
	}
	conn, err := grpc.NewClient(c.target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(c.opts.MaxRecvBytes)),
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  100 * time.Millisecond,
				Multiplier: backoff.DefaultConfig.Multiplier,
				Jitter:     backoff.DefaultConfig.Jitter,
				MaxDelay:   maxReconnectDelay,
			},
			MinConnectTimeout: c.opts.Timeout,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("create pod-resources client for %s: %w", c.target, err)
	}
	c.conn = conn
	return conn, nil
}

func (c *Client) closeConnLocked() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

func (c *Client) failLocked(err error) {
	c.refreshFailures.Add(1)
	c.snap.Store(nil)
	c.up.Store(false)
	c.failures++
	if c.failures >= reconnectAfterFailures {
		c.failures = 0
		if cerr := c.closeConnLocked(); cerr != nil {
			c.log.Debug("closing pod-resources connection", "err", cerr)
		}
	}
	if c.outageSince.IsZero() {
		c.outageSince = time.Now()
		// The kubelet coming back may be an upgraded one.
		c.allocUnsupported = false
		c.log.Warn("kubelet pod-resources API unreachable; GPU allocations to pods are unknown until it answers", "err", err)
		return
	}
	c.log.Debug("kubelet pod-resources API still unreachable", "err", err)
}

func (c *Client) succeedLocked(snap *Allocations) {
	c.snap.Store(snap)
	c.up.Store(true)
	c.failures = 0
	if !c.outageSince.IsZero() {
		c.log.Info("kubelet pod-resources API reachable again", "outage", time.Since(c.outageSince).Round(time.Millisecond))
		c.outageSince = time.Time{}
	}
	if !c.everSucceeded {
		c.everSucceeded = true
		c.log.Info("reading GPU allocations from the kubelet", "pods", len(snap.Pods), "allocatable", len(snap.Allocatable), "claim_devices", snap.ClaimDevices)
	}
}
