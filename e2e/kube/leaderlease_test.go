package kube

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/internal/leaderlease"
)

// Short, for a test: the others may take over a Lease 6 s after they last
// saw it renewed; the leader renews every 0.5 s and gives up after 3 s.
const (
	testLeaseDuration = 6 * time.Second
	testRenewDeadline = 3 * time.Second
	testRetryPeriod   = 500 * time.Millisecond
)

// actions records which candidate's guarded func ran when, and whether
// two ever ran at once.
type actions struct {
	mu      sync.Mutex
	active  map[string]bool
	started []string
	stopped map[string]time.Time
	overlap []string
}

func newActions() *actions {
	return &actions{active: map[string]bool{}, stopped: map[string]time.Time{}}
}

// fn is candidate id's guarded work: it acts until its context ends.
func (a *actions) fn(id string) func(context.Context) {
	return func(ctx context.Context) {
		a.mu.Lock()
		for other := range a.active {
			a.overlap = append(a.overlap, other+" and "+id)
		}
		a.active[id] = true
		a.started = append(a.started, id)
		a.mu.Unlock()
		<-ctx.Done()
		// A controller's last write, after it was told to stop: the Lease
		// must still be held while it runs.
		time.Sleep(200 * time.Millisecond)
		a.mu.Lock()
		delete(a.active, id)
		a.stopped[id] = time.Now()
		a.mu.Unlock()
	}
}

func (a *actions) snapshot() (started, overlap []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.started...), append([]string(nil), a.overlap...)
}

// candidate is one leaderlease.Run in its own goroutine.
type candidate struct {
	id      string
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

func campaign(t *testing.T, c kubernetes.Interface, ns, lease, id string, a *actions) *candidate {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cand := &candidate{id: id, cancel: cancel, done: make(chan error, 1)}
	cfg := leaderlease.Config{
		Client: c, Namespace: ns, Name: lease, Identity: id,
		LeaseDuration: testLeaseDuration, RenewDeadline: testRenewDeadline, RetryPeriod: testRetryPeriod,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil)).With("candidate", id),
	}
	go func() { cand.done <- leaderlease.Run(ctx, cfg, a.fn(id)) }()
	t.Cleanup(func() { cand.stop(t) })
	return cand
}

// stop cancels the candidate and waits for Run to return.
func (c *candidate) stop(t *testing.T) {
	t.Helper()
	if c.stopped {
		return
	}
	c.stopped = true
	c.cancel()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("%s: Run: %v", c.id, err)
		}
	case <-time.After(2 * testRenewDeadline):
		t.Errorf("%s: Run did not return %s after its context ended", c.id, 2*testRenewDeadline)
	}
}

