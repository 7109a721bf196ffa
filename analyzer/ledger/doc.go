// Package ledger charges the tenants of every GPU so that the charges and
// the GPU's remainder add up to what the GPU cost, on two bases:
//
//   - allocation: each tenant pays for what it held (its share × the time
//     it held it); the remainder is the GPU's unallocated time.
//   - usage: each tenant pays for what it used (what it held × its
//     utilisation, capped at its share); the remainder is the idle time
//     its tenants held and did not use, and the unallocated time.
//
// On both, for every GPU, the tenants' charges plus the remainder equal
// the GPU's price × the hours its exporter reported it. The ledger is
// computed once per analysis from the fleet.Result: it is a leaf over the
// model and reads neither the store nor the cluster.
//
// The Result holds window aggregates, not hours: the ledger balances per
// GPU over the window, which is the sum of its hours. A tenant's share and
// utilisation are its window averages; where they changed within the
// window the per-hour split differs, the window's totals do not.
//
// Shares by sharing mode (Mode): a whole GPU is 1; a MIG slice is its
// profile's compute share (the analysis's, or internal/mig's catalog where
// the analysis has none); a time-slicing or MPS replica is the share the
// analysis read (1/replicas); a DRA claim's share is the claim's; a HAMi
// tenant's is the larger of its gpucores and gpumem shares
// (fleet.HAMiTenant.HeldShare), and its use the larger of its SM
// utilisation (HAMi's p95) and memory used (p99) over the device's. Tenants that held more than the GPU's hours between them (time
// slices whose shares sum past 1, HAMi limits that overcommit the device,
// a tenant seen while its GPU's exporter was not) are scaled down in
// proportion to what they held (GPU.Scale), so that no GPU charges more
// than it cost and each tenant keeps its part of the whole.
package ledger
