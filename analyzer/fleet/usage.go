package fleet

// Usage is each allocation's use at every step of the window, as the
// consolidation plan replays it (analyzer/plan): folded out of the
// analysis's own allocation, utilization, memory and device memory passes
// where Sharding.Lanes asks for it, so the plan reads the window no
// second time.
type Usage struct {
	// Steps is the window's steps (Window.Grid); step i of an allocation's
	// arrays is step First+i of the window.
	Steps       int
	Allocations []AllocationUsage
}

// AllocationUsage is one allocation's use from the first to the last step
// it was held at. Util and Mem are 0 at the steps between where it was
// not held; where held, a value the store lacked is 0 as well.
type AllocationUsage struct {
	AllocationKey
	First int
	// Shares are the allocation's share of its GPU (the allocation
	// signal, max by the allocation's key) in runs of steps of one value:
	// the steps it was held at.
	Shares []ShareRun
	// Util is its utilization (of its share; above 1 where a time-sliced
	// tenant uses what co-tenants leave), at least 0.
	Util []float32
	// Mem is its device memory in bytes, at least 0, shared out so that a
	// non-MIG GPU's tenants add up to what the device reported at each
	// step it reported: memory no tenant was charged with goes to the
	// tenants by share, and tenants charged with more than the device
	// held are scaled down to it (dcgm-exporter copies the device's
	// figure to every tenant of a time-sliced GPU). A MIG slice's memory
	// is its own.
	Mem []float32
}

// ShareRun is N steps from step From (of the window) held at share Share.
type ShareRun struct {
	From, N int
	Share   float32
}