func holder(t *testing.T, c kubernetes.Interface, ns, name string) string {
	t.Helper()
	l, err := c.CoordinationV1().Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("lease %s/%s: %v", ns, name, err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestLeaderLeaseActsOnce: two candidates for one Lease on the real API
// server. One acts, and goes on being the only one past a whole
// LeaseDuration (it renews); when its context is cancelled it stops
// acting, then releases the Lease, and the other takes over well before
// the Lease would have expired, never while the first still acts.
func TestLeaderLeaseActsOnce(t *testing.T) {
	ac := clientFor(t, adminConfig(t))
	ns := testNamespace(t, ac, "reclaimrbac-lease", nil)
	const lease = "reclaimrbac-reclaim"
	a := newActions()
	cands := map[string]*candidate{}
	for _, id := range []string{"reclaimrbac-a", "reclaimrbac-b"} {
		cands[id] = campaign(t, ac, ns, lease, id, a)
	}
	eventually(t, "a leader to act", func() bool { s, _ := a.snapshot(); return len(s) > 0 })
	// Past a LeaseDuration: the leader renewed, the other never acted.
	time.Sleep(testLeaseDuration + 2*testRetryPeriod)
	started, overlap := a.snapshot()
	if len(started) != 1 {
		t.Fatalf("acted: %q, want one candidate once", started)
	}
	first := started[0]
	if h := holder(t, ac, ns, lease); h != first {
		t.Errorf("the Lease's holder is %q, want %q, which acts", h, first)
	}
	second := "reclaimrbac-a"
	if first == second {
		second = "reclaimrbac-b"
	}

	cands[first].stop(t)
	handedOver := time.Now()
	a.mu.Lock()
	stoppedAt, stopped := a.stopped[first]
	a.mu.Unlock()
	if !stopped || stoppedAt.After(handedOver) {
		t.Fatalf("%s's Run returned before its func stopped acting", first)
	}
	eventually(t, second+" to take over", func() bool { s, _ := a.snapshot(); return len(s) == 2 })
	// Released: the other acquires on its next try. Expired, it would
	// have waited a LeaseDuration since it last saw a renewal (≥ 5.5 s).
	if took := time.Since(handedOver); took > testLeaseDuration-2*time.Second {
		t.Errorf("%s took over %s after %s stopped: the Lease expired rather than being released", second, took.Round(time.Millisecond), first)
	}
	started, overlap = a.snapshot()
	if started[1] != second {
		t.Errorf("acted: %q, want %s then %s", started, first, second)
	}
	if len(overlap) > 0 {
		t.Errorf("two candidates acted at once: %q", overlap)
	}
	if h := holder(t, ac, ns, lease); h != second {
		t.Errorf("the Lease's holder is %q, want %q", h, second)
	}

	cands[second].stop(t)
	if h := holder(t, ac, ns, lease); h != "" {
		t.Errorf("after both stopped the Lease is held by %q, want released", h)
	}
}

// TestLeaderLeaseLost: when the leader cannot renew (here another holder
// took the Lease, as after a partition), its func's context ends within
// RenewDeadline, it campaigns again without acting, and on its own
// cancellation it leaves the other holder's Lease alone.
func TestLeaderLeaseLost(t *testing.T) {
	ac := clientFor(t, adminConfig(t))
	ns := testNamespace(t, ac, "reclaimrbac-lease", nil)
	const lease = "reclaimrbac-reclaim"
	a := newActions()
	cand := campaign(t, ac, ns, lease, "reclaimrbac-a", a)
	eventually(t, "the candidate to act", func() bool { s, _ := a.snapshot(); return len(s) == 1 })

	ctx := t.Context()
	l, err := ac.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thief, hour := "reclaimrbac-thief", int32(3600)
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &thief, &hour, &now, &now
	if _, err := ac.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stolen := time.Now()
	eventually(t, "the candidate to stop acting", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		_, ok := a.stopped["reclaimrbac-a"]
		return ok
	})
	// RenewDeadline, a retry's jitter and the func's 200 ms.
	if took := time.Since(stolen); took > testRenewDeadline+2*time.Second {
		t.Errorf("acted for %s after losing the Lease, want at most RenewDeadline %s and a retry", took.Round(time.Millisecond), testRenewDeadline)
	}
	select {
	case err := <-cand.done:
		t.Fatalf("Run returned (%v) after losing the Lease, want it to campaign again", err)
	case <-time.After(4 * testRetryPeriod):
	}
	if started, _ := a.snapshot(); len(started) != 1 {
		t.Errorf("acted again while another holds the Lease: %q", started)
	}
	cand.stop(t)
	if h := holder(t, ac, ns, lease); h != thief {
		t.Errorf("the Lease's holder is %q after the candidate stopped, want %q's untouched", h, thief)
	}
}

// TestLeaderLeaseFuncReturns: a func that returns by itself while leading
// has done its work: Run returns nil and releases the Lease.
func TestLeaderLeaseFuncReturns(t *testing.T) {
	ac := clientFor(t, adminConfig(t))
	ns := testNamespace(t, ac, "reclaimrbac-lease", nil)
	const lease = "reclaimrbac-reclaim"
	ran := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- leaderlease.Run(t.Context(), leaderlease.Config{
			Client: ac, Namespace: ns, Name: lease, Identity: "reclaimrbac-once",
			LeaseDuration: testLeaseDuration, RenewDeadline: testRenewDeadline, RetryPeriod: testRetryPeriod,
		}, func(context.Context) { close(ran) })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(testLeaseDuration):
		t.Fatal("Run did not return after its func did")
	}
	select {
	case <-ran:
	default:
		t.Fatal("Run returned without running its func")
	}
	if h := holder(t, ac, ns, lease); h != "" {
		t.Errorf("the Lease is held by %q after the func returned, want released", h)
	}
}
