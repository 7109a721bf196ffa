package signals

// Expressions made of a Schema's signals, for every reader that needs
// them: written once here, whatever the exporter.

// Answering is 1 per physical GPU that reports and is not lost (Health's
// Down), with GPULabels: a lost GPU is neither allocated nor spare.
func Answering(s Schema) string {
	down := s.Health(Over{Range: "1h", Step: "1m", Apply: func(fn Fn, e string) string { return Subquery(fn, e, "1h", "1m") }}).Down
	return "(" + s.GPU() + ") unless on (" + LabelNode + ", " + LabelUUID + ") (" + down + " == 1)"
}

// Used is each allocation's share of its physical GPU times its measured
// use of that share (Utilization, a fraction of the allocation): the
// fraction of the physical GPU it used, with AllocationLabels.
func Used(s Schema) string { return UsedOf(s.Allocation(), s.Utilization()) }

// UsedOf is Used of an allocation and a utilisation expression given
// apart: a schema's own, or their recorded series.
func UsedOf(allocation, utilization string) string {
	return "(" + allocation + ") * ignoring (" + LabelSharing + ") group_left () (" + utilization + ")"
}
