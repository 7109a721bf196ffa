package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// writeYAML prints the JSON form as YAML, as kubectl's -o yaml does: the
// same fields under the same names and in the same order, so a script may
// read either. The JSON is walked token by token into YAML nodes (which
// keep its order), not parsed as YAML: a YAML reader refuses the DEL and
// C1 characters JSON leaves raw in a label value, and sigs.k8s.io/yaml's
// JSONToYAML refuses every control character, where yaml.v3's encoder
// writes them double-quoted with escapes (TestHostileLabelValues).
func writeYAML(w io.Writer, r *Report) error {
	j, err := reportJSON(r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	doc, err := yamlNode(dec)
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

// yamlNode is the next JSON value of dec as a YAML node. Strings are
// tagged !!str, so the encoder quotes one that would read as another type
// ("true", "2026-03-09"); numbers keep JSON's digits.
func yamlNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if v == '[' {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.(string)})
			}
			c, err := yamlNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		_, err := dec.Token() // the closing delimiter
		return n, err
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, nil
	case json.Number:
		tag := "!!float"
		if _, err := v.Int64(); err == nil {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}
