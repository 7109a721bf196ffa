package manifest

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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

func mustYAMLBytes(v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // JSON-shaped values always marshal
	}
	return b
}

func mustYAML(v any) string { return string(mustYAMLBytes(v)) }
