package signals

import (
	"strconv"

	"github.com/gpulens/gpulens/vocab"
)

// ReclaimActionReclaim is the action label of a reclaim (reclaim.Reclaim);
// ReclaimResultSuccess and ReclaimResultDryRun the result labels of one
// done and of one a dry run would have done.
const (
	ReclaimActionReclaim = "reclaim"
	ReclaimResultSuccess = "success"
	ReclaimResultDryRun  = "dry-run"
)

// ReclaimRan is how many of the reclaimer's cycle series have a sample in
// the trailing range rng: none (an empty answer) says it did not run,
// which is not a run that reclaimed nothing.
func ReclaimRan(rng string) string {
	return Count(Range(LastOverTime, vocab.SeriesReclaimCycles, rng))
}

// ReclaimActions is how many reclaims of the result ended in rng, over
// every reclaimer the store scraped.
func ReclaimActions(rng, result string) string {
	sel := vocab.SeriesReclaimActions + "{action=" + strconv.Quote(ReclaimActionReclaim) + ",result=" + strconv.Quote(result) + "}"
	return Sum(Range(Increase, sel, rng))
}

// ReclaimGPUHours and ReclaimUSD are the GPU-hours the reclaimed
// workloads released in rng, and what those would have cost.
func ReclaimGPUHours(rng string) string {
	return Sum(Range(Increase, vocab.SeriesReclaimGPUHours, rng))
}
func ReclaimUSD(rng string) string { return Sum(Range(Increase, vocab.SeriesReclaimUSD, rng)) }

// MemoryActivity is each GPU's memory activity (the fraction of time its
// DRAM was read or written: DCGM's DRAM_ACTIVE, gpulens-exporter's GPM
// ratio) averaged over the trailing range rng at resolution step: whole
// GPUs by uuid, and MIG instances by uuid and gpu_instance, of the
// instance. The reclaimer's second reading of idle, beside utilisation:
// a workload that only moves memory is not idle.
func MemoryActivity(d Device, rng, step string) (whole, mig string) {
	whole = Subquery(AvgOverTime, MaxBy([]string{LabelUUID}, d.Profiling(ProfDRAMActive)), rng, step)
	mig = Subquery(AvgOverTime, MaxBy([]string{LabelUUID, LabelGPUInstance}, d.MIGProfiling(ProfDRAMActive)), rng, step)
	return whole, mig
}
