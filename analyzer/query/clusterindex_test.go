package query

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// TestClusterValuesFromTheIndex: a store whose series carry no cluster
// label is one cluster, told by its index without reading a sample (the
// source below fails every read of samples); a store where some series
// carry it is read, since only the samples tell which clusters have data
// in the window.
func TestClusterValuesFromTheIndex(t *testing.T) {
	for _, tc := range []struct {
		name     string
		clusters []string // each series' cluster label, "" for none
		end      int      // the window's end, in minutes; it starts 60 before
		want     []string
		wantRead bool
	}{
		{name: "no cluster label", clusters: []string{"", ""}, end: 60, want: []string{""}},
		{name: "no series in the window", clusters: []string{""}, end: 600, want: nil},
		{name: "a labelled series", clusters: []string{"", "us"}, end: 60, wantRead: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t)
			for i, c := range tc.clusters {
				var extra []string
				if c != "" {
					extra = []string{"cluster", c}
				}
				f.series(t, gpuLabels("gpulens_gpu_info", "n", "GPU-"+string(rune('a'+i)), "m", extra...), 1, 60, constant(1))
			}
			src := noSamples{f.commit(t)}
			w := fleet.Window{Start: minute(tc.end - 60), End: minute(tc.end), Step: time.Minute}
			got, err := ClusterValues(context.Background(), src, native.Schema{}, w, "cluster")
			if tc.wantRead {
				if err == nil || !strings.Contains(err.Error(), errSampleRead.Error()) {
					t.Fatalf("error %v, want the samples read (%v)", err, errSampleRead)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("values %q, want %q", got, tc.want)
			}
		})
	}
}

var errSampleRead = errors.New("a sample was read")

// noSamples is a source whose index can be listed but whose samples
// cannot be read, by the engine or raw.
type noSamples struct{ source.Source }

func (n noSamples) Query(context.Context, string, time.Time) (model.Vector, error) {
	return nil, errSampleRead
}

func (n noSamples) RawSamples() (source.RawStore, bool) {
	st, ok := n.Source.(source.RawReader).RawSamples()
	st.Queryable = selectless{st.Queryable}
	return st, ok
}

type selectless struct{ q storage.Queryable }

func (s selectless) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := s.q.Querier(mint, maxt)
	return selectlessQuerier{q}, err
}

type selectlessQuerier struct{ storage.Querier }

func (selectlessQuerier) Select(context.Context, bool, *storage.SelectHints, ...*labels.Matcher) storage.SeriesSet {
	return storage.ErrSeriesSet(errSampleRead)
}
