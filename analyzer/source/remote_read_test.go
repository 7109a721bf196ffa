package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// readServer answers remote read with frames built here, as Prometheus's
// read handler writes them, and its configuration and build information.
func readServer(t *testing.T, frames func(*prompb.ReadRequest) []byte, version string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/status/config":
			_, _ = io.WriteString(w, `{"status":"success","data":{"yaml":"global:\n  external_labels:\n    cluster: a\n"}}`)
		case "/api/v1/status/buildinfo":
			_, _ = io.WriteString(w, `{"status":"success","data":{"version":"`+version+`"}}`)
		case "/api/v1/read":
			body, _ := io.ReadAll(r.Body)
			data, err := snappy.Decode(nil, body)
			var req prompb.ReadRequest
			if err != nil || req.Unmarshal(data) != nil || r.Header.Get("Content-Encoding") != "snappy" {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", streamedChunks)
			_, _ = w.Write(frames(&req))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// frame is one length-delimited, checksummed ChunkedReadResponse.
func frame(t testing.TB, series ...*prompb.ChunkedSeries) []byte {
	t.Helper()
	data, err := (&prompb.ChunkedReadResponse{ChunkedSeries: series}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.Write(binary.AppendUvarint(nil, uint64(len(data))))
	_ = binary.Write(&b, binary.BigEndian, crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	b.Write(data)
	return b.Bytes()
}

// xorChunk is one chunk of samples at the minutes from..to, value = minute.
func xorChunk(t testing.TB, from, to int) prompb.Chunk {
	t.Helper()
	c := chunkenc.NewXORChunk()
	app, err := c.Appender()
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i <= to; i++ {
		app.Append(0, int64(i)*60_000, float64(i))
	}
	return prompb.Chunk{MinTimeMs: int64(from) * 60_000, MaxTimeMs: int64(to) * 60_000, Type: prompb.Chunk_XOR, Data: c.Bytes()}
}

func TestRemoteReadSeries(t *testing.T) {
	lbls := []prompb.Label{{Name: "__name__", Value: "gpulens_gpu_info"}, {Name: "cluster", Value: "a"}, {Name: "uuid", Value: "GPU-1"}}
	srv := readServer(t, func(req *prompb.ReadRequest) []byte {
		if len(req.AcceptedResponseTypes) != 1 || req.AcceptedResponseTypes[0] != prompb.ReadRequest_STREAMED_XOR_CHUNKS {
			t.Errorf("accepted response types %v, want streamed chunks only", req.AcceptedResponseTypes)
		}
		// One series split over two frames, as Prometheus splits a series
		// whose chunks exceed a frame.
		return append(frame(t, &prompb.ChunkedSeries{Labels: lbls, Chunks: []prompb.Chunk{xorChunk(t, 0, 9)}}),
			frame(t, &prompb.ChunkedSeries{Labels: lbls, Chunks: []prompb.Chunk{xorChunk(t, 10, 19)}})...)
	}, "2.53.0")
	r, err := NewRemote(RemoteOptions{URL: srv.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := r.RawSamples()
	if !ok {
		t.Fatal("remote read refused")
	}
	if !st.LeftClosed {
		t.Error("a Prometheus 2 reads its windows closed")
	}
	q, err := st.Querier(0, 20*60_000)
	if err != nil {
		t.Fatal(err)
	}
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "gpulens_gpu_info"))
	var got []string
	var n int
	for set.Next() {
		s := set.At()
		got = append(got, s.Labels().String())
		it := s.Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			ts, v := it.At()
			if float64(ts/60_000) != v {
				t.Errorf("sample %d at %d", int(v), ts)
			}
			n++
		}
	}
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	// The external label is taken off: the server's PromQL does not show it.
	if strings.Join(got, " ") != `{__name__="gpulens_gpu_info", uuid="GPU-1"}` || n != 20 {
		t.Errorf("series %v with %d samples, want one without the cluster label and 20", got, n)
	}

	// The same series as chunks, which the scan decodes itself: both
	// frames' chunks, with the times the frames gave them.
	cq, ok := st.Queryable.(storage.ChunkQueryable)
	if !ok {
		t.Fatal("remote read serves no chunks")
	}
	c, err := cq.ChunkQuerier(0, 20*60_000)
	if err != nil {
		t.Fatal(err)
	}
	cset := c.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "gpulens_gpu_info"))
	var spans []string
	for cset.Next() {
		s := cset.At()
		spans = append(spans, s.Labels().String())
		for it := s.Iterator(nil); it.Next(); {
			m := it.At()
			spans = append(spans, fmt.Sprintf("%d-%d:%d", m.MinTime/60_000, m.MaxTime/60_000, m.Chunk.NumSamples()))
		}
	}
	if err := cset.Err(); err != nil {
		t.Fatal(err)
	}
	if want := `{__name__="gpulens_gpu_info", uuid="GPU-1"} 0-9:10 10-19:10`; strings.Join(spans, " ") != want {
		t.Errorf("chunks %q, want %q", strings.Join(spans, " "), want)
	}
}

func TestRemoteReadRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		serve http.HandlerFunc
	}{
		{"no such path (Thanos Query)", http.NotFound},
		{"bad request (VictoriaMetrics)", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `unsupported path requested: "/api/v1/read"`, http.StatusBadRequest)
		}},
		{"samples, not chunks", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.serve)
			defer srv.Close()
			r, err := NewRemote(RemoteOptions{URL: srv.URL, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.RawSamples(); ok {
				t.Error("remote read taken up, want the engine")
			}
		})
	}
	r, err := NewRemote(RemoteOptions{URL: "http://127.0.0.1:1", DisableRemoteRead: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.RawSamples(); ok {
		t.Error("remote read taken up with it disabled")
	}
}

func TestRemoteReadCorruptFrame(t *testing.T) {
	calls := 0
	srv := readServer(t, func(*prompb.ReadRequest) []byte {
		calls++
		f := frame(t, &prompb.ChunkedSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}}, Chunks: []prompb.Chunk{xorChunk(t, 0, 3)}})
		if calls > 1 {
			f[len(f)-1] ^= 0xff // after the probe, a flipped bit
		}
		return f
	}, "3.5.0")
	r, err := NewRemote(RemoteOptions{URL: srv.URL, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := r.RawSamples()
	if !ok || st.LeftClosed {
		t.Fatalf("remote read ok %v, left-closed %v; want ok, a Prometheus 3", ok, st.LeftClosed)
	}
	q, _ := st.Querier(0, 1)
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "x"))
	for set.Next() {
	}
	if err := set.Err(); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("a corrupt frame read as %v, want a checksum mismatch", err)
	}
}

