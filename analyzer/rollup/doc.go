// Package rollup adds an analysis's allocations up into GPU-hours and
// money: per team (Teams), and the figures a cluster's summary sums
// (Hours, Unpriced, Change). The analysis builds the teams once
// (pipeline.Analysis.Teams), beside the ledger it charges them from; the
// report, serve's series and the dashboards' team series render them.
//
// It links the fleet's results, the ledger and the prices, and nothing
// that reads a store or renders.
package rollup
