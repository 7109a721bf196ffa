package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang/snappy"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"gopkg.in/yaml.v3"
)

// remoteRead is a store's Prometheus remote-read endpoint (/api/v1/read),
// asked for streamed XOR chunks: the samples as the store's TSDB holds
// them, stale markers included, a frame at a time. Prometheus, Mimir and
// Cortex serve it; VictoriaMetrics and Thanos Query do not (they refuse
// the path), and the analysis then asks their PromQL engine.
type remoteRead struct {
	url  *url.URL
	once sync.Once
	err  error
	// ext are the server's external labels, which it adds to the series
	// it sends and its PromQL API does not show: they are taken off.
	ext map[string]string
	// leftClosed: the server is a Prometheus 2 (RawStore.LeftClosed).
	leftClosed bool
	// disabled is RemoteOptions.DisableRemoteRead.
	disabled bool
}

// maxFrame bounds one frame of a streamed answer; Prometheus sends 1 MiB
// (--storage.remote.read-max-bytes-in-frame) and one series' chunks at
// least.
const maxFrame = 64 << 20

const streamedChunks = "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse"

var _ RawReader = (*Remote)(nil)

// RawSamples probes the remote-read endpoint once and says whether the
// analysis can read raw samples through it, with a log line either way.
// The lookback is Prometheus's default: a server run with another
// --query.lookback-delta answers its own PromQL with that one.
func (r *Remote) RawSamples() (RawStore, bool) {
	r.read.once.Do(func() {
		if r.read.disabled {
			r.read.err = errors.New("remote read disabled")
			r.logger.Info("remote read disabled: the analysis's passes go through PromQL", "source", r.describe)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		defer cancel()
		now := time.Now().UnixMilli()
		// A selector that matches nothing: the endpoint's answer, or its
		// refusal.
		_, r.read.err = r.readChunks(ctx, now-time.Minute.Milliseconds(), now,
			[]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "gpulens_remote_read_probe")})
		if r.read.err != nil {
			r.logger.Info("remote read unavailable: the analysis's passes go through PromQL",
				"source", r.describe, "err", r.read.err)
			return
		}
		r.read.ext = r.externalLabels(ctx)
		r.read.leftClosed = r.prometheus2(ctx)
		r.logger.Info("the analysis's passes read raw samples through remote read", "source", r.describe, "url", r.read.url.Redacted())
	})
	if r.read.err != nil {
		return RawStore{}, false
	}
	return RawStore{
		Queryable:  readQueryable{r},
		Lookback:   lookbackDelta,
		LeftClosed: r.read.leftClosed,
	}, true
}

// prometheus2 says whether the server is a Prometheus 2, whose windows
// are closed ([t-5m, t]); a server that does not say is taken for a 3.
func (r *Remote) prometheus2(ctx context.Context) bool {
	var info v1.BuildinfoResult
	if err := r.do(ctx, "reading the build information", func(ctx context.Context) (v1.Warnings, error) {
		var err error
		info, err = r.api.Buildinfo(ctx)
		return nil, err
	}); err != nil {
		return false
	}
	return strings.HasPrefix(info.Version, "2.")
}

