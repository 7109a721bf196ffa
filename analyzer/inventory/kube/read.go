package kube

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// step reads one kind of object. It returns a commit function that stores
// what it read, so a list that fails half-way leaves no partial data.
type step struct {
	resource string
	// impact says in words what a consumer loses when the step fails.
	impact string
	read   func(context.Context, *reader) (commit func(), err error)
}

// The order matters: ReplicaSets and Jobs are indexed before pods so that
// owners resolve in a single pass over the pods.
var steps = []step{
	{"namespaces", "teams fall back to namespace names", readNamespaces},
	{"nodes", "node GPU facts come from metric labels only", readNodes},
	{"replicasets", "Deployments inferred from pod-template-hash", readReplicaSets},
	{"jobs", "CronJobs inferred from job names", readJobs},
	{"pods", "workloads inferred from pod names", readPods},
	{"resourcequotas", "GPU quota check skipped", readQuotas},
	{"poddisruptionbudgets", "disruption budgets unknown", readPDBs},
	{"priorityclasses", "pod priorities unknown", readPriorityClasses},
	{"kueue", "Kueue quota advice skipped", readKueue},
	{"resourceclaimtemplates", "DRA workloads' GPU requests unknown: no claim template advice", readClaimTemplates},
	{"resourceclaims", "DRA claims unknown: shared claims not told apart", readClaims},
}

// reader carries one Read's state between steps.
type reader struct {
	c   kubernetes.Interface
	o   Options
	inv *inventory.Inventory
	// replicaSets and jobs map each ReplicaSet and Job to its own
	// controller; nil when the list could not be read.
	replicaSets map[objectKey]ownerRef
	jobs        map[objectKey]ownerRef
}

// Read takes a snapshot of the cluster through c. It never fails: whatever
// cannot be read is listed in Skipped, and when the API server cannot be
// reached at all the result is Unavailable.
func Read(ctx context.Context, c kubernetes.Interface, o Options) *inventory.Inventory {
	o = o.withDefaults()
	if c == nil {
		return inventory.Unavailable("kubernetes: no client configured")
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	start := time.Now()
	r := &reader{c: c, o: o, inv: inventory.Empty()}
	r.inv.Available = true
	reached := false
	for _, s := range steps {
		t := time.Now()
		commit, err := s.read(ctx, r)
		if err == nil {
			commit()
			reached = true
			o.Logger.Debug("inventory read", "resource", s.resource, "duration", time.Since(t))
			continue
		}
		if !reached && !isAPIStatus(err) {
			// Nothing has answered yet and this was not an answer either:
			// every further request would wait out the same failure.
			o.Logger.Warn("kubernetes API unreachable", "err", err)
			inv := inventory.Unavailable("kubernetes API unreachable: " + err.Error())
			inv.ReadAt = start
			return inv
		}
		reached = reached || isAPIStatus(err)
		r.skip(s.resource, err, s.impact)
	}
	r.readSharing(ctx)
	r.inv.IndexClaimUsers()
	r.inv.ReadAt = start
	o.Logger.Info("inventory read", "pods", len(r.inv.Pods), "nodes", len(r.inv.Nodes),
		"namespaces", len(r.inv.Namespaces), "skipped", len(r.inv.Skipped), "duration", time.Since(start))
	return r.inv
}

func (r *reader) skip(what string, err error, impact string) {
	r.o.Logger.Warn("inventory: cannot read", "resource", what, "err", err)
	msg := what + ": " + reason(err)
	if impact != "" {
		msg += " (" + impact + ")"
	}
	r.inv.Skipped = append(r.inv.Skipped, msg)
}

// reason shortens the errors an operator can act on to one word and
// keeps the rest verbatim; the full error goes to the log.
func reason(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsNotFound(err):
		return "not found"
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	default:
		return err.Error()
	}
}

// isAPIStatus reports whether err is an answer from the API server (as
// opposed to a transport failure or an expired deadline).
func isAPIStatus(err error) bool {
	var s apierrors.APIStatus
	return errors.As(err, &s)
}
