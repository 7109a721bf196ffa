// Package report builds the weekly per-team GPU utilization report from a
// pipeline.Analysis and renders it as a table, Markdown, a self-contained
// HTML page with charts, JSON or CSV.
//
// The figures are defined once, in Build, and every renderer prints the
// same Report, so the formats cannot disagree. Definitions:
//   - allocated GPU-hours: the allocation's share of a GPU × time held;
//   - used GPU-hours: allocated × average utilization, capped at 1, so used
//     never exceeds allocated (a time-sliced tenant's utilization is of the
//     whole device and can read above its share);
//   - unmeasured GPU-hours: allocated GPU-hours without a utilization sample,
//     counted neither as used nor as idle: unknown, not idle;
//   - idle GPU-hours: allocated − used − unmeasured;
//   - cost: GPU-hours × the model's price per GPU-hour; waste: idle
//     GPU-hours × price, plus, for the cluster, unallocated capacity.
//
// Team figures sum to the cluster's allocated figures exactly (the cluster's
// are computed as their sum). Output is deterministic: everything is sorted
// and the only times printed are the window's.
//
// Where the store holds several clusters (its series carry a cluster
// label), a team is of one cluster, and the teams, the fleet by model, the
// recommendations and the findings name their cluster: a Cluster column in
// the tables, a cluster field in the JSON, a trailing cluster column in
// the CSV (see CSVHeader). The summary is then the fleet's, and Clusters
// has each cluster's, which add up to it. A store of one cluster gives the
// report it gave before clusters were known, byte for byte.
package report
