package promdur

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// TestFormatIsModelDuration: the queries were written with
// model.Duration's form before this package held it, and a changed form
// would change every query's text (and what the query-length tests
// measure), so whole seconds must read exactly as model.Duration reads.
func TestFormatIsModelDuration(t *testing.T) {
	for _, d := range []time.Duration{
		0, time.Second, 59 * time.Second, 90 * time.Second, time.Minute, 5 * time.Minute,
		time.Hour + time.Second, 24 * time.Hour, 7 * 24 * time.Hour, 90 * 24 * time.Hour,
		365 * 24 * time.Hour, 366*24*time.Hour + 3*time.Second, 7*24*time.Hour + 59*time.Minute + 59*time.Second,
		-5 * time.Minute, 10080 * time.Minute,
	} {
		if got, want := Format(d), model.Duration(d).String(); got != want {
			t.Errorf("Format(%s) = %q, model.Duration says %q", d, got, want)
		}
	}
}

func TestFormatMilliseconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7*24*time.Hour - time.Millisecond: fmt.Sprint((7*24*time.Hour - time.Millisecond).Milliseconds()) + "ms",
		1500 * time.Millisecond:           "1500ms",
		time.Millisecond:                  "1ms",
	} {
		if got := Format(d); got != want {
			t.Errorf("Format(%s) = %q, want %q", d, got, want)
		}
	}
}