// FuzzRemoteReadFrames feeds arbitrary streamed answers through the frame
// decoder and the series' iterators: no panic, and an error names the
// server.
func FuzzRemoteReadFrames(f *testing.F) {
	f.Add(frame(f, &prompb.ChunkedSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}}, Chunks: []prompb.Chunk{xorChunk(f, 0, 3)}}))
	f.Add([]byte{0x05, 0, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	r, err := NewRemote(RemoteOptions{URL: "http://prometheus.invalid"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		series, err := r.decodeFrames(bufio.NewReader(bytes.NewReader(body)))
		if err != nil {
			if !strings.Contains(err.Error(), r.Describe()) {
				t.Errorf("error %q does not name the server", err)
			}
			return
		}
		for _, s := range series {
			it := s.Iterator(nil)
			for it.Next() != chunkenc.ValNone {
			}
		}
	})
}

// TestRemoteReadRetried: a 502 from an overloaded front, and an answer cut
// off mid-frame, are retried as the API's calls are.
func TestRemoteReadRetried(t *testing.T) {
	calls := 0
	full := frame(t, &prompb.ChunkedSeries{Labels: []prompb.Label{{Name: "__name__", Value: "x"}}, Chunks: []prompb.Chunk{xorChunk(t, 0, 3)}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/read" {
			http.NotFound(w, r)
			return
		}
		calls++
		switch calls {
		case 2: // the first read after the probe
			http.Error(w, "upstream overloaded", http.StatusBadGateway)
		case 3:
			w.Header().Set("Content-Type", streamedChunks)
			_, _ = w.Write(full[:len(full)-3])
		default:
			w.Header().Set("Content-Type", streamedChunks)
			_, _ = w.Write(full)
		}
	}))
	defer srv.Close()
	r, err := NewRemote(RemoteOptions{URL: srv.URL, Timeout: time.Minute, Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := r.RawSamples()
	if !ok {
		t.Fatal("remote read refused")
	}
	q, _ := st.Querier(0, 1)
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "x"))
	n := 0
	for set.Next() {
		n++
	}
	if err := set.Err(); err != nil || n != 1 || calls != 4 {
		t.Errorf("after a 502 and a cut-off answer: %d series, %d calls, %v; want 1 series on the third try", n, calls, err)
	}
}
