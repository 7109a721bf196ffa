package main

import (
	"fmt"
	"net"
	"time"

	"github.com/alecthomas/units"
)

// Floors and ceilings of the numeric flags. Below the floors the exporter
// would spend its node's CPU on NVML calls (a 1ns interval ran 2,000
// collections in 5 s) or fail every collection; above the ceilings a
// mistyped unit would silently stop the series.
const (
	minCollectInterval = 100 * time.Millisecond
	maxCollectInterval = 24 * time.Hour
	// NVML answers a healthy GPU in well under a millisecond; a timeout
	// below 10ms would report healthy GPUs down.
	minCollectTimeout = 10 * time.Millisecond
	maxCollectTimeout = 5 * time.Minute
	// gRPC's own default is 4 MiB; a smaller limit would fail on any node
	// with a few pods. gRPC sizes are 32-bit.
	minPodResourcesMessage = units.MiB
	maxPodResourcesMessage = 2*units.GiB - 1
)

// checkLimits rejects numeric flags outside their range, naming the flag,
// the value given and the range.
func (cfg *config) checkLimits() error {
	if d := cfg.collectInterval; d < minCollectInterval || d > maxCollectInterval {
		return fmt.Errorf("--collect.interval=%s: must be between %s and %s", d, minCollectInterval, maxCollectInterval)
	}
	if d := cfg.collectTimeout; d < minCollectTimeout || d > maxCollectTimeout {
		return fmt.Errorf("--collect.timeout=%s: must be between %s and %s", d, minCollectTimeout, maxCollectTimeout)
	}
	if b := cfg.podResourcesMaxMessage; b < minPodResourcesMessage || b > maxPodResourcesMessage {
		return fmt.Errorf("--kubelet.pod-resources-max-message-size=%s: must be between %s and %s", b, minPodResourcesMessage, units.Base2Bytes(maxPodResourcesMessage))
	}
	if a := cfg.healthAddress; a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("--web.health-address=%q: not host:port (e.g. :9847): %v", a, err)
		}
	}
	return nil
}