// externalLabels are the server's global external labels, from its
// configuration; none where it does not say (Mimir, or no rights).
func (r *Remote) externalLabels(ctx context.Context) map[string]string {
	var cfg v1.ConfigResult
	if err := r.do(ctx, "reading the configuration", func(ctx context.Context) (v1.Warnings, error) {
		var err error
		cfg, err = r.api.Config(ctx)
		return nil, err
	}); err != nil {
		return nil
	}
	var parsed struct {
		Global struct {
			ExternalLabels map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
	}
	if yaml.Unmarshal([]byte(cfg.YAML), &parsed) != nil {
		return nil
	}
	return parsed.Global.ExternalLabels
}

// readChunks asks for the series that ms select in [mint, maxt] and reads
// the whole streamed answer, retried as the API's calls are (Remote.do): a
// network error, a 429 or a 5xx, or an answer cut off mid-stream.
func (r *Remote) readChunks(ctx context.Context, mint, maxt int64, ms []*labels.Matcher) ([]*rawSeries, error) {
	for try := 0; ; try++ {
		a := &attempt{}
		series, err := r.readChunksOnce(ctx, a, mint, maxt, ms)
		if err == nil {
			return series, nil
		}
		if try >= r.retries || !retryable(ctx, a, err) {
			return nil, err
		}
		wait := r.wait(try, a.retryAfter)
		r.logger.Warn("retrying remote read", "source", r.describe, "err", err, "attempt", try+1, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (gave up retrying: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// readChunksOnce is one attempt; a records the answer's status, none where
// the connection failed or the answer was cut off.
func (r *Remote) readChunksOnce(ctx context.Context, a *attempt, mint, maxt int64, ms []*labels.Matcher) ([]*rawSeries, error) {
	q := &prompb.Query{StartTimestampMs: mint, EndTimestampMs: maxt}
	for _, m := range ms {
		var t prompb.LabelMatcher_Type
		switch m.Type {
		case labels.MatchEqual:
			t = prompb.LabelMatcher_EQ
		case labels.MatchNotEqual:
			t = prompb.LabelMatcher_NEQ
		case labels.MatchRegexp:
			t = prompb.LabelMatcher_RE
		case labels.MatchNotRegexp:
			t = prompb.LabelMatcher_NRE
		}
		q.Matchers = append(q.Matchers, &prompb.LabelMatcher{Type: t, Name: m.Name, Value: m.Value})
	}
	req := &prompb.ReadRequest{Queries: []*prompb.Query{q}, AcceptedResponseTypes: []prompb.ReadRequest_ResponseType{prompb.ReadRequest_STREAMED_XOR_CHUNKS}}
	data, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.read.url.String(), bytes.NewReader(snappy.Encode(nil, data)))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Encoding", "snappy")
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("X-Prometheus-Remote-Read-Version", "0.1.0")
	resp, err := r.client.Do(hr)
	if big, ok := tooLarge(err); ok {
		return nil, &RemoteError{Source: r.describe, Op: "remote read", Msg: big.Error(), err: big}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: remote read: %s", r.describe, r.redact.apply(err.Error()))
	}
	defer resp.Body.Close()
	a.status, a.statusText = resp.StatusCode, resp.Status
	a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDetail))
		return nil, fmt.Errorf("%s: remote read: %s: %s", r.describe, resp.Status, r.redact.apply(strings.TrimSpace(string(body))))
	}
	if ct := resp.Header.Get("Content-Type"); ct != streamedChunks {
		return nil, fmt.Errorf("%s: remote read answered %q, not streamed chunks", r.describe, ct)
	}
	series, err := r.decodeFrames(bufio.NewReader(resp.Body))
	if big, ok := tooLarge(err); ok {
		return nil, &RemoteError{Source: r.describe, Op: "remote read", Msg: big.Error(), err: big}
	}
	if errors.Is(err, errCutOff) {
		a.status = 0 // the network's failure, not the server's answer
	}
	return series, err
}

// errCutOff marks an answer whose stream ended or broke mid-frame.
var errCutOff = errors.New("answer cut off")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeFrames reads the frames of a streamed answer: each a uvarint
// length, a big-endian CRC-32C and a ChunkedReadResponse. A series whose
// chunks exceed a frame continues in the next one.
func (r *Remote) decodeFrames(br *bufio.Reader) ([]*rawSeries, error) {
	var out []*rawSeries
	var last *rawSeries
	for {
		size, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: remote read frame: %w: %w", r.describe, errCutOff, err)
		}
		if size > maxFrame {
			return nil, fmt.Errorf("%s: remote read frame of %d bytes, over %d", r.describe, size, maxFrame)
		}
		var sum uint32
		if err := binary.Read(br, binary.BigEndian, &sum); err != nil {
			return nil, fmt.Errorf("%s: remote read frame: %w: %w", r.describe, errCutOff, err)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("%s: remote read frame: %w: %w", r.describe, errCutOff, err)
		}
		if crc32.Checksum(data, castagnoli) != sum {
			return nil, fmt.Errorf("%s: remote read frame: checksum mismatch", r.describe)
		}
		var res prompb.ChunkedReadResponse
		if err := res.Unmarshal(data); err != nil {
			return nil, fmt.Errorf("%s: remote read frame: %w", r.describe, err)
		}
		for _, cs := range res.ChunkedSeries {
			b := labels.NewScratchBuilder(len(cs.Labels))
			for _, l := range cs.Labels {
				if v, ok := r.read.ext[l.Name]; ok && v == l.Value {
					continue
				}
				b.Add(l.Name, l.Value)
			}
			b.Sort()
			lset := b.Labels()
			metas, err := decodeChunks(cs.Chunks)
			if err != nil {
				return nil, fmt.Errorf("%s: remote read of %s: %w", r.describe, lset, err)
			}
			if last != nil && labels.Equal(last.lset, lset) {
				last.metas = append(last.metas, metas...)
				continue
			}
			last = &rawSeries{lset: lset, metas: metas}
			out = append(out, last)
		}
	}
}

