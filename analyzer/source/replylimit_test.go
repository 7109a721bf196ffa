package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
)

// bigReply answers the API with well-formed replies of the shape each
// endpoint's decoder wants, made as they are sent: a head, one element
// repeated, a tail. Nothing is held in memory, so a reply can be larger
// than the test could hold.
type bigReply struct {
	// size is the reply's length in bytes, or -1: endless, written until
	// the client hangs up (or, where it never does, 64 MiB, so that a
	// client without a limit gets a whole reply and the test ends).
	size int64
	// announce sends Content-Length; without it net/http sends the reply
	// chunked.
	announce bool
	// frame is remote read's repeated element (a streamed-chunks frame).
	frame []byte

	sent  atomic.Int64 // bytes the server's writes took
	calls atomic.Int32 // requests to the oversized endpoint
	total atomic.Int64 // the last reply's length, as announced or meant
}

// endlessCap ends an endless reply a client never hangs up on.
const endlessCap = 64 << 20

func (b *bigReply) parts(path string) (ctype string, head, elem, tail []byte) {
	switch path {
	case "/api/v1/query":
		return "application/json", []byte(`{"status":"success","data":{"resultType":"vector","result":[`),
			[]byte(`{"metric":{"gpu":"0"},"value":[1700000000,"0.5"]},`), []byte(`{"metric":{"gpu":"1"},"value":[1700000000,"0.5"]}]}}`)
	case "/api/v1/query_range":
		return "application/json", []byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"gpu":"0"},"values":[`),
			[]byte(`[1700000000,"0.5"],`), []byte(`[1700000060,"0.5"]]}]}}`)
	case "/api/v1/read":
		return streamedChunks, nil, b.frame, nil
	default: // the label and series APIs: a list of names
		return "application/json", []byte(`{"status":"success","data":[`), []byte(`"gpulens_gpu_info",`), []byte(`"up"]}`)
	}
}

func (b *bigReply) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/v1/status/buildinfo" || r.URL.Path == "/api/v1/status/config" {
		http.NotFound(w, r)
		return
	}
	// Remote read's first request is RawSamples' probe: it is answered
	// with no series, so that the read after it is the oversized one.
	if r.URL.Path == "/api/v1/read" && probe(r) {
		w.Header().Set("Content-Type", streamedChunks)
		return
	}
	b.calls.Add(1)
	ctype, head, elem, tail := b.parts(r.URL.Path)
	n := int64(endlessCap-len(head)-len(tail)) / int64(len(elem))
	if b.size >= 0 {
		n = (b.size - int64(len(head)) - int64(len(tail)) + int64(len(elem)) - 1) / int64(len(elem))
	}
	b.total.Store(int64(len(head)) + n*int64(len(elem)) + int64(len(tail)))
	w.Header().Set("Content-Type", ctype)
	if b.announce {
		w.Header().Set("Content-Length", strconv.FormatInt(b.total.Load(), 10))
	}
	write := func(p []byte) bool {
		k, err := w.Write(p)
		b.sent.Add(int64(k))
		return err == nil
	}
	if !write(head) {
		return
	}
	for range n {
		if !write(elem) {
			return
		}
	}
	write(tail)
}

// probe says whether r is remote read's probe, which asks for the one
// series no store holds (RawSamples).
func probe(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	data, err := snappy.Decode(nil, body)
	var req prompb.ReadRequest
	if err != nil || req.Unmarshal(data) != nil || len(req.Queries) == 0 {
		return false
	}
	for _, m := range req.Queries[0].Matchers {
		if m.Value == "gpulens_remote_read_probe" {
			return true
		}
	}
	return false
}

// TestRepliesOverTheLimit guards issue 52: every endpoint's reply is cut
// off at RemoteOptions.MaxReplyBytes, with an error naming the flag, the
// limit and the endpoint, unretried, and early: a reply announced over the
// limit is not read at all, and an endless one is given up within the
// limit and the loopback's buffers. On main at 36bc8ff the client read
// every reply whole (client_golang's httpClient.Do buffers the body, then
// v1 decodes it): these replies decode, so every case succeeded, the
// endless ones read to their 64 MiB end.
func TestRepliesOverTheLimit(t *testing.T) {
	const limit = 1 << 20
	frame := frame(t, &prompb.ChunkedSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}}, Chunks: []prompb.Chunk{xorChunk(t, 0, 100)}})
	ctx := context.Background()
	call := map[string]func(r *Remote) error{
		"query": func(r *Remote) error {
			_, err := r.Query(ctx, "up", time.Unix(1700000000, 0))
			return err
		},
		"range query": func(r *Remote) error {
			_, err := r.QueryRange(ctx, "up", time.Unix(1700000000, 0), time.Unix(1700003600, 0), time.Minute)
			return err
		},
		"listing metric names": func(r *Remote) error {
			_, err := r.MetricNames(ctx, time.Unix(1700000000, 0), time.Unix(1700003600, 0))
			return err
		},
		"remote read": func(r *Remote) error {
			st, ok := r.RawSamples()
			if !ok {
				return errors.New("remote read refused")
			}
			q, _ := st.Querier(0, 1)
			set := q.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "x"))
			for set.Next() {
			}
			return set.Err()
		},
	}
	endpoint := map[string]string{"query": "/api/v1/query", "range query": "/api/v1/query_range",
		"listing metric names": "/api/v1/label/__name__/values", "remote read": "/api/v1/read"}
	for _, c := range []struct {
		op       string
		size     int64
		announce bool
	}{
		{op: "query", size: -1},
		{op: "query", size: 4 << 20, announce: true},
		{op: "range query", size: -1},
		{op: "range query", size: 4 << 20, announce: true},
		{op: "listing metric names", size: -1},
		{op: "remote read", size: -1},
		{op: "remote read", size: 4 << 20, announce: true},
	} {
		name := c.op + "/chunked"
		if c.announce {
			name = c.op + "/content-length"
		}
		t.Run(name, func(t *testing.T) {
			h := &bigReply{size: c.size, announce: c.announce, frame: frame}
			srv := httptest.NewServer(h)
			defer srv.Close()
			r, err := NewRemote(RemoteOptions{URL: srv.URL, Retries: 2, Backoff: time.Millisecond,
				MaxReplyBytes: limit, MaxReplyFlag: "--query.max-reply-size"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			err = call[c.op](r)
			big, ok := tooLarge(err)
			var re *RemoteError
			if !ok || !errors.As(err, &re) {
				t.Fatalf("error %v, want a RemoteError over the limit", err)
			}
			for _, w := range []string{srv.URL, c.op + " failed", "the reply to " + endpoint[c.op], "the 1MiB limit of --query.max-reply-size", "raise --query.max-reply-size"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if got := h.calls.Load(); got != 1 {
				t.Errorf("%d requests, want 1: an oversized reply is not retried", got)
			}
			if c.announce {
				if big.Length != h.total.Load() {
					t.Errorf("error says %d bytes announced, the server announced %d", big.Length, h.total.Load())
				}
				return
			}
			// The client hangs up at the limit; what the server wrote
			// beyond it sat in the loopback's socket buffers.
			srv.Close() // waits for the handler
			if sent := h.sent.Load(); sent >= endlessCap/2 {
				t.Errorf("the server wrote %d bytes: the client did not hang up at the %d-byte limit", sent, limit)
			}
		})
	}
}

// TestReplyAtTheLimit: a reply of exactly the limit is whole and read; one
// byte more fails. With and without Content-Length, as the cap reads one
// byte past the limit to tell the two apart.
func TestReplyAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		limit    int64
		announce bool
		wantErr  bool
	}{
		{limit: int64(len(okVector)), wantErr: false},
		{limit: int64(len(okVector)), announce: true, wantErr: false},
		{limit: int64(len(okVector)) - 1, wantErr: true},
		{limit: int64(len(okVector)) - 1, announce: true, wantErr: true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if c.announce {
				w.Header().Set("Content-Length", strconv.Itoa(len(okVector)))
			} else {
				w.(http.Flusher).Flush() // chunked
			}
			_, _ = io.WriteString(w, okVector)
		}))
		r, err := NewRemote(RemoteOptions{URL: srv.URL, MaxReplyBytes: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.Query(context.Background(), "up", time.Unix(1700000000, 0))
		_, big := tooLarge(err)
		if c.wantErr != big || (!c.wantErr && (err != nil || len(v) != 1)) {
			t.Errorf("limit %d, Content-Length %v: %d samples, error %v; want over the limit %v", c.limit, c.announce, len(v), err, c.wantErr)
		}
		if big && !strings.Contains(err.Error(), "RemoteOptions.MaxReplyBytes") {
			t.Errorf("without a flag the error names the option: %v", err)
		}
		srv.Close()
	}
}

// TestReadReply: a reply read in segments is the bytes sent, across the
// segments' boundaries, with or without a length; and one whose stream
// breaks before its end is an error, not a shorter reply, as net/http's
// chunked reader says io.ErrUnexpectedEOF for a reply cut off mid-chunk
// (which Remote retries as the network's failure).
func TestReadReply(t *testing.T) {
	for _, n := range []int{0, 1, firstSegment - 1, firstSegment, firstSegment + 1, 3*firstSegment + 7, maxSegment + 3*firstSegment} {
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*7 + i/251)
		}
		for _, length := range []int64{-1, int64(n)} {
			got, err := readReply(iotest.HalfReader(bytes.NewReader(want)), length, 0)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%d bytes, length %d: got %d bytes, %v", n, length, len(got), err)
			}
		}
	}
	cut := io.MultiReader(bytes.NewReader(make([]byte, firstSegment+5)), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, err := readReply(cut, -1, 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a reply cut off: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := readReply(bytes.NewReader(make([]byte, 10)), 20, 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a reply shorter than its length: %v, want io.ErrUnexpectedEOF", err)
	}
}
