// Package schemas is the one list of the schemas gpulens reads: the CLI's
// --schema, detection, and the dashboards' and rules' sets name them from
// here. A new exporter is a signals.Schema added to All; readers plan by
// its signals.Traits, never by its name.
package schemas

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// All is every schema, in detection's order of preference (gpulens's own
// series first: they attribute shared GPUs precisely); fields, where not
// nil, maps dcgm-exporter's fields onto the store's own names
// (--dcgm-fields).
func All(fields *dcgm.FieldMap) []signals.Schema {
	return []signals.Schema{native.Schema{}, dcgm.Schema{Fields: fields}}
}

// Names are All's names, in --schema's words.
func Names() []string {
	var out []string
	for _, s := range All(nil) {
		out = append(out, s.Name())
	}
	return out
}

// ByName is the schema called name.
func ByName(name string, fields *dcgm.FieldMap) (signals.Schema, error) {
	for _, s := range All(fields) {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown schema %q, want one of %s", name, strings.Join(Names(), ", "))
}
