package source

import (
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
)

// readOnlyAppender refuses every write. It implements every method rather
// than embedding the interface so that a method added upstream fails to
// compile here instead of panicking at run time.
type readOnlyAppender struct{}

var _ storage.Appender = readOnlyAppender{}

func (readOnlyAppender) Append(storage.SeriesRef, labels.Labels, int64, float64) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) AppendExemplar(storage.SeriesRef, labels.Labels, exemplar.Exemplar) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) AppendHistogram(storage.SeriesRef, labels.Labels, int64, *histogram.Histogram, *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) AppendHistogramSTZeroSample(storage.SeriesRef, labels.Labels, int64, int64, *histogram.Histogram, *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) UpdateMetadata(storage.SeriesRef, labels.Labels, metadata.Metadata) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) AppendSTZeroSample(storage.SeriesRef, labels.Labels, int64, int64) (storage.SeriesRef, error) {
	return 0, ErrReadOnly
}

func (readOnlyAppender) SetOptions(*storage.AppendOptions) {}

func (readOnlyAppender) Commit() error { return ErrReadOnly }

func (readOnlyAppender) Rollback() error { return nil }
