// Package recommend knows what GPUs can be cut into and what they cost, and
// turns an allocation's measured peaks into the smallest request that still
// fits it: a MIG profile on MIG-capable models, a time-slicing share on the
// others, a dedicated GPU where sharing hurts. Every Recommendation carries
// the change to apply (a strategic-merge patch for the workload and, where
// needed, the device plugin's sharing config) and its monthly dollar effect.
package recommend
