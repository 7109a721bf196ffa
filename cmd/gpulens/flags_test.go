package main

import (
	"io"
	"testing"
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
