// Package yamlfile tells a YAML file of gpulens's (a scenario, a findings
// config, a price table, a field map) from any other file a flag was given
// by mistake, before an error quotes a line of it: parsers name the
// offending key, and a key of /etc/shadow is a password hash.
package yamlfile

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Recognize returns nil when doc, the parsed document of file, is a YAML
// mapping with at least one top-level key that known accepts, or is
// empty (the parser then says what it wants). Otherwise the file is not a
// what, and the error says so quoting nothing of it; keys names the keys
// wanted, for the user.
func Recognize(file, what string, doc *yaml.Node, known func(key string) bool, keys string) error {
	if doc == nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a %s: its top level is not a YAML mapping of %s (nothing of the file is shown)", file, what, keys)
	}
	if len(top.Content) == 0 {
		return nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if k := top.Content[i]; k.Kind == yaml.ScalarNode && known(k.Value) {
			return nil
		}
	}
	return fmt.Errorf("%s: not a %s: none of its top-level keys is one of %s (nothing of the file is shown)", file, what, keys)
}
