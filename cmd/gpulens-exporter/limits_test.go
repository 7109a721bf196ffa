package main

import (
	"os"
	"strings"
	"testing"
)

// TestFlagLimits: every duration and size flag has a floor and a ceiling,
// and a value outside names the flag (--collect.interval=1ns ran 2,000
// collections in 5 s before).
func TestFlagLimits(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" when accepted
	}{
		{nil, ""},
		{[]string{"--collect.interval=100ms", "--collect.timeout=10ms"}, ""},
		{[]string{"--collect.interval=1ns"}, "--collect.interval=1ns: must be between 100ms and 24h0m0s"},
		{[]string{"--collect.interval=99ms"}, "--collect.interval=99ms"},
		{[]string{"--collect.interval=-1s"}, "--collect.interval=-1s"},
		{[]string{"--collect.interval=25h"}, "--collect.interval=25h0m0s"},
		{[]string{"--collect.timeout=0s"}, "--collect.timeout=0s: must be between 10ms and 5m0s"},
		{[]string{"--collect.timeout=-1s"}, "--collect.timeout=-1s"},
		{[]string{"--collect.timeout=6m"}, "--collect.timeout=6m0s"},
		{[]string{"--kubelet.pod-resources-max-message-size=64MiB"}, ""},
		{[]string{"--kubelet.pod-resources-max-message-size=1KiB"}, "--kubelet.pod-resources-max-message-size=1KiB: must be between 1MiB and"},
		{[]string{"--kubelet.pod-resources-max-message-size=4GiB"}, "--kubelet.pod-resources-max-message-size=4GiB"},
		{[]string{"--web.health-address=:9847"}, ""},
		{[]string{"--web.health-address=9847"}, `--web.health-address="9847": not host:port`},
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseFlags(append([]string{"--node-name=n1"}, tt.args...), devnull, devnull)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
