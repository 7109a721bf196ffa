package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/alecthomas/units"
	"github.com/prometheus/client_golang/api"
)

// DefaultMaxReplyBytes is the CLI's default for RemoteOptions.MaxReplyBytes.
//
// The largest reply a healthy analysis asks for is one pass's range query
// over one shard, through PromQL (a store without remote read): the shard
// planner keeps a query's points under --query.max-samples (40M by
// default) divided by the schema's points per series and step (1.75 or
// 4), so at most about 10-23M points, which Prometheus's JSON writes in
// 17-36 bytes each (`[1764950400,"0.5"],`): a few hundred MB, more only
// where the budget is raised (then raise this too, or lower the budget for
// smaller shards). A reply cut off at the limit costs about the limit
// (readReply), and a report that meets two before it stops peaked at
// 0.75-1.0 GiB (docs/BENCHMARKS.md, "A reply too large"): under the 1.5
// GiB issue 52 asks of a 600 MB reply, and well inside the 4 GiB the
// 10,000-GPU week's report is documented to take. The chart, whose
// analyzer runs in 512Mi, passes less (deploy/helm: analyzer.maxReplySize).
const DefaultMaxReplyBytes = 512 << 20

// ReplyTooLargeError is a reply over RemoteOptions.MaxReplyBytes. It is
// not retried: the same question gets the same answer.
type ReplyTooLargeError struct {
	// Endpoint is the API path asked, e.g. /api/v1/query_range.
	Endpoint string
	// Limit is the limit in bytes; Flag names the setting that raises it.
	Limit int64
	Flag  string
	// Length is the reply's Content-Length, where the server announced
	// one over the limit (nothing was read then); -1 where it did not
	// and the reply was cut off at the limit.
	Length int64
	// Query is the PromQL asked, where the call was a query.
	Query string
}

func (e *ReplyTooLargeError) Error() string {
	what := "is over"
	if e.Length >= 0 {
		what = fmt.Sprintf("announces %d bytes, over", e.Length)
	}
	msg := fmt.Sprintf("the reply to %s %s the %s limit of %s: raise %s (0: no limit) if the store's answers are this large",
		e.Endpoint, what, units.Base2Bytes(e.Limit), e.Flag, e.Flag)
	if e.Query != "" {
		q := e.Query
		if len(q) > maxDetail {
			q = q[:maxDetail] + "…"
		}
		msg += "; query: " + q
	}
	return msg
}

// replyLimit caps every reply body at limit bytes, as Prometheus's
// body_size_limit caps a scrape's (scrape/scrape.go, readResponse: an
// io.LimitReader, and errBodySizeLimit when it fills;
// docs/configuration/configuration.md: "An uncompressed response body
// larger than this many bytes will cause the scrape to fail. 0 means no
// limit."). It wraps the client's whole transport, so it sees the body as
// net/http hands it over, gunzipped, and caps every endpoint alike: query,
// query_range, the label and series APIs, and remote read.
type replyLimit struct {
	next  http.RoundTripper
	limit int64
	flag  string
}

func (t *replyLimit) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	// A length announced over the limit fails before a byte is read.
	// net/http leaves ContentLength -1 on a body it decompresses.
	if resp.ContentLength > t.limit {
		_ = resp.Body.Close()
		return nil, &ReplyTooLargeError{Endpoint: req.URL.Path, Limit: t.limit, Flag: t.flag, Length: resp.ContentLength}
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.limit, err: &ReplyTooLargeError{Endpoint: req.URL.Path, Limit: t.limit, Flag: t.flag, Length: -1}}
	return resp, nil
}

// CloseIdleConnections reaches the transport, as http.Client's does.
func (t *replyLimit) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cappedBody is a body that fails once more than left bytes arrive. It
// reads one byte past the limit to tell a reply of exactly the limit,
// which is whole, from a longer one.
type cappedBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err
	}
	return n, err
}

// readingClient is the API's client reading its replies through
// readReply, whose memory stays near the reply's size; otherwise as api's
// httpClient.Do: the body read in a goroutine, and ctx.Err() where ctx
// ends first.
type readingClient struct {
	api.Client
	hc    *http.Client
	limit int64
}

func (c readingClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, err := c.hc.Do(req.WithContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	var body []byte
	var readErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		body, readErr = readReply(resp.Body, resp.ContentLength, c.limit)
	}()
	select {
	case <-ctx.Done():
		_ = resp.Body.Close()
		return resp, nil, ctx.Err()
	case <-done:
		_ = resp.Body.Close()
		return resp, body, readErr
	}
}

// Segments of a reply of unknown length: small first, as most replies
// are, then larger, so a large reply is not thousands of allocations.
const (
	firstSegment = 64 << 10
	maxSegment   = 8 << 20
	// maxPresize bounds the buffer a Content-Length alone sizes where
	// there is no limit: a server may announce more than it sends.
	maxPresize = 64 << 20
)

// readReply reads a reply whole, for the API's decoder. A length
// announced within the limit is read into one buffer of that size; an
// unknown one into segments that are joined once, at the end. A reply cut
// off at the limit has then cost about the limit: a buffer that doubles as
// it fills (bytes.Buffer, as client_golang's httpClient.Do reads) holds
// the old copy beside the new while it grows, and left a 600 MB reply cut
// off at 512 MiB at 3.7 GiB of RSS over two such replies (issue 52).
func readReply(body io.Reader, length, limit int64) ([]byte, error) {
	if length >= 0 && (length <= limit || length <= maxPresize) {
		b := make([]byte, length)
		_, err := io.ReadFull(body, b)
		return b, err
	}
	var segs [][]byte
	size := firstSegment
	total := 0
	for eof := false; !eof; size = min(2*size, maxSegment) {
		seg := make([]byte, size)
		n := 0
		// Only io.EOF ends a reply: a chunked one cut off mid-chunk
		// ends in io.ErrUnexpectedEOF, the network's failure.
		for n < len(seg) {
			k, err := body.Read(seg[n:])
			n += k
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return nil, err
			}
		}
		total += n
		segs = append(segs, seg[:n])
	}
	if len(segs) == 1 {
		return segs[0], nil
	}
	out := make([]byte, 0, total)
	for i, seg := range segs {
		out = append(out, seg...)
		segs[i] = nil // each segment goes as soon as it is copied
	}
	return out, nil
}

// tooLarge is the ReplyTooLargeError in err, if any.
func tooLarge(err error) (*ReplyTooLargeError, bool) {
	var e *ReplyTooLargeError
	ok := errors.As(err, &e)
	return e, ok
}
