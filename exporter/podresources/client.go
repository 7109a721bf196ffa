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
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/vocab"
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

	// retryInterval is how soon Run tries again after a failed refresh,
	// when Interval is longer: attribution should come back within a
	// second or two of the kubelet.
	retryInterval = time.Second

	// serviceConfig retries UNAVAILABLE: a call written to a connection the
	// kubelet closed a moment ago fails that way, and both RPCs are
	// read-only, so repeating them is safe. It does not make calls wait for
	// a connection (waitForReady): a call made while the socket is missing
	// fails at once instead of waiting out Timeout for a kubelet that may
	// come back in time, which would hide the outage; a call made while
	// gRPC connects to a present socket still waits for it.
	serviceConfig = `{"methodConfig": [{
	  "name": [{"service": "v1.PodResourcesLister"}],
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
	Socket        string           // kubelet pod-resources socket path
	Interval      time.Duration    // between refreshes in Run
	Timeout       time.Duration    // for one refresh, both RPCs together
	MaxRecvBytes  int              // gRPC receive limit
	ResourceNames []vocab.Resource // custom GPU resource names (time-slicing "rename")
	DRADrivers    []string         // DRA drivers whose claim devices are GPUs; none when empty
	Logger        *slog.Logger
}

// Client polls the kubelet pod-resources API and publishes the GPU
// allocations it finds.
//
// A connection the kubelet drops between two refreshes starts a refresh at
// once, so an outage shorter than Interval is seen too.
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

	// changed is signalled when Up changes; lost when the connection
	// leaves READY. Both hold at most one pending signal.
	changed chan struct{}
	lost    chan struct{}
	metrics *clientMetrics
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
		opts:    opts,
		target:  "unix://" + socket,
		log:     opts.Logger.With("socket", opts.Socket),
		changed: make(chan struct{}, 1),
		lost:    make(chan struct{}, 1),
		metrics: newClientMetrics(),
	}
}

// Run refreshes immediately and then every Interval until ctx is done, and
// closes the connection on return. After a failure it tries again within
// retryInterval; when the kubelet drops the connection it refreshes at
// once. Failures are logged and visible through Up; they never stop the
// loop.
func (c *Client) Run(ctx context.Context) {
	defer c.Close()
	timer := time.NewTimer(c.opts.Interval)
	defer timer.Stop()
	for {
		wait := c.opts.Interval
		if err := c.Refresh(ctx); err != nil {
			wait = min(wait, retryInterval)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.lost:
		}
	}
}

// Changed is signalled (at most one pending signal) each time Up changes,
// so that what was built from the last snapshot can be rebuilt at once.
func (c *Client) Changed() <-chan struct{} { return c.changed }

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
		return nil, nil, c.callError("List", err)
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
		return nil, nil, c.callError("GetAllocatableResources", err)
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
	go c.watch(conn)
	return conn, nil
}

// watch signals lost when conn leaves READY, which is how a kubelet that
// stops or restarts shows between two refreshes. It returns once conn is
// closed.
func (c *Client) watch(conn *grpc.ClientConn) {
	state := conn.GetState()
	for conn.WaitForStateChange(context.Background(), state) {
		next := conn.GetState()
		if next == connectivity.Shutdown {
			return
		}
		if state == connectivity.Ready && next != connectivity.Ready {
			select {
			case c.lost <- struct{}{}:
			default:
			}
		}
		state = next
	}
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
	reason := Reason(err)
	c.refreshFailures.Add(1)
	c.metrics.failures.WithLabelValues(reason).Inc()
	c.snap.Store(nil)
	if c.up.Swap(false) {
		c.signalChanged()
	}
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
		c.log.Warn(failureMessage(reason)+"; GPU allocations to pods are unknown until it answers", "reason", reason, "err", err)
		return
	}
	c.log.Debug("kubelet pod-resources API still failing", "reason", reason, "err", err)
}

func (c *Client) signalChanged() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Client) succeedLocked(snap *Allocations) {
	c.snap.Store(snap)
	if !c.up.Swap(true) {
		c.signalChanged()
	}
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
