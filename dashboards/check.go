package dashboards

import (
	"fmt"
	"strings"

	"github.com/prometheus/common/model"
)

// InputError is a schema or cluster label the dashboards cannot be built
// for; its message names the flag that gives it (gpulens dashboards
// --schema, --cluster-label), as the analyzer's own errors do.
type InputError struct {
	Flag string
	Err  error
}

func (e *InputError) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// check refuses, before anything is built or written, a schema the
// dashboards are not drawn for and a cluster label PromQL cannot name.
func check(schema, clusterLabel string) error {
	if _, ok := schemaSet[schema]; !ok {
		return &InputError{Flag: "--schema", Err: fmt.Errorf("%q is not one of %s", schema, strings.Join(Schemas(), ", "))}
	}
	if !model.LabelName(clusterLabel).IsValidLegacy() {
		return &InputError{Flag: "--cluster-label", Err: fmt.Errorf("%q is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", clusterLabel)}
	}
	return nil
}
