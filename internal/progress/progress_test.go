package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestBarIsQuietOffATerminal(t *testing.T) {
	var b bytes.Buffer
	bar := New(&b, "analyzing", false) // a buffer is not a terminal
	bar.Set(1, 2)
	bar.Done()
	if b.Len() != 0 {
		t.Errorf("wrote %q to a non-terminal", b.String())
	}
}

func TestBarDrawsDetail(t *testing.T) {
	var b bytes.Buffer
	bar := &Bar{w: &b, label: "simulating", enabled: true}
	bar.Detail = func(done, total int) string { return fmt.Sprintf("day %d of %d", done, total) }
	bar.Set(7, 7)
	if got := b.String(); !strings.Contains(got, "simulating [") || !strings.Contains(got, "100% day 7 of 7") {
		t.Errorf("line = %q", got)
	}
}
