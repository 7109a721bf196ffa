package session

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMaxReplySizeFlag guards --query.max-reply-size's parsing (issue 52;
// main at 36bc8ff has no such flag, and Flags no MaxReplySize field). Sizes
// are read as Prometheus reads body_size_limit, a units.Base2Bytes
// (github.com/alecthomas/units, bytes.go: "ParseBase2Bytes supports both iB
// and B in base-2 multipliers. That is, KB and KiB are both 1024. However
// "kB", which is the correct SI spelling of 1000 Bytes, is rejected."), so
// 512MB is 512 × 1024² bytes; a malformed size is a FlagError naming the
// flag, which the CLI exits 2 on.
func TestMaxReplySizeFlag(t *testing.T) {
	for _, c := range []struct {
		size    string
		want    int64
		wantErr string
	}{
		{size: "", want: 0},
		{size: "0", want: 0},
		{size: "64MiB", want: 64 * 1024 * 1024},
		{size: "512MB", want: 512 * 1024 * 1024},
		{size: "1.5GiB", want: 3 * 512 * 1024 * 1024},
		{size: "12XB", wantErr: `--query.max-reply-size: "12XB" is not a size such as 64MiB`},
		{size: "512kB", wantErr: `--query.max-reply-size: "512kB" is not a size`},
		{size: "512", wantErr: `--query.max-reply-size: "512" is not a size`},
		{size: "-1MiB", wantErr: `--query.max-reply-size: "-1MiB" must not be negative`},
	} {
		t.Run(c.size, func(t *testing.T) {
			f := Flags{PrometheusURL: "http://prometheus:9090", Since: "1d", Step: time.Minute, MaxReplySize: c.size}
			cfg, err := f.Config(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), nil, nil)
			if c.wantErr != "" {
				var fe *FlagError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want a FlagError containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || cfg.Remote.MaxReplyBytes != c.want {
				t.Errorf("MaxReplyBytes %d, %v; want %d", cfg.Remote.MaxReplyBytes, err, c.want)
			}
		})
	}
}
