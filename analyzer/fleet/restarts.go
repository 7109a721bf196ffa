package fleet

import "time"

// Restart is one restart of an allocation's container, as
// kube-state-metrics counted it (kube_pod_container_status_restarts_total).
type Restart struct {
	// Time is the first step the restart was counted at: the container
	// died within the step before it.
	Time time.Time
	// GPUMemoryBytes is the memory in use on the allocation's GPU just
	// before: at the step before Time, the container's last alive.
	GPUMemoryBytes float64
}

// Termination is what kube-state-metrics said of a container's ends in
// the window.
type Termination struct {
	// Reasons are every reason given for an end (last terminated or
	// terminated: Error, OOMKilled, Completed...), sorted.
	Reasons []string `json:",omitempty"`
	// ExitCode is the last end's exit code where HasExitCode: the series
	// is kube-state-metrics v2.7.0's and later.
	ExitCode    int  `json:",omitempty"`
	HasExitCode bool `json:",omitempty"`
}
