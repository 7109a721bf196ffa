package source

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// Source evaluates PromQL. Implementations are safe for concurrent use.
type Source interface {
	// Query evaluates an instant query at ts. A scalar result is returned as
	// a vector of one sample without labels, so callers handle one shape.
	Query(ctx context.Context, q string, ts time.Time) (model.Vector, error)
	// MetricNames lists the metric names that have samples in [start, end];
	// schema detection uses it to tell which exporter produced the data.
	MetricNames(ctx context.Context, start, end time.Time) ([]string, error)
	// Describe is a human description for logs and errors, such as
	// "prometheus at http://prometheus:9090" or "embedded TSDB at /data".
	Describe() string
	Close() error
}

// toVector normalises an API result to a vector. Matrices and strings are
// refused: the analyzer only issues instant queries that aggregate inside the
// engine, so anything else is a bug in the query, not data to guess at.
func toVector(v model.Value) (model.Vector, error) {
	switch r := v.(type) {
	case model.Vector:
		return r, nil
	case *model.Scalar:
		return model.Vector{{Metric: model.Metric{}, Value: r.Value, Timestamp: r.Timestamp}}, nil
	case nil:
		return model.Vector{}, nil
	default:
		return nil, fmt.Errorf("unexpected result type %s, want vector or scalar", v.Type())
	}
}
