// Package quota advises teams' GPU quotas from what they held: Kueue
// ClusterQueues' nominal quota and borrowing limit per flavor, and
// namespaces' requests.nvidia.com/gpu ResourceQuotas. The measure is GPUs
// held at once, at every step of the window (the plan's per-step lanes),
// so a quota covers the team's p95 with a margin and its peak with
// borrowing, not an average that hides the Monday morning.
package quota