// rawSeries is one series' chunks as remote read sent them, in time order.
type rawSeries struct {
	lset  labels.Labels
	metas []chunks.Meta
}

func (s *rawSeries) Labels() labels.Labels { return s.lset }

// Iterator is the series' samples, its chunks merged as Prometheus merges
// a series' chunks.
func (s *rawSeries) Iterator(chunkenc.Iterator) chunkenc.Iterator {
	its := make([]chunkenc.Iterator, len(s.metas))
	for i, m := range s.metas {
		its[i] = m.Chunk.Iterator(nil)
	}
	return storage.ChainSampleIteratorFromIterators(nil, its)
}

// rawChunks is a rawSeries as its chunks, which the scan decodes itself.
type rawChunks struct{ *rawSeries }

func (s rawChunks) Iterator(chunks.Iterator) chunks.Iterator {
	return storage.NewListChunkSeriesIterator(s.metas...)
}

// decodeChunks reads a frame's chunks of one series. prompb's encodings
// are chunkenc's own numbers, which Prometheus's remote-read codec casts
// as they are; FromData refuses an unknown one.
func decodeChunks(in []prompb.Chunk) ([]chunks.Meta, error) {
	out := make([]chunks.Meta, 0, len(in))
	for _, c := range in {
		ch, err := chunkenc.FromData(chunkenc.Encoding(c.Type), c.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, chunks.Meta{Chunk: ch, MinTime: c.MinTimeMs, MaxTime: c.MaxTimeMs})
	}
	return out, nil
}

// readQueryable is remote read as a storage.Queryable and
// storage.ChunkQueryable, for the scan.
type readQueryable struct{ r *Remote }

func (q readQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	return &readQuerier{r: q.r, mint: mint, maxt: maxt}, nil
}

func (q readQueryable) ChunkQuerier(mint, maxt int64) (storage.ChunkQuerier, error) {
	return readChunkQuerier{&readQuerier{r: q.r, mint: mint, maxt: maxt}}, nil
}

// readQuerier is remote read as a storage.Querier: Select only.
type readQuerier struct {
	r          *Remote
	mint, maxt int64
}

func (q *readQuerier) read(ctx context.Context, hints *storage.SelectHints, ms []*labels.Matcher) ([]*rawSeries, error) {
	mint, maxt := q.mint, q.maxt
	if hints != nil {
		mint, maxt = max(mint, hints.Start), min(maxt, hints.End)
	}
	return q.r.readChunks(ctx, mint, maxt, ms)
}

func (q *readQuerier) Select(ctx context.Context, _ bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	series, err := q.read(ctx, hints, ms)
	if err != nil {
		return storage.ErrSeriesSet(err)
	}
	return &listSet{series: series, i: -1}
}

func (*readQuerier) LabelValues(context.Context, string, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, errors.New("remote read serves series, not label values")
}

func (*readQuerier) LabelNames(context.Context, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, errors.New("remote read serves series, not label names")
}

func (*readQuerier) Close() error { return nil }

// readChunkQuerier is remote read as a storage.ChunkQuerier.
type readChunkQuerier struct{ *readQuerier }

func (q readChunkQuerier) Select(ctx context.Context, _ bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.ChunkSeriesSet {
	series, err := q.read(ctx, hints, ms)
	if err != nil {
		return storage.ErrChunkSeriesSet(err)
	}
	return &listChunkSet{series: series, i: -1}
}

type listChunkSet struct {
	series []*rawSeries
	i      int
}

func (s *listChunkSet) Next() bool                      { s.i++; return s.i < len(s.series) }
func (s *listChunkSet) At() storage.ChunkSeries         { return rawChunks{s.series[s.i]} }
func (*listChunkSet) Err() error                        { return nil }
func (*listChunkSet) Warnings() annotations.Annotations { return nil }

type listSet struct {
	series []*rawSeries
	i      int
}

func (s *listSet) Next() bool                      { s.i++; return s.i < len(s.series) }
func (s *listSet) At() storage.Series              { return s.series[s.i] }
func (*listSet) Err() error                        { return nil }
func (*listSet) Warnings() annotations.Annotations { return nil }
