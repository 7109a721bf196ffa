package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// cannedClient answers every API call with one status and body, as the
// HTTP client would hand them to client_golang's decoder, without a socket:
// fuzzing needs thousands of decodes a second.
type cannedClient struct {
	status int
	body   []byte
}

func (c cannedClient) URL(ep string, args map[string]string) *url.URL {
	for k, v := range args {
		ep = strings.ReplaceAll(ep, ":"+k, v)
	}
	return &url.URL{Scheme: "http", Host: "prometheus.invalid", Path: ep}
}

func (c cannedClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp := &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(c.body)), Request: req}
	return resp, c.body, nil
}

// FuzzRemoteDecode feeds arbitrary answers of a Prometheus-compatible server
// through client_golang's decoding and the source's result conversion and
// error wrapping: no panic, a non-2xx status is never a result, every error
// names the server and stays short, and a secret the server echoes (TOKEN in
// the input) never reaches the error.
func FuzzRemoteDecode(f *testing.F) {
	f.Add(200, []byte(okVector), false)
	f.Add(200, []byte(`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}}`), false)
	f.Add(200, []byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`), false)
	f.Add(200, []byte(`{"status":"success","data":["up","DCGM_FI_DEV_FB_USED"]}`), true)
	f.Add(200, []byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"gpu":"0"},"value":[1700000000,"0.`), false)
	f.Add(200, []byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"histogram":[1,{"count":"1","sum":"2","buckets":[[0,"1","2","1"]]}]}]}}`), false)
	f.Add(400, []byte(`{"status":"error","errorType":"bad_data","error":"parse error TOKEN"}`), false)
	f.Add(503, []byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`), false)
	f.Add(502, []byte("<html>upstream rejected Authorization: Bearer TOKEN</html>"), false)
	f.Add(429, []byte(""), true)
	// One source for all inputs (a worker runs them one at a time): building
	// the HTTP client per input would be most of the work.
	r, err := NewRemote(RemoteOptions{URL: "http://prometheus.invalid", BearerTokenFile: writeSecret(f, "token", testToken)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, names bool) {
		if status < 100 || status > 999 {
			return // net/http never hands these over
		}
		body = bytes.ReplaceAll(body, []byte("TOKEN"), []byte(testToken))
		r.api = v1.NewAPI(recordingClient{cannedClient{status: status, body: body}})
		var err error
		if names {
			_, err = r.MetricNames(context.Background(), time.Unix(0, 0), time.Unix(3600, 0))
		} else {
			_, err = r.Query(context.Background(), "up", time.Unix(3600, 0))
		}
		if err == nil {
			if status/100 != 2 {
				t.Fatalf("status %d decoded as a result", status)
			}
			return
		}
		var re *RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("error %T %q is not a *RemoteError", err, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "prometheus at http://prometheus.invalid: ") {
			t.Fatalf("error %q does not name the server", msg)
		}
		if strings.Contains(msg, testToken) {
			t.Fatalf("error %q leaks the token", msg)
		}
		if len(msg) > 2*maxDetail+200 {
			t.Fatalf("error of %d bytes for a %d-byte body", len(msg), len(body))
		}
	})
}
