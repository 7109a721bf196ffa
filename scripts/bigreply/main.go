// Command bigreply is a Prometheus API that answers every query with a
// reply too large to hold, for scripts/bench-bigreply.sh (issue 52): a
// well-formed JSON reply of -size bytes, of the shape each endpoint's
// decoder wants, made as it is sent (a head, one element repeated, a
// tail), so the server's own memory stays flat whatever the size. Remote
// read is refused (404), as VictoriaMetrics and Thanos Query refuse it, so
// the analysis asks the PromQL API.
//
// It prints the address it listens on, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
)

func main() {
	size := flag.Int64("size", 600_000_000, "bytes of each reply")
	announce := flag.Bool("content-length", false, "announce each reply's length; without it the reply is sent chunked")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(l.Addr().String())
	var sent atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/read" {
			http.NotFound(w, r)
			return
		}
		head, elem, tail := parts(r.URL.Path)
		n := (*size - int64(len(head)) - int64(len(tail)) + int64(len(elem)) - 1) / int64(len(elem))
		w.Header().Set("Content-Type", "application/json")
		if *announce {
			w.Header().Set("Content-Length", strconv.FormatInt(int64(len(head))+n*int64(len(elem))+int64(len(tail)), 10))
		}
		// Elements go out 64 KiB at a time, not one write each.
		batch := make([]byte, 0, 64<<10)
		var wrote int64
		defer func() {
			fmt.Fprintf(os.Stderr, "bigreply: %s %s: %d bytes written\n", r.Method, r.URL.Path, wrote)
			sent.Add(wrote)
		}()
		write := func(p []byte) bool {
			k, err := w.Write(p)
			wrote += int64(k)
			return err == nil
		}
		batch = append(batch, head...)
		for range n {
			if len(batch)+len(elem) > cap(batch) {
				if !write(batch) {
					return
				}
				batch = batch[:0]
			}
			batch = append(batch, elem...)
		}
		write(append(batch, tail...))
	})
	log.Fatal(http.Serve(l, h))
}

// parts is a reply of the endpoint's shape: a vector, a matrix of one
// endless series, or (the label and series APIs) a list of names.
func parts(path string) (head, elem, tail []byte) {
	switch path {
	case "/api/v1/query":
		return []byte(`{"status":"success","data":{"resultType":"vector","result":[`),
			[]byte(`{"metric":{"gpu":"0"},"value":[1700000000,"0.5"]},`), []byte(`{"metric":{"gpu":"1"},"value":[1700000000,"0.5"]}]}}`)
	case "/api/v1/query_range":
		return []byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"gpu":"0"},"values":[`),
			[]byte(`[1700000000,"0.5"],`), []byte(`[1700000060,"0.5"]]}]}}`)
	default:
		return []byte(`{"status":"success","data":[`), []byte(`"gpulens_gpu_info",`), []byte(`"up"]}`)
	}
}
