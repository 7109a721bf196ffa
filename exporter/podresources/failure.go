package podresources

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpulens/gpulens/signals/native"
)

// Reasons a refresh fails, the values of the reason label of
// gpulens_exporter_podresources_refresh_failures_total.
const (
	// ReasonUnreachable: no kubelet on the socket (missing, refused,
	// connection dropped).
	ReasonUnreachable = "unreachable"
	// ReasonTimeout: the kubelet did not answer within the timeout.
	ReasonTimeout = "timeout"
	// ReasonTooLarge: an answer exceeded the gRPC receive limit
	// (--kubelet.pod-resources-max-message-size).
	ReasonTooLarge = "too_large"
	// ReasonRateLimited: the kubelet's own pod-resources rate limit
	// refused the call (RESOURCE_EXHAUSTED from the server).
	ReasonRateLimited = "rate_limited"
	// ReasonError: any other answer (permission denied, internal, ...).
	ReasonError = "error"
)

var reasons = []string{ReasonUnreachable, ReasonTimeout, ReasonTooLarge, ReasonRateLimited, ReasonError}

// errTooLarge marks an answer over the receive limit.
var errTooLarge = errors.New("answer too large")

// Reason classifies a refresh error.
func Reason(err error) string {
	if errors.Is(err, errTooLarge) {
		return ReasonTooLarge
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return ReasonUnreachable
	case codes.DeadlineExceeded:
		return ReasonTimeout
	case codes.ResourceExhausted:
		return ReasonRateLimited
	}
	return ReasonError
}

// failureMessage is the warning logged when an outage of the given reason
// starts.
func failureMessage(reason string) string {
	switch reason {
	case ReasonUnreachable:
		return "kubelet pod-resources API unreachable"
	case ReasonTimeout:
		return "kubelet pod-resources API unreachable: no answer within the timeout"
	case ReasonTooLarge:
		return "kubelet pod-resources answer too large for --kubelet.pod-resources-max-message-size"
	case ReasonRateLimited:
		return "kubelet pod-resources API rate-limited the exporter"
	}
	return "kubelet pod-resources API failed"
}

// callError wraps the error of one RPC; an answer over the receive limit
// says so, since gRPC reports it as RESOURCE_EXHAUSTED, which the kubelet's
// rate limiter also uses.
func (c *Client) callError(rpc string, err error) error {
	// gRPC's client-side check: "grpc: received message larger than max
	// (N vs. M)".
	if status.Code(err) == codes.ResourceExhausted && strings.Contains(status.Convert(err).Message(), "larger than max") {
		return fmt.Errorf("pod-resources %s on %s: %w: over the %d-byte limit of --kubelet.pod-resources-max-message-size: %w",
			rpc, c.target, errTooLarge, c.opts.MaxRecvBytes, err)
	}
	return fmt.Errorf("pod-resources %s on %s: %w", rpc, c.target, err)
}

// clientMetrics are the client's own series, read live at scrape time.
type clientMetrics struct {
	failures *prometheus.CounterVec
}

func newClientMetrics() *clientMetrics {
	m := &clientMetrics{failures: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: native.ExporterPodResourcesRefreshFailures,
		Help: "Failed refreshes from the kubelet pod-resources API by reason (unreachable, timeout, too_large, rate_limited, error); each one drops the attribution until the next success.",
	}, []string{"reason"})}
	// Every reason from the start, so that increase() sees the first one.
	for _, r := range reasons {
		m.failures.WithLabelValues(r)
	}
	return m
}

var descParseErrors = prometheus.NewDesc(native.ExporterPodResourcesParseErrorsTotal,
	"GPU device IDs from the kubelet that could not be parsed and were skipped (their GPUs are not attributed).", nil, nil)

// Describe implements prometheus.Collector: the client's failure counters.
func (c *Client) Describe(ch chan<- *prometheus.Desc) {
	c.metrics.failures.Describe(ch)
	ch <- descParseErrors
}

// Collect implements prometheus.Collector.
func (c *Client) Collect(ch chan<- prometheus.Metric) {
	c.metrics.failures.Collect(ch)
	ch <- prometheus.MustNewConstMetric(descParseErrors, prometheus.CounterValue, float64(c.ParseErrors()))
}
