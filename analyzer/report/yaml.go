package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// writeYAML prints the JSON form (reportValue, its nulls included) as
// YAML, as kubectl's -o yaml does: the same fields under the same names
// and in the same order, so a script may read either. The JSON is not
// parsed as YAML: a YAML reader refuses the DEL and C1 characters JSON
// leaves raw in a label value, and sigs.k8s.io/yaml's JSONToYAML refuses
// every control character, where yaml.v3's encoder writes them
// double-quoted with escapes (TestHostileLabelValues).
func writeYAML(w io.Writer, r *Report) error {
	root, err := reportValue(r)
	if err != nil {
		return err
	}
	doc, err := root.yamlNode()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// yamlNode is v as a YAML node. Strings are tagged !!str, so the encoder
// quotes one that would read as another type ("true", "2026-03-09");
// numbers keep JSON's digits.
func (v *value) yamlNode() (*yaml.Node, error) {
	switch {
	case v.object || v.array:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if v.array {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		for i, c := range v.vals {
			if v.object {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.keys[i]})
			}
			cn, err := c.yamlNode()
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, cn)
		}
		return n, nil
	case strings.HasPrefix(v.raw, `"`):
		var str string
		if err := json.Unmarshal([]byte(v.raw), &str); err != nil {
			return nil, err
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: str}, nil
	case v.raw == "null":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case v.raw == "true" || v.raw == "false":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v.raw}, nil
	case strings.ContainsAny(v.raw, ".eE"):
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: v.raw}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v.raw}, nil
}
