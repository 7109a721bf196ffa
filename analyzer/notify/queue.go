package notify

import "sync"

// queue is a bounded FIFO of alerts that drops the oldest when full: the
// newest copy of an alert carries the freshest endsAt, and every active
// alert is enqueued again at the next resend anyway.
type queue struct {
	mu    sync.Mutex
	items []Alert
	cap   int
	// ready has a token while items is not empty.
	ready chan struct{}
}

func newQueue(capacity int) *queue {
	return &queue{cap: capacity, ready: make(chan struct{}, 1)}
}

// push appends alerts and returns how many old ones it dropped.
func (q *queue) push(alerts []Alert) (dropped int) {
	q.mu.Lock()
	q.items = append(q.items, alerts...)
	if over := len(q.items) - q.cap; over > 0 {
		dropped = over
		q.items = append(q.items[:0:0], q.items[over:]...)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return dropped
}

// pop takes up to n alerts from the front.
func (q *queue) pop(n int) []Alert {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.items))
	out := append([]Alert(nil), q.items[:n]...)
	q.items = q.items[n:]
	if len(q.items) > 0 {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return out
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
