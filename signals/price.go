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
