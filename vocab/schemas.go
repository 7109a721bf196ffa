package vocab

// The schemas gpulens reads, as --schema names them: gpulens's own
// exporter (docs/METRICS.md) and NVIDIA's dcgm-exporter. signals/native
// and signals/dcgm write their PromQL; the analysis only asks which one
// it read.
const (
	SchemaNative = "native"
	SchemaDCGM   = "dcgm-exporter"
)

// Optional signals: what a schema's exporter may be configured without
// (signals.OptionalSignals), keyed so that the analysis can say which
// are missing without linking the schema.
const (
	SignalThermal = "thermal"
)

// XIDFallenOffBus is XID 79, the GPU has fallen off the bus
// (https://docs.nvidia.com/deploy/xid-errors/index.html): gone until it
// is reset. In dcgm-exporter, which has no up signal, it is the closest
// thing to up 0.
const XIDFallenOffBus = 79
