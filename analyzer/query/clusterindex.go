package query

import (
	"context"
	"regexp"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// unlabelled answers ClusterValues from the store's index where no series
// of names carries label in w: a store of one cluster, which is all a
// store without a cluster label is, answers [""] where its index has a
// series of names in w and nothing otherwise, without reading a sample.
// Reading them costs a pass over every GPU's presence series (about 0.3
// CPU-s a week at 1,000 GPUs, several at 10,000), for an answer every
// caller reads as one cluster either way. ok is false where the index
// cannot tell (a source without raw samples, remote read, which lists no
// label values) or some series carries label: then the samples tell which
// clusters have data in w. The index is kept by block, so a series it
// lists may have no sample in w itself; [""] and nothing are one cluster
// to every caller (pipeline.Run, session).
func unlabelled(ctx context.Context, src source.Source, names []string, w fleet.Window, label string) ([]string, bool) {
	rr, ok := src.(source.RawReader)
	if !ok {
		return nil, false
	}
	store, ok := rr.RawSamples()
	if !ok {
		return nil, false
	}
	q, err := store.Querier(w.Start.UnixMilli(), w.End.UnixMilli())
	if err != nil {
		return nil, false
	}
	defer q.Close()
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	m, err := labels.NewMatcher(labels.MatchRegexp, model.MetricNameLabel, strings.Join(quoted, "|"))
	if err != nil {
		return nil, false
	}
	one := &storage.LabelHints{Limit: 1}
	if vals, _, err := q.LabelValues(ctx, label, one, m); err != nil || len(vals) > 0 {
		return nil, false
	}
	present, _, err := q.LabelValues(ctx, model.MetricNameLabel, one, m)
	if err != nil {
		return nil, false
	}
	if len(present) == 0 {
		return nil, true
	}
	return []string{""}, true
}
