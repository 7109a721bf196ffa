package query

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals/native"
)

// instantOnly is a source without range queries: the embedded store with
// its QueryRange hidden.
type instantOnly struct{ source.Source }

// TestAnalyzeRequiresRangeQueries: the analysis reads every signal with
// range queries (passQueries), so a source without them is refused with an
// error that names it, rather than analysed some other way.
func TestAnalyzeRequiresRangeQueries(t *testing.T) {
	src := buildFleet(t).src
	if _, ok := any(instantOnly{src}).(source.RangeQuerier); ok {
		t.Fatal("instantOnly answers range queries: the test proves nothing")
	}
	res, err := AnalyzeSharded(context.Background(), instantOnly{src}, native.Schema{}, window, Sharding{Lanes: true})
	want := src.Describe() + " has no range queries"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("result %v, error %v; want an error saying %q", res, err, want)
	}
	if _, err := AnalyzeSharded(context.Background(), src, native.Schema{}, window, Sharding{Lanes: true}); err != nil {
		t.Fatalf("the same store with its range queries: %v", err)
	}
}
