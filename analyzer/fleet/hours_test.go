package fleet

import (
	"testing"
	"time"
)

// TestHourGrid: each step falls in the clock hour its interval (t−Step, t]
// starts in, on windows aligned to the hour and not, and with steps that
// do not divide the hour or are longer than it.
func TestHourGrid(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2026, 3, 9, h, m, s, 0, time.UTC) }
	for _, tt := range []struct {
		name      string
		w         Window
		wantStart time.Time
		// wantHours is each step's hour, in order.
		wantHours []int
	}{
		{name: "aligned, 30m", w: Window{Start: at(10, 0, 0), End: at(12, 0, 0), Step: 30 * time.Minute}, wantStart: at(10, 0, 0), wantHours: []int{0, 0, 1, 1}},
		{name: "within an hour, 20m", w: Window{Start: at(10, 10, 0), End: at(11, 30, 0), Step: 20 * time.Minute}, wantStart: at(10, 0, 0), wantHours: []int{0, 0, 0, 1}},
		{name: "off the step, 30m", w: Window{Start: at(10, 0, 30), End: at(11, 0, 30), Step: 30 * time.Minute}, wantStart: at(10, 0, 0), wantHours: []int{0, 0}},
		// 00:01 is a multiple of 7 minutes since the epoch: the steps are at
		// 00:08 + 7i, their intervals start at 00:01 + 7i, nine of them
		// before 01:00 (63 minutes) and eight after (56).
		{name: "7m steps: an hour of 9, the next of 8", w: Window{Start: at(0, 1, 0), End: at(2, 1, 0), Step: 7 * time.Minute}, wantStart: at(0, 0, 0),
			wantHours: []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}},
		{name: "2h steps leave hours out", w: Window{Start: at(10, 0, 0), End: at(16, 0, 0), Step: 2 * time.Hour}, wantStart: at(10, 0, 0), wantHours: []int{0, 2, 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start, n := tt.w.HourGrid()
			_, steps := tt.w.Grid()
			if !start.Equal(tt.wantStart) || steps != len(tt.wantHours) || n != tt.wantHours[len(tt.wantHours)-1]+1 {
				t.Fatalf("grid from %s of %d hours, %d steps; want from %s, %d hours, %d steps", start, n, steps, tt.wantStart, tt.wantHours[len(tt.wantHours)-1]+1, len(tt.wantHours))
			}
			for i, want := range tt.wantHours {
				if got := tt.w.StepHour(i); got != want {
					t.Errorf("step %d: hour %d, want %d", i, got, want)
				}
			}
		})
	}
}
