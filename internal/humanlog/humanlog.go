// Package humanlog is the slog handler of gpulens's one-shot commands
// (report, recommend, plan, quota, demo): a warning is one line a person
// reads, "warning: MSG (key value, ...): ERR", as kubectl and helm print
// theirs, not a logfmt record with a timestamp. serve, a daemon whose logs
// are collected, keeps logfmt.
package humanlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gpulens/gpulens/internal/safetext"
)

// Handler writes records at or above its level as one line each.
type Handler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	attrs []slog.Attr
}

// New is a Handler writing to w records at level or above.
func New(w io.Writer, level slog.Leveler) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

// WithGroup flattens groups: a one-line message has no room for them.
func (h *Handler) WithGroup(string) slog.Handler { return h }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(levelWord(r.Level))
	b.WriteString(": ")
	b.WriteString(r.Message)
	var errText, source string
	var rest []string
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch a.Key {
		case "err", "error":
			errText = v.String()
		case "source":
			source = v.String()
		default:
			rest = append(rest, a.Key+" "+value(v))
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	// The source is named in the error where there is one; said twice
	// it only makes the line longer.
	if source != "" && !strings.Contains(errText, source) {
		rest = append([]string{"source " + source}, rest...)
	}
	if len(rest) > 0 {
		b.WriteString(" (" + strings.Join(rest, ", ") + ")")
	}
	if errText != "" {
		b.WriteString(": " + errText)
	}
	// Store text (a label value in an error) reaches the terminal: its
	// control characters are shown, not run, and the record stays one
	// line.
	line := safetext.Line(b.String()) + "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// value is v as a person reads it: durations rounded to the millisecond,
// times in RFC 3339.
func value(v slog.Value) string {
	switch v.Kind() {
	case slog.KindDuration:
		return v.Duration().Round(time.Millisecond).String()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339)
	}
	return fmt.Sprint(v.Any())
}

// levelWord is the word kubectl and helm start such a line with.
func levelWord(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}
