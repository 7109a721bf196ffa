package fleet

// Attributions, the values of GPU.Attribution.
const (
	AttributionPerTenant = "per-tenant"
	// AttributionPerProcess is per-tenant, from dcgm-exporter's 2025
	// per-process series.
	AttributionPerProcess = "per-process"
	AttributionCopies     = "device-copies"
	AttributionOneTenant  = "one-tenant"
)
