// Package price knows what GPUs cost and what they can be cut into: the
// price table (the embedded prices.yaml under --prices overrides, with
// node prices and pool discounts), the catalog of models and their MIG
// geometry (from internal/mig), vGPU types as shares of their boards, and
// the share of a GPU an allocation is billed for.
//
// It is a leaf of the analysis: the ledger, the report, the plan, the
// findings and the recommendations all price through it, so that money
// reads the same everywhere and none of them links another to get a price.
package price
