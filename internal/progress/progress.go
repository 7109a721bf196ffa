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

	mu   sync.Mutex
	last time.Time
}

// New returns a bar writing to w when w is a terminal; otherwise every
// method is a no-op.
func New(w io.Writer, label string) *Bar {
	f, ok := w.(*os.File)
	return &Bar{w: w, label: label, enabled: ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

// Set draws done out of total, at most ten times a second.
func (b *Bar) Set(done, total int) {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if done < total && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	const width = 30
	frac := float64(done) / float64(max(total, 1))
	filled := int(frac * width)
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%% %s", b.label, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		frac*100, time.Since(b.start).Round(100*time.Millisecond))
}

// Done clears the line.
func (b *Bar) Done() {
	if !b.enabled {
		return
	}
	fmt.Fprintf(b.w, "\r\033[K")
}
