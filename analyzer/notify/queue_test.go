package notify

import (
	"strconv"
	"testing"
)

func TestQueueDropsOldest(t *testing.T) {
	alerts := func(from, to int) []Alert {
		var out []Alert
		for i := from; i < to; i++ {
			out = append(out, Alert{Labels: map[string]string{"i": strconv.Itoa(i)}})
		}
		return out
	}
	tests := []struct {
		name        string
		pushes      [][]Alert
		wantDropped int
		wantFirst   string
		wantLen     int
	}{
		{"fits", [][]Alert{alerts(0, 3), alerts(3, 5)}, 0, "0", 5},
		{"second push overflows", [][]Alert{alerts(0, 4), alerts(4, 7)}, 2, "2", 5},
		{"one push larger than the queue", [][]Alert{alerts(0, 8)}, 3, "3", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(5)
			dropped := 0
			for _, p := range tt.pushes {
				dropped += q.push(p)
			}
			if dropped != tt.wantDropped || q.len() != tt.wantLen {
				t.Fatalf("dropped %d, len %d; want %d, %d", dropped, q.len(), tt.wantDropped, tt.wantLen)
			}
			b := q.pop(2)
			if b[0].Labels["i"] != tt.wantFirst || len(b) != 2 || q.len() != tt.wantLen-2 {
				t.Errorf("pop(2) = %v, then len %d; want first %s", b, q.len(), tt.wantFirst)
			}
			select {
			case <-q.ready:
			default:
				t.Error("a queue with alerts left does not signal it")
			}
		})
	}
}
