// Package dashboards builds gpulens' Grafana dashboards with the
// grafana-foundation-sdk, for gpulens' own series and for dcgm-exporter's.
// The JSON they produce is committed in this directory (native/ and
// dcgm-exporter/) and in the Helm chart; `make generate` refreshes both.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Tags are on every dashboard, so Grafana lists them together.
var Tags = []string{"gpulens", "gpu"}

// File is one generated dashboard.
type File struct {
	Name string // e.g. fleet-overview.json
	JSON []byte
}

var builders = []struct {
	name  string
	build func(chart) spec
}{
	{"fleet-overview", fleetOverview},
	{"node-gpu-detail", nodeDetail},
	{"team-efficiency", teamEfficiency},
	{"workload-drill-down", workloadDrillDown},
	{"findings", findingsDashboard},
}

// Generate builds the dashboards of a schema (native or dcgm-exporter) for
// a store whose clusters are told apart by clusterLabel (the analyzer's
// --cluster-label): the cluster variable lists its values.
func Generate(schema, clusterLabel string) ([]File, error) {
	if err := check(schema, clusterLabel); err != nil {
		return nil, err
	}
	s := newChart(schemaSet[schema], clusterLabel)
	var out []File
	for _, b := range builders {
		d, err := b.build(s).build(append(slices.Clone(Tags), s.schema()))
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", b.name, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		out = append(out, File{Name: b.name + ".json", JSON: buf.Bytes()})
	}
	return out, nil
}

// Write generates a schema's dashboards into dir, creating it.
func Write(dir, schema, clusterLabel string) ([]string, error) {
	files, err := Generate(schema, clusterLabel)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.JSON, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
