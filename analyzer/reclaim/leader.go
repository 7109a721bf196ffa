package reclaim

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lead runs run only while this replica holds the coordination.k8s.io
// Lease namespace/name, so that two replicas never both act: run's ctx
// ends when the lease is lost, and Lead returns then (the process should
// exit and start again, as kube-controller-manager does). The durations
// are client-go's documented defaults for controllers (15s, 10s, 2s).
// This is the one place leader election is done; the shared wrapper
// (internal/leaderlease) can take its place without other changes.
func Lead(ctx context.Context, c kubernetes.Interface, namespace, name, identity string, run func(ctx context.Context)) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     c.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: run, OnStoppedLeading: func() {}},
		Name:      name,
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	return nil
}
