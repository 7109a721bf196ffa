package flagrange

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestCheck: a value under the floor or over the ceiling is an *Error
// naming the flag, its value and the bound; flags without a range, or of
// other types, pass.
func TestCheck(t *testing.T) {
	ranges := map[string]Range{
		"interval": {Min: 1, Why: "back to back"},
		"retries":  {Min: 0, Max: 20},
		"name":     {Min: 5},
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{args: nil},
		{args: []string{"--interval", "1s", "--retries", "20"}},
		{args: []string{"--interval", "1ns"}, err: "--interval: 1ns is below the least accepted, 1s (back to back)"},
		{args: []string{"--retries", "-3"}, err: "--retries: -3 is below the least accepted, 0"},
		{args: []string{"--retries", "21"}, err: "--retries: 21 is above the most accepted, 20"},
		{args: []string{"--other", "-1"}},
		{args: []string{"--name", "x"}},
	} {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Duration("interval", time.Minute, "")
		fs.Int("retries", 2, "")
		fs.Int("other", 0, "")
		fs.String("name", "", "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := Check(fs, ranges)
		var fe *Error
		if c.err == "" && err != nil || c.err != "" && (!errors.As(err, &fe) || err.Error() != c.err) {
			t.Errorf("%q: %v, want %q", c.args, err, c.err)
		}
	}
}
