package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every command that writes a file takes it as -o/--output, so that a
// line from the README works whichever command it names.
func TestOutputFlagEverywhere(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	seen := 0
	for _, c := range root.Commands() {
		f := c.Flags().Lookup("output")
		if f == nil {
			continue
		}
		seen++
		if f.Shorthand != "o" {
			t.Errorf("%s --output has no -o shorthand", c.Name())
		}
	}
	for _, name := range []string{"demo", "report", "recommend"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Flags().Lookup("output") == nil {
			t.Errorf("%s: no --output flag (%v)", name, err)
		}
	}
	if seen == 0 {
		t.Fatal("no command has --output")
	}
}

// Every duration and count flag has a floor, and a value under it is a
// usage error naming the flag, before any source is read.
func TestFlagFloors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"serve", "--data-dir", "x", "--interval", "1ns"}, "--interval"},
		{[]string{"serve", "--data-dir", "x", "--timeout", "-1s"}, "--timeout"},
		{[]string{"serve", "--data-dir", "x", "--retries", "-3"}, "--retries"},
		{[]string{"serve", "--data-dir", "x", "--alertmanager.resend-interval", "1ms"}, "--alertmanager.resend-interval"},
		{[]string{"serve", "--data-dir", "x", "--alertmanager.timeout", "0s"}, "--alertmanager.timeout"},
		{[]string{"serve", "--data-dir", "x", "--push.interval", "1ns"}, "--push.interval"},
		{[]string{"serve", "--data-dir", "x", "--web.shutdown-timeout", "-1s"}, "--web.shutdown-timeout"},
		{[]string{"report", "--data-dir", "x", "--timeout", "0s"}, "--timeout"},
		{[]string{"report", "--data-dir", "x", "--retries", "1000"}, "--retries"},
		{[]string{"report", "--data-dir", "x", "--query.max-samples", "-1"}, "--query.max-samples"},
		{[]string{"report", "--data-dir", "x", "--step", "1ms"}, "--step"},
		{[]string{"recommend", "--data-dir", "x", "--timeout", "-5m"}, "--timeout"},
		{[]string{"plan", "--data-dir", "x", "--node-gpus", "-1"}, "--node-gpus"},
		{[]string{"plan", "--data-dir", "x", "--max-replicas", "-2"}, "--max-replicas"},
		{[]string{"demo", "--step", "1ns"}, "--step"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr strings.Builder
			code := execute(tc.args, io.Discard, &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d (usage); stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.flag+":") {
				t.Errorf("the error does not name %s: %s", tc.flag, stderr.String())
			}
		})
	}
	// Each floor is in the table, and each flag of the table is a flag
	// of some command: a renamed flag would silently lose its floor.
	root := newRootCmd(io.Discard, io.Discard)
	seen := map[string]bool{}
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			seen[f.Name] = true
			switch f.Value.Type() {
			case "duration", "int", "int64", "uint", "float64":
				if _, ok := flagRanges[f.Name]; !ok {
					t.Errorf("%s --%s (%s) has no entry in flagRanges", c.Name(), f.Name, f.Value.Type())
				}
			}
		})
	}
	for name := range flagRanges {
		if !seen[name] {
			t.Errorf("flagRanges names --%s, which no command has", name)
		}
	}
}
