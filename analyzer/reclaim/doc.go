// Package reclaim is the guarded idle-GPU reclaimer (gpulens reclaim):
// from the analysis serve makes, it scales to zero the Deployments and
// StatefulSets, and suspends the Jobs and CronJobs, whose GPUs have been
// idle past a policy, in namespaces that opted in, after announcing it
// (an Event and an Alertmanager alert) for a grace period that activity
// cancels. Every action is recorded in the workload's annotations and
// undone from them (Undo).
//
// Every guard fails closed: a workload is touched only when the analysis
// succeeded, whole, on current data of every node its pods run on, and
// says it was idle for the full window; anything the reclaimer cannot
// establish is a skip with its reason. Dry run is the default.
//
// One purpose per file: policy.go (the config), names.go (the labels,
// annotations and Event reasons on the cluster), candidates.go (the
// decision, pure), actuator.go (the API calls), undo.go, controller.go
// (one cycle), metrics.go, leader.go (one leader per cluster).
package reclaim
