package signals

// Priced is expr, series with a model label (GPUs, allocations, GPU-hours
// of them), each times the price of one GPU-hour of its model: price's,
// a series of the price per model (gpulens serve's, which the analysis
// priced every GPU with), or fallback, a scalar expression, for a model
// price has none for. So a dashboard prices an H100 and an L4 as the
// report does, and a model serve did not price as it always has.
//
// The two sides of "or" carry expr's own labels, so that a series priced
// by price is never priced again by fallback.
func Priced(expr, price, fallback string) string {
	expr = "(" + expr + ")"
	return "(" + GroupLeft(expr, "*", []string{LabelModel}, nil, MaxBy([]string{LabelModel}, price)) +
		" or " + expr + " * " + fallback + ")"
}

// FlatPrice is a price per GPU-hour for the whole fleet: the maximum of a
// recording rule's series (rule), or the scalar variable where the rule
// has none.
func FlatPrice(rule, variable string) string {
	return "scalar(" + Agg("max", nil, rule) + " or vector(" + variable + "))"
}

// Unheld is, per GPU of gpus (GPULabels, value 1), the share of it that
// no allocation of alloc held: 1 less their shares, at least 0 (tenants
// that overcommit a GPU leave none), and all of a GPU nobody held. So a
// time-sliced GPU with one replica taken of four, or a MIG GPU with a
// slice free, has its free part unallocated, as the ledger charges it.
func Unheld(gpus, alloc string) string {
	gpus = "(" + gpus + ")"
	return "(clamp_min(" + GroupLeft(gpus, "-", GPUKey, nil, SumBy(GPUKey, alloc)) + ", 0) or " + gpus + ")"
}

// UnusedOver is, per allocation, the part of what it held over the range
// rng (at step) that it did not use: the sum of alloc less the sum of
// used (both with the allocation's labels, priced or not), at least 0.
// The clamp is on the range's sums, not at each step; the ledger caps
// use hour by hour (fleet.Allocation.UsedGPUHours), so a tenant of a
// shared GPU that used more than its share for an hour and less the next
// hour has less left unused here than in the ledger: within 0.5% on the
// demo week (TestOneMoneyLedger), and not the same figure to the cent. An allocation
// with no utilisation reading has no used series and so nothing unused:
// the ledger charges it as used.
//
// w, where not nil, is the allocations whose use is a window figure (a
// HAMi tenant's: signals/hami TenantUsed): they used w.Weight's sum over
// the range times w.Used, in place of the sum of used.
func UnusedOver(alloc, used, rng, step string, w *WindowUse) string {
	held, usedSum := Subquery(SumOverTime, alloc, rng, step), Subquery(SumOverTime, used, rng, step)
	if w != nil {
		usedSum = "(" + GroupLeft(Subquery(SumOverTime, w.Weight, rng, step), "*", w.Key, nil, "("+w.Used+")") + " or " + usedSum + ")"
	}
	return "clamp_min(" + held + " - " + usedSum + ", 0)"
}

// WindowUse is the allocations of UnusedOver that used, of each step they
// were held, a share of the GPU measured over the whole range, not at
// each step. Used is that share per Key (a subset of alloc's labels);
// Weight is, per allocation (alloc's labels), what one GPU held for a
// step counts: 1, or its price where alloc is priced. The clamp of
// UnusedOver then caps the use at what was held: for a share held alike
// at every step, the range's steps times max(0, held - Used), the
// ledger's held × (1 - min(1, Used / held)).
type WindowUse struct {
	Key          []string
	Weight, Used string
}

// Steps is how many steps a subquery over rng at step evaluates: what
// divides a sum_over_time of one into an average over the whole range,
// including the steps a series was absent.
func Steps(rng, step string) string {
	return Subquery(CountOverTime, "vector(1)", rng, step)
}

// Unpriced is the series of expr (with a model label) that Priced with
// the same price and fallback leaves unknown: their model has no series
// of price, and fallback is NaN. It reads no NaN: VictoriaMetrics drops
// NaN samples and its aggregations skip them, so a NaN priced GPU is
// invisible there; the series here are expr's own. Fallback is known
// where it equals itself, which NaN never does (IEEE 754): that vector
// is empty on Prometheus, and on VictoriaMetrics too, which drops it.
func Unpriced(expr, price, fallback string) string {
	known := "vector(" + fallback + ")"
	return Paren(UnlessOn(Paren(UnlessOn(Paren(expr), []string{LabelModel}, price)), nil, Paren(known+" == "+known)))
}

// KnownOnly is x, dollars by labels (nil: one total), except in each
// group of labels where unpriced (Unpriced series, or a window of them)
// has a series: there nothing, the figure unknown. On Prometheus such a
// sum would read NaN; on VictoriaMetrics, whose sum skips NaN, the priced
// part alone, a smaller figure that reads as the whole. An unknown price
// is no value on both (docs/MONEY.md), never $0 nor a partial sum.
func KnownOnly(x string, labels []string, unpriced string) string {
	return Paren(UnlessOn(Paren(x), labels, Paren(CountBy(labels, unpriced))))
}
