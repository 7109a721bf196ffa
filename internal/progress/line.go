package progress

import (
	"fmt"
	"io"
	"sync/atomic"
)

// Line shows a session's long work as a progress line on stderr,
// when it is a terminal: a line per phase, with the queries answered and
// the shards done, since a stage of a week over a large fleet is dozens of
// queries and many seconds.
type Line struct {
	w     io.Writer
	quiet bool

	bar                         atomic.Pointer[Bar]
	queries, shards, shardsDone atomic.Int64
}

// NewLine is a Line on w, silent when quiet; it is a session.Observer.
func NewLine(w io.Writer, quiet bool) *Line { return &Line{w: w, quiet: quiet} }

func (p *Line) Begin(phase string) {
	p.queries.Store(0)
	p.shards.Store(0)
	p.shardsDone.Store(0)
	b := New(p.w, phase, p.quiet)
	b.Detail = func(done, total int) string {
		detail := fmt.Sprintf("%d/%d stages done, %d queries", done, total, p.queries.Load())
		if n := p.shards.Load(); n > 1 {
			detail += fmt.Sprintf(", %d/%d shards", p.shardsDone.Load(), n)
		}
		return detail
	}
	p.bar.Store(b)
}

func (p *Line) Progress(done, total int) {
	if b := p.bar.Load(); b != nil {
		b.Set(done, total)
	}
}

func (p *Line) Shards(done, total int) {
	p.shardsDone.Store(int64(done))
	p.shards.Store(int64(total))
	p.tick()
}

func (p *Line) Query() {
	p.queries.Add(1)
	p.tick()
}

func (p *Line) tick() {
	if b := p.bar.Load(); b != nil {
		b.Tick()
	}
}

func (p *Line) End() {
	if b := p.bar.Swap(nil); b != nil {
		b.Done()
	}
}
