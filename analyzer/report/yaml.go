package report

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"
)

// writeYAML prints the JSON form as YAML, as kubectl's -o yaml does: the
// same fields under the same names, so a script may read either.
func writeYAML(w io.Writer, r *Report) error {
	j, err := json.Marshal(r)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
