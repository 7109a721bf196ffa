package promdur

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// TestParse: PromQL durations as Prometheus's docs write them
// (https://prometheus.io/docs/prometheus/latest/querying/basics/#float-literals-and-time-durations),
// with their lengths worked out by hand.
func TestParse(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"0":       0,
		"90s":     90 * time.Second,
		"1m":      time.Minute,
		"1h30m":   90 * time.Minute,
		"1d":      24 * time.Hour,
		"1w":      7 * 24 * time.Hour,
		"2w3d":    17 * 24 * time.Hour,
		"1y":      365 * 24 * time.Hour,
		"1500ms":  1500 * time.Millisecond,
		"5m30s":   330 * time.Second,
		"1h0m1ms": time.Hour + time.Millisecond,
	} {
		got, err := Parse(s)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "1.5h", "-1m", "30m1h", "1h1h", "1x", "h", "1 h", "106752d", "9223372036854775808ms"} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, got)
		}
	}
}

// TestParseIsModelParseDuration: signals read steps with
// model.ParseDuration before Parse; the two must agree on what they accept
// and on its length.
func TestParseIsModelParseDuration(t *testing.T) {
	for _, s := range []string{"0", "", "1d", "1w", "90s", "1h30m", "1y2w3d4h5m6s7ms", "60s", "1ms", "00m", "1h1h", "1m1h",
		"1.5h", "-1m", "1", "1µs", "1us", "1ns", "1 h", "+1h", "0x10s", "106751d23h47m16s854ms", "106751d23h47m16s855ms", "18446744073709551616s"} {
		got, err := Parse(s)
		want, werr := model.ParseDuration(s)
		if (err == nil) != (werr == nil) || got != time.Duration(want) {
			t.Errorf("Parse(%q) = %v, %v; model.ParseDuration = %v, %v", s, got, err, time.Duration(want), werr)
		}
	}
}

// FuzzParse: whatever the input, Parse and model.ParseDuration accept and
// refuse alike, and agree on the length.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1d", "1h30m", "90s", "0", "1w2d", "5m0s", "1y", "9223372036854775807ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		want, werr := model.ParseDuration(s)
		if (err == nil) != (werr == nil) || got != time.Duration(want) {
			t.Fatalf("Parse(%q) = %v, %v; model.ParseDuration = %v, %v", s, got, err, time.Duration(want), werr)
		}
	})
}
