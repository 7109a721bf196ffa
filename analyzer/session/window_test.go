package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// firstSampleSource is a store whose first sample is at first.
type firstSampleSource struct{ first time.Time }

func (f firstSampleSource) Query(context.Context, string, time.Time) (model.Vector, error) {
	return nil, nil
}
func (f firstSampleSource) MetricNames(context.Context, time.Time, time.Time) ([]string, error) {
	return nil, nil
}
func (f firstSampleSource) Describe() string { return "a store from " + f.first.String() }
func (f firstSampleSource) Close() error     { return nil }
func (f firstSampleSource) FirstSample(_ context.Context, start, end time.Time, _ time.Duration) (time.Time, bool, error) {
	if f.first.After(end) {
		return time.Time{}, false, nil
	}
	if f.first.Before(start) {
		return start, true, nil
	}
	return f.first, true, nil
}

// The window starts at the store's first sample, on the grid of steps
// ending at End, so that a --since of ten years over two days of data
// reads two days; its guards see the window that is read.
func TestWindowStartsAtTheFirstSample(t *testing.T) {
	end := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	twoDays := firstSampleSource{first: end.Add(-2*day + 30*time.Second)}
	for _, tc := range []struct {
		name      string
		src       firstSampleSource
		since     time.Duration
		step      time.Duration
		maxWindow time.Duration
		start     time.Time // want
		input     string    // the InputError's input, when refused
	}{
		{"ten years over two days", twoDays, 3650 * day, time.Minute, 0, end.Add(-2 * day), ""},
		{"a week over two days", twoDays, 7 * day, time.Minute, 0, end.Add(-2 * day), ""},
		{"data before the window", firstSampleSource{first: end.Add(-30 * day)}, 7 * day, time.Minute, 0, end.Add(-7 * day), ""},
		{"no data in the window", firstSampleSource{first: end.Add(day)}, 7 * day, time.Minute, 0, end.Add(-7 * day), ""},
		{"odd step", twoDays, 3650 * day, 7 * time.Minute, 0, end.Add(-412 * 7 * time.Minute), ""},
		{"over --max-window", firstSampleSource{first: end.Add(-500 * day)}, 3650 * day, time.Hour, 400 * day, time.Time{}, InputMaxWindow},
		{"ten years over two days, under --max-window", twoDays, 3650 * day, time.Minute, 30 * day, end.Add(-2 * day), ""},
		{"too many steps", twoDays, 7 * day, time.Second, 0, time.Time{}, InputStep},
		{"too many steps asked, few read", twoDays, 3650 * day, 5 * time.Second, 0, end.Add(-2*day + 25*time.Second), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(context.Background(), tc.src, Config{Start: end.Add(-tc.since), End: end, Step: tc.step, MaxWindow: tc.maxWindow, NoKubernetes: "test", Schema: "native"})
			if tc.input != "" {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Input != tc.input {
					t.Fatalf("err %v, want an InputError for %s", err, tc.input)
				}
				if !strings.Contains(err.Error(), "--"+tc.input) && !strings.Contains(err.Error(), "--step") {
					t.Errorf("the error names no flag: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.window.Start.Equal(tc.start) || !s.window.End.Equal(end) {
				t.Errorf("window %s to %s, want %s to %s", s.window.Start, s.window.End, tc.start, end)
			}
			if s.window.End.Sub(s.window.Start)%tc.step != 0 {
				t.Errorf("window %s is not whole steps of %s", s.window.End.Sub(s.window.Start), tc.step)
			}
		})
	}
}
