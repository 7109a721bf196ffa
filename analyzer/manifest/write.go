package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/internal/safetext"
)

// Write writes docs as one YAML stream for 'kubectl apply --server-side
// -f': every document an object with apiVersion, kind and metadata, its
// comments above it; a ClusterQueue's JSON patch as a kustomize patch (its
// target and the patch); words alone above the next document, or at the
// end. empty is said when there is nothing.
func Write(w io.Writer, docs []Doc, empty string) error {
	var buf bytes.Buffer
	var pending []string
	n := 0
	for _, d := range docs {
		lines := d.Comments
		if d.Cluster != "" {
			// kubectl's commands are for that cluster's context.
			lines = append([]string{"cluster: " + d.Cluster}, lines...)
		}
		if d.Object == nil && d.JSONPatch == nil {
			if d.ManifestOnly != nil {
				// Not for the cluster: the patch in words.
				lines = append(lines, yamlComment(d.ManifestOnly)...)
			}
			pending = append(pending, lines...)
			continue
		}
		if n > 0 {
			buf.WriteString("---\n")
		}
		n++
		writeComments(&buf, pending)
		pending = nil
		writeComments(&buf, lines)
		var v any = d.Object
		if d.JSONPatch != nil {
			v = jsonPatchEntry(d)
		}
		buf.Write(mustYAMLBytes(v))
	}
	if len(pending) > 0 {
		if n > 0 {
			buf.WriteString("---\n")
		}
		writeComments(&buf, pending)
	}
	if n == 0 && len(pending) == 0 {
		writeComments(&buf, []string{empty})
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonPatchEntry is d as an entry of a kustomization's patches.
func jsonPatchEntry(d Doc) map[string]any {
	return map[string]any{"target": d.Target, "patch": strings.TrimRight(string(mustYAMLBytes(d.JSONPatch)), "\n")}
}

// writeComments writes each line as a comment; a line from the store
// cannot end it (safetext.Comment).
func writeComments(buf *bytes.Buffer, lines []string) {
	for _, l := range lines {
		buf.WriteString(strings.TrimRight("# "+safetext.Comment(l), " ") + "\n")
	}
}

// mustYAMLBytes marshals v as sigs.k8s.io/yaml does (JSON, then YAML),
// with one step between: the characters a YAML parser reads as line
// breaks or refuses (NEL, C1 controls, a byte order mark), which JSON
// leaves raw in a string, are written as JSON escapes first; a name from
// the store holding one would otherwise fail to marshal.
func mustYAMLBytes(v any) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // JSON-shaped values always marshal
	}
	b, err := yaml.JSONToYAML(yamlSafeJSON(j))
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // valid JSON of printable characters
	}
	return b
}

// yamlSafeJSON escapes, in JSON text, every rune outside YAML's printable
// set, and NEL, LS and PS. Outside its strings JSON is ASCII, so every
// such rune is in a string, where \uXXXX means the same.
func yamlSafeJSON(j []byte) []byte {
	printable := func(r rune) bool {
		return r == 0x9 || r == 0xa || r == 0xd || (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029) ||
			(r >= 0xe000 && r <= 0xfffd && r != 0xfeff) || r >= 0x10000
	}
	if utf8.Valid(j) && !bytes.ContainsFunc(j, func(r rune) bool { return !printable(r) }) {
		return j
	}
	var out bytes.Buffer
	for _, r := range string(j) {
		if printable(r) {
			out.WriteRune(r)
		} else {
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}

func mustYAML(v any) string { return string(mustYAMLBytes(v)) }
