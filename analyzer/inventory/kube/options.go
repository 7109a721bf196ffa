package kube

import (
	"log/slog"
	"time"
)

// Defaults applied by Read and NewClient to zero Options fields.
const (
	DefaultTeamLabel = "team"
	DefaultTimeout   = 60 * time.Second
)

// DefaultDevicePluginConfigMaps are the ConfigMaps the GPU Operator's
// documentation uses for the device plugin config. They are read when
// present; their absence is normal (no sharing configured) and not reported.
var DefaultDevicePluginConfigMaps = []string{
	"gpu-operator/time-slicing-config",
	"gpu-operator/device-plugin-config",
}

// Options configure how the inventory reaches and reads the cluster.
type Options struct {
	// Kubeconfig is a kubeconfig path. Empty means: the in-cluster service
	// account when running in a pod, else $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context selects a kubeconfig context; empty means the current one.
	Context string
	// TeamLabel is the namespace label naming the owning team.
	TeamLabel string
	// DevicePluginConfigMaps are "namespace/name" references to the NVIDIA
	// device plugin config ConfigMaps. When set, a missing one is reported.
	DevicePluginConfigMaps []string
	// Timeout bounds a whole Read and each API request of NewClient's
	// client, so an unreachable API server costs at most this long.
	Timeout time.Duration
	Logger  *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.TeamLabel == "" {
		o.TeamLabel = DefaultTeamLabel
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// configMaps returns the ConfigMaps to read and whether they are the
// defaults, whose absence is expected.
func (o Options) configMaps() (refs []string, defaults bool) {
	if len(o.DevicePluginConfigMaps) > 0 {
		return o.DevicePluginConfigMaps, false
	}
	return DefaultDevicePluginConfigMaps, true
}
