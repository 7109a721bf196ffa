package source

import (
	"fmt"
	"strings"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// PartialResponseError is a successful API answer that came with warnings
// saying the data behind it may be incomplete: a Thanos Query (or another
// federating front: Cortex, Mimir, Promxy) whose store failed answers with
// the others' series and a warning, and summing those would report less GPU
// usage than there was, with nothing in the figures to show it. The analysis
// fails instead; rerun it when the stores are back.
//
// PromQL's own annotations ("PromQL info: …", "PromQL warning: …"), which
// say something about the query's evaluation and not about missing stores,
// are only logged, as the embedded engine does.
type PartialResponseError struct {
	// Source describes the server, Op the API call.
	Source, Op string
	// Warnings are the server's, redacted of secrets.
	Warnings []string
}

func (e *PartialResponseError) Error() string {
	return fmt.Sprintf("%s: %s: the answer may be partial (the server warned: %s); "+
		"refusing it rather than under-report GPU usage: check the stores behind the query front",
		e.Source, e.Op, strings.Join(e.Warnings, "; "))
}

// promQLAnnotation reports whether w is one of PromQL's annotations rather
// than a front's warning about its stores.
func promQLAnnotation(w string) bool {
	return strings.HasPrefix(w, "PromQL info:") || strings.HasPrefix(w, "PromQL warning:")
}

// partial is the error for a successful answer's warnings: nil when there
// are none or all are PromQL annotations.
func (r *Remote) partial(op string, warnings v1.Warnings) error {
	var other []string
	for _, w := range warnings {
		if !promQLAnnotation(w) {
			other = append(other, r.redact.apply(w))
		}
	}
	if len(other) == 0 {
		return nil
	}
	return &PartialResponseError{Source: r.describe, Op: op, Warnings: other}
}
