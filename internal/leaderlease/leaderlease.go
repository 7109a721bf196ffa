// Package leaderlease runs a function only while this process holds a
// coordination.k8s.io Lease, through client-go's leader election, so that
// of several replicas of a controller one acts at a time (gpulens reclaim:
// two replicas must never both scale a workload down).
//
// client-go starts the leader's callback in a goroutine it does not wait
// for, and its ReleaseOnCancel releases the Lease as soon as the renew
// loop ends, which its documentation leaves to the caller to make safe
// ("you must ensure all code guarded by this lease has successfully
// completed prior to cancelling the context",
// k8s.io/client-go/tools/leaderelection/leaderelection.go). On a lost
// renewal (an API server too slow to answer in RenewDeadline) it would
// release while the callback is still stopping, and another candidate
// could act a second later. Run releases as ReleaseOnCancel does (the same
// record: no holder, leaseDurationSeconds 1) but only once the function
// has returned.
package leaderlease

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// Run campaigns for the Lease and calls fn while it holds it, until ctx
// ends. fn's context ends when leadership is lost (the Lease was not
// renewed within RenewDeadline) or ctx ends; fn must then return within
// LeaseDuration − RenewDeadline, after which another candidate may act.
// After a loss Run campaigns again, and calls fn again once it leads.
// When fn returns while still leading, its work is done: Run releases
// the Lease and returns nil. When ctx ends, Run waits for fn, releases the
// Lease (so that another candidate takes over at once, not after
// LeaseDuration) and returns nil. The only errors are the config's.
func Run(ctx context.Context, cfg Config, fn func(ctx context.Context)) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaOf(cfg),
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	log := cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
	for {
		finished, err := term(ctx, cfg, lock, fn)
		if err != nil || finished || ctx.Err() != nil {
			return err
		}
		log.Warn("lost the lease; stopped acting and campaigning again")
	}
}

// term is one campaign: wait to lead, run fn while leading, and return
// once fn has returned and the elector has stopped. finished reports
// that fn returned by itself while leading.
func term(ctx context.Context, cfg Config, lock *resourcelock.LeaseLock, fn func(context.Context)) (finished bool, err error) {
	log := cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
	// The elector's context outlives ctx until fn has returned: its end
	// releases the Lease.
	electCtx, stopElecting := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), logr.FromSlogHandler(log.Handler())))
	defer stopElecting()

	var (
		mu       sync.Mutex
		stopping bool          // no fn may start any more
		fnDone   chan struct{} // closed when fn returned; nil if it never started
	)
	// halt stops fn from starting, and returns once a started fn returned.
	halt := func() {
		mu.Lock()
		stopping = true
		d := fnDone
		mu.Unlock()
		if d != nil {
			<-d
		}
	}

	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: cfg.LeaseDuration,
		RenewDeadline: cfg.RenewDeadline,
		RetryPeriod:   cfg.RetryPeriod,
		// Released below, once fn has returned (see the package doc).
		ReleaseOnCancel: false,
		Name:            cfg.Namespace + "/" + cfg.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			// leading ends when the Lease was not renewed in time, or
			// when electCtx ends.
			OnStartedLeading: func(leading context.Context) {
				mu.Lock()
				if stopping {
					mu.Unlock()
					return
				}
				done := make(chan struct{})
				fnDone = done
				mu.Unlock()
				defer close(done)

				fnCtx, cancel := context.WithCancel(leading)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				log.Info("leading: acting")
				fn(fnCtx)
				if leading.Err() == nil && ctx.Err() == nil {
					mu.Lock()
					finished = true
					mu.Unlock()
					log.Info("done acting: releasing the lease")
				} else {
					log.Info("stopped acting")
				}
				// Nothing guarded runs any more: the Lease may go.
				stopElecting()
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(identity string) {
				if identity != cfg.Identity {
					log.Info("another candidate leads", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return false, err // validate() has caught what NewLeaderElector refuses
	}

	elected := make(chan struct{})
	go func() {
		defer close(elected)
		le.Run(electCtx)
	}()
	select {
	case <-ctx.Done():
		// Stop fn first, then the elector: it releases the Lease.
		halt()
		stopElecting()
		<-elected
	case <-elected:
		// The Lease was lost, or fn returned: client-go's Run does not
		// wait for fn.
		halt()
	}
	// Another candidate takes over at once rather than after LeaseDuration.
	if err := release(ctx, cfg, lock); err != nil {
		log.Warn("could not release the lease: the others take over when it expires", "err", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return finished, nil
}

// release marks the Lease free if this candidate still holds it, with the
// record client-go's ReleaseOnCancel writes (leaderelection.go, tryRelease):
// no holder and a lease of one second, so the others acquire it on their
// next try. A conflict is a renewal or another candidate racing: read again.
func release(ctx context.Context, cfg Config, lock *resourcelock.LeaseLock) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.RenewDeadline)
	defer cancel()
	for {
		rec, _, err := lock.Get(ctx)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.HolderIdentity != cfg.Identity {
			return nil
		}
		now := metav1.Now()
		err = lock.Update(ctx, resourcelock.LeaderElectionRecord{
			LeaderTransitions:    rec.LeaderTransitions,
			LeaseDurationSeconds: 1,
			RenewTime:            now,
			AcquireTime:          now,
		})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

func metaOf(cfg Config) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name}
}
