// Package ledger charges the tenants of every GPU so that the charges and
// the GPU's remainder add up to what the GPU cost, hour by hour, on two
// bases:
//
//   - allocation: each tenant pays for what it held (its share × the time
//     it held it); the remainder is the GPU's unallocated time.
//   - usage: each tenant pays for what it used (what it held × its
//     utilisation, capped at its share); the remainder is the idle time
//     its tenants held and did not use, and the unallocated time.
//
// On both, for every GPU and every clock hour (UTC) its exporter reported
// it in, the tenants' charges plus the remainder equal the GPU's price ×
// the part of the hour it was reported (GPU.Hourly); the GPU's window
// figures are the sums of its hours. The ledger is computed once per
// analysis from the fleet.Result: it is a leaf over the model and reads
// neither the store nor the cluster.
//
// The hours come from the analysis's own passes (fleet.GPU.ReportedByHour,
// fleet.AllocationHours, folded with Sharding.Lanes: no second read of the
// window). A step at t stands for (t−Step, t] and belongs to the hour that
// interval starts in; an hour's time is its reported steps × Step, so with
// a step that does not divide the hour (7m) one hour may hold 63 minutes
// and the next 56, and the window's hours still add up to its steps.
// Where the analysis folded no hours (a source without range queries) a
// GPU's one period is the window, from the window aggregates.
//
// Shares by sharing mode (Mode): a whole GPU is 1; a MIG slice is its
// profile's compute share (the analysis's, or the price catalog's,
// price.ProfileShare, where the analysis has none); a time-slicing or MPS replica is the share the
// analysis read (1/replicas); a DRA claim's share is the claim's; a HAMi
// tenant's is the larger of its gpucores and gpumem shares
// (fleet.HAMiTenant.HeldShare), and its use the larger of its SM
// utilisation (HAMi's p95) and memory used (p99) over the device's.
//
// An hour's use is what the allocation held in it × its average
// utilisation over the hour's steps with a reading, capped at 1 (its
// share), the window ledger's rule hour by hour; an hour without a reading
// takes the allocation's over the window; an allocation with no reading at
// all is charged on the usage basis for all it held (no reading, no
// discount).
//
// HAMi's series are read as window figures (query.ReadHAMi), not hour by
// hour. A HAMi tenant the exporter saw is charged its HAMi share over the
// hours the exporter saw it; one it did not see is charged its window
// share (HeldShare × the part of the window HAMi read it) spread evenly
// over the hours its GPU reported, in proportion to each hour's reported
// time; and in every hour a HAMi tenant's use is its window's. Its hourly
// charges are right in sum, not in when.
//
// Tenants that held more than the GPU's time in an hour between them (time
// slices whose shares sum past 1, HAMi limits that overcommit the device,
// a tenant seen while its GPU's exporter was not) are scaled down in that
// hour in proportion to what they held (Hour.Scale), so that no GPU
// charges more than it cost in any hour and each tenant keeps its part of
// the whole; GPU.Scale is what they were charged over what they held.
package ledger
