package source

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// TestWrapRawSamples: a wrapping source's raw reads see what the store
// holds, through samples and through chunks alike (scoping is the
// reader's: query.Scope), and each querier opened is counted.
func TestWrapRawSamples(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{})
	for _, c := range []string{"a", "b"} {
		appendSeries(t, e, labels.FromStrings("__name__", "util", "cluster", c), t0, t0.Add(time.Hour), constant(1))
	}
	opened := 0
	st, ok := WrapRawSamples(e, func() { opened++ })
	if !ok {
		t.Fatal("the embedded store serves raw samples")
	}
	mint, maxt := t0.UnixMilli(), t0.Add(time.Hour).UnixMilli()
	util := labels.MustNewMatcher(labels.MatchEqual, "__name__", "util")
	var got []string
	q, err := st.Querier(mint, maxt)
	if err != nil {
		t.Fatal(err)
	}
	for set := q.Select(context.Background(), false, nil, util); set.Next(); {
		got = append(got, "samples "+set.At().Labels().Get("cluster"))
	}
	_ = q.Close()
	cq, ok := st.Queryable.(storage.ChunkQueryable)
	if !ok {
		t.Fatal("the wrapped store lost the TSDB's chunks")
	}
	c, err := cq.ChunkQuerier(mint, maxt)
	if err != nil {
		t.Fatal(err)
	}
	for set := c.Select(context.Background(), false, nil, util); set.Next(); {
		got = append(got, "chunks "+set.At().Labels().Get("cluster"))
	}
	_ = c.Close()
	if want := []string{"samples a", "samples b", "chunks a", "chunks b"}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if opened != 2 {
		t.Errorf("%d queriers counted, want 2", opened)
	}
}
