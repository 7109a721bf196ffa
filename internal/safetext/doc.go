// Package safetext escapes text that came from a metrics store (label
// values: namespaces, pod and workload names, clusters) before it is
// written into an output whose syntax it could otherwise change: a YAML or
// shell comment it could end with a line break, a Markdown table cell it
// could split or turn into a link. Objects themselves are never built from
// strings: they are marshalled (analyzer/manifest); this package is for the
// words around them. It imports nothing outside the standard library, so
// that the lean analysis packages can use it.
package safetext
