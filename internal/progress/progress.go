// Package progress draws a one-line progress indicator on stderr, and only
// when stderr is a terminal: piped or logged output stays clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Bar is a progress line. The zero of Total hides the percentage.
type Bar struct {
	w       io.Writer
	label   string
	enabled bool
	start   time.Time
	// Detail, when set, says in the work's own units what done out of
	// total means ("day 3.2 of 7", "31 queries"); it follows the bar.
	Detail func(done, total int) string

	mu          sync.Mutex
	last        time.Time
	done, total int // of the last Set, for Tick
}

// New returns a bar writing to w when w is a terminal and quiet is false;
// otherwise every method is a no-op.
func New(w io.Writer, label string, quiet bool) *Bar {
	f, ok := w.(*os.File)
	return &Bar{w: w, label: label, enabled: !quiet && ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

// Set draws done out of total, at most ten times a second.
func (b *Bar) Set(done, total int) {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done, b.total = done, total
	b.draw(done < total)
}

// Tick redraws the last Set's line, for a Detail that moved on in between
// (a query answered within a long stage).
func (b *Bar) Tick() {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(true)
}

// draw writes the line, at most ten times a second when limit is set.
func (b *Bar) draw(limit bool) {
	done, total := b.done, b.total
	now := time.Now()
	if limit && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	const width = 30
	frac := float64(done) / float64(max(total, 1))
	filled := int(frac * width)
	var detail string
	if b.Detail != nil {
		detail = " " + b.Detail(done, total)
	}
	// \033[K clears what a longer previous line left.
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%%%s %s\033[K", b.label, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		frac*100, detail, time.Since(b.start).Round(100*time.Millisecond))
}

// Done clears the line.
func (b *Bar) Done() {
	if !b.enabled {
		return
	}
	fmt.Fprintf(b.w, "\r\033[K")
}
