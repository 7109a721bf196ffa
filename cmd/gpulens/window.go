package main

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// parseWindow reads a window length the way PromQL writes durations
// (30m, 36h, 7d, 2w), which is what people type after using Prometheus.
func parseWindow(s string) (time.Duration, error) {
	d, err := model.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 36h, 7d or 2w", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return time.Duration(d), nil
}
