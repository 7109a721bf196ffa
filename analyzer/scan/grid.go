package scan

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
)

// ErrUnsupported is an expression, or a case of one, this package does not
// evaluate the engine's way; the caller asks the engine instead.
var ErrUnsupported = errors.New("not evaluated by the scan path")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// Grid is the steps an expression is evaluated at: Start, Start+Step, ...,
// N of them, in milliseconds, as a range query's.
type Grid struct {
	Start, Step int64
	N           int
}

// NewGrid is the grid of a range query from start to end (inclusive).
func NewGrid(start, end time.Time, step time.Duration) (Grid, error) {
	s, e, st := start.UnixMilli(), end.UnixMilli(), step.Milliseconds()
	if st <= 0 || e < s {
		return Grid{}, fmt.Errorf("scan: bad range %s..%s step %s", start, end, step)
	}
	return Grid{Start: s, Step: st, N: int((e-s)/st) + 1}, nil
}

// At is step i's timestamp.
func (g Grid) At(i int) int64 { return g.Start + int64(i)*g.Step }

// End is the last step's timestamp.
func (g Grid) End() int64 { return g.At(g.N - 1) }

// absent marks a step without a value. It is the stale marker's bit
// pattern: a sample with it is stale by Prometheus's own rule and never
// a value, and arithmetic never yields it (a NaN operand comes out quiet).
var absent = math.Float64frombits(value.StaleNaN)

func isAbsent(v float64) bool { return math.Float64bits(v) == value.StaleNaN }

// series is one series' value at every step of the grid.
type series struct {
	lset labels.Labels
	v    []float64
}

func newValues(n int) []float64 {
	v := make([]float64, n)
	fillAbsent(v)
	return v
}

func fillAbsent(v []float64) {
	n := len(v)
	if n == 0 {
		return
	}
	// Doubling copies run at memmove's speed; a loop of stores is several
	// times slower, and every node of every pass starts with one.
	v[0] = absent
	for i := 1; i < n; i *= 2 {
		copy(v[i:], v[:i])
	}
}

// pools hold released values by length: the passes of one window all
// have the same number of steps.
var pools sync.Map // int -> *sync.Pool of *[]float64

func getValues(n int) []float64 {
	if p, ok := pools.Load(n); ok {
		if v, ok := p.(*sync.Pool).Get().(*[]float64); ok {
			return *v
		}
	}
	return make([]float64, n)
}

func putValues(v []float64) {
	p, _ := pools.LoadOrStore(len(v), new(sync.Pool))
	p.(*sync.Pool).Put(&v)
}

// empty says whether s has no value at any step.
func (s *series) empty() bool {
	for _, v := range s.v {
		if !isAbsent(v) {
			return false
		}
	}
	return true
}
