package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		exceptions string
		wantFail   bool
		want       []string
	}{
		{
			name:     "no exceptions: every reached vulnerability fails",
			wantFail: true,
			want: []string{
				"FAIL GO-2026-6603: stdlib@v1.26.8, fixed in v1.26.9",
				"exporter/server.Run (exporter/server/server.go:42) -> net/http.Server.Serve",
				"FAIL GO-2099-0001: example.com/lib@v1.0.0, fixed in no fix",
			},
		},
		{
			name:       "an exception for a fixed vulnerability is refused",
			exceptions: "GO-2026-6603 2027-01-31 we would rather not upgrade\nGO-2099-0001 2027-01-31 no fix upstream yet\n",
			wantFail:   true,
			want:       []string{"exception on line 1 refused: fixed in v1.26.9", "accepted until 2027-01-31: no fix upstream yet"},
		},
		{
			name:       "an expired exception fails",
			exceptions: "# reviewed monthly\nGO-2099-0001 2026-12-01 no fix upstream yet\n",
			wantFail:   true,
			want:       []string{"exception on line 2 expired 2026-12-01"},
		},
		{
			name:       "an exception is valid through its expiry day",
			exceptions: "GO-2099-0001 2026-12-02 no fix upstream yet\n",
			wantFail:   true, // GO-2026-6603 still fails
			want:       []string{"GO-2099-0001", "accepted until 2026-12-02"},
		},
		{
			name:       "an exception that matches nothing reached is reported",
			exceptions: "GO-2026-5932 2027-01-31 only imported\n",
			wantFail:   true,
			want:       []string{"exception GO-2026-5932 (line 1) matches nothing reached"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open("testdata/stream.json")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			reached, unreached, err := read(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(reached) != 2 || unreached != 1 {
				t.Fatalf("reached %d, unreached %d; want 2 and 1 (module- and package-level findings are not reached)", len(reached), unreached)
			}
			exc, err := parseExceptions(strings.NewReader(tt.exceptions))
			if err != nil {
				t.Fatal(err)
			}
			failed, report := judge(reached, exc, now)
			if failed != tt.wantFail {
				t.Errorf("failed = %v, want %v\n%s", failed, tt.wantFail, report)
			}
			for _, w := range tt.want {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
		})
	}
}

func TestJudgePassesWhenAllExcused(t *testing.T) {
	reached := map[string]*vuln{"GO-2099-0001": {ID: "GO-2099-0001", Module: "example.com/lib", Version: "v1.0.0"}}
	exc := []exception{{ID: "GO-2099-0001", Expiry: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), Reason: "no fix", Line: 1}}
	if failed, report := judge(reached, exc, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)); failed {
		t.Errorf("failed with every finding excused:\n%s", report)
	}
}

func TestParseExceptionsErrors(t *testing.T) {
	for _, in := range []string{"GO-1 2027-01-31\n", "GO-1 31.01.2027 reason\n"} {
		if _, err := parseExceptions(strings.NewReader(in)); err == nil {
			t.Errorf("parseExceptions(%q) succeeded, want an error", in)
		}
	}
}
