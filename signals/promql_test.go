package signals

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{7 * 24 * time.Hour, "1w"},
		{90 * time.Second, "1m30s"},
		{time.Minute, "1m"},
		// A range one millisecond short of six one-minute steps: Prometheus
		// 2's closed and 3's left-open subquery ranges hold the same steps.
		{6*time.Minute - time.Millisecond, "359999ms"},
		{1500 * time.Millisecond, "1500ms"},
	} {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestBy(t *testing.T) {
	if got := By("node", "uuid"); got != "(node, uuid)" {
		t.Errorf("By = %q", got)
	}
	if got := By(); got != "()" {
		t.Errorf("By() = %q", got)
	}
}
