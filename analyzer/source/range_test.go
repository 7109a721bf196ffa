package source

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

func TestEmbeddedQueryRange(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{})
	appendSeries(t, e, labels.FromStrings("__name__", "util", "gpu", "0"), t0, t0.Add(2*time.Hour), func(ts time.Time) float64 {
		return float64(ts.Sub(t0) / time.Hour) // 0 in the first hour, 1 in the second
	})
	tests := []struct {
		name       string
		q          string
		step       time.Duration
		wantSeries int
		wantValues []float64
		wantErr    string
	}{
		{name: "raw samples", q: "util", step: time.Hour, wantSeries: 1, wantValues: []float64{0, 1}},
		// Ranges are open on the left: at 1h the window (30m, 1h] holds one
		// second-hour sample of thirty.
		{name: "aggregated over each step", q: "avg_over_time(util[30m])", step: 30 * time.Minute, wantSeries: 1, wantValues: []float64{0, 0, 1.0 / 30, 1}},
		{name: "no series", q: "absent_metric", step: time.Hour, wantSeries: 0},
		{name: "bad query names the source", q: "sum(", step: time.Hour, wantErr: "embedded TSDB at"},
		{name: "zero step", q: "util", step: 0, wantErr: "step must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := e.QueryRange(context.Background(), tt.q, t0, t0.Add(time.Hour+59*time.Minute), tt.step)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != tt.wantSeries {
				t.Fatalf("got %d series, want %d", len(m), tt.wantSeries)
			}
			if tt.wantSeries == 0 {
				return
			}
			var got []float64
			for _, p := range m[0].Values {
				got = append(got, float64(p.Value))
			}
			if len(got) != len(tt.wantValues) {
				t.Fatalf("values %v, want %v", got, tt.wantValues)
			}
			for i := range got {
				if got[i] != tt.wantValues[i] {
					t.Fatalf("values %v, want %v", got, tt.wantValues)
				}
			}
			if m[0].Metric["gpu"] != "0" {
				t.Errorf("labels = %v, want gpu=0 kept", m[0].Metric)
			}
		})
	}
}

func TestRemoteQueryRange(t *testing.T) {
	const matrix = `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"team":"a"},"values":[[1700000000,"0.5"],[1700003600,"0.75"]]}]}}`
	tests := []struct {
		name      string
		responses []fakeResponse
		wantCalls int32
		wantErr   string
	}{
		{name: "matrix", responses: []fakeResponse{{status: 200, body: matrix}}, wantCalls: 1},
		{name: "503 is retried", responses: []fakeResponse{{status: 503, body: "busy"}, {status: 200, body: matrix}}, wantCalls: 2},
		{name: "400 is not retried", responses: []fakeResponse{{status: 400, body: `{"status":"error","errorType":"bad_data","error":"parse error"}`}}, wantCalls: 1, wantErr: "400 Bad Request: parse error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path, step string
			fp := &fakeProm{responses: tt.responses, check: func(r *http.Request) error {
				path, step = r.URL.Path, r.FormValue("step")
				return nil
			}}
			srv := httptest.NewServer(fp)
			defer srv.Close()
			r, err := NewRemote(RemoteOptions{URL: srv.URL, Retries: 2, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m, err := r.QueryRange(context.Background(), "x", t0, t0.Add(time.Hour), time.Hour)
			if fp.calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", fp.calls.Load(), tt.wantCalls)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if path != "/api/v1/query_range" || step != "3600" {
				t.Errorf("request %s step=%s, want /api/v1/query_range step=3600", path, step)
			}
			if len(m) != 1 || len(m[0].Values) != 2 || m[0].Values[1].Value != 0.75 || m[0].Metric["team"] != model.LabelValue("a") {
				t.Errorf("matrix = %v", m)
			}
		})
	}
}
