// Package deploy holds the Helm chart and the manifests rendered from it.
// tools/chart renders the chart with Helm's own packages and holds it to
// its security promises for a matrix of values (and regenerates
// deploy/manifests/gpulens.yaml, failing when the committed file is
// stale); these tests read the committed rendering and the chart's files.
package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The chart ships copies of the generated rules and dashboards (Helm reads
// only files inside the chart). alerts' and dashboards' own tests rewrite
// and check them from the generators; this test checks the copies against
// the committed originals and the switches that ship them.

const chart = "helm/gpulens"

func TestChartCopiesMatchGenerated(t *testing.T) {
	for _, c := range []struct{ chartGlob, origDir string }{
		{"files/alerts/*.rules.yml", "../alerts"},
		{"files/dashboards/native/*.json", "../dashboards/native"},
		{"files/dashboards/dcgm-exporter/*.json", "../dashboards/dcgm-exporter"},
	} {
		copies, err := filepath.Glob(filepath.Join(chart, c.chartGlob))
		if err != nil || len(copies) == 0 {
			t.Fatalf("%s: no files (%v): run make generate", c.chartGlob, err)
		}
		origs, _ := filepath.Glob(filepath.Join(c.origDir, filepath.Base(c.chartGlob)))
		if len(origs) != len(copies) {
			t.Errorf("%s: %d copies of %d files in %s", c.chartGlob, len(copies), len(origs), c.origDir)
		}
		for _, p := range copies {
			got, _ := os.ReadFile(p)
			want, err := os.ReadFile(filepath.Join(c.origDir, filepath.Base(p)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (%v): run make generate", p, c.origDir, err)
			}
		}
	}
}

func TestRulesAndDashboardsAreSwitches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		PrometheusRule struct {
			Enabled bool   `yaml:"enabled"`
			Schema  string `yaml:"schema"`
		} `yaml:"prometheusRule"`
		GrafanaDashboards struct {
			Enabled    bool   `yaml:"enabled"`
			Schema     string `yaml:"schema"`
			Label      string `yaml:"label"`
			LabelValue string `yaml:"labelValue"`
		} `yaml:"grafanaDashboards"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	// Off by default: the PrometheusRule CRD may be absent, and the
	// rendered manifests (default values) stay plain.
	if v.PrometheusRule.Enabled || v.GrafanaDashboards.Enabled {
		t.Error("prometheusRule and grafanaDashboards must default to disabled")
	}
	if v.PrometheusRule.Schema != "native" || v.GrafanaDashboards.Schema != "native" {
		t.Error("schemas must default to native")
	}
	if v.GrafanaDashboards.Label != "grafana_dashboard" || v.GrafanaDashboards.LabelValue != "1" {
		t.Errorf("sidecar label %s=%q, want grafana_dashboard=\"1\"", v.GrafanaDashboards.Label, v.GrafanaDashboards.LabelValue)
	}
	for file, guard := range map[string]string{
		"templates/prometheusrule.yaml": "{{- if .Values.prometheusRule.enabled }}",
		"templates/dashboards.yaml":     "{{- if .Values.grafanaDashboards.enabled }}",
		// The label GPULensAttributionAllocationOnly selects on.
		"templates/servicemonitor.yaml": "{{- if .Values.exporter.processAttribution.enabled }}\n" +
			"        # Per-process attribution was asked for: the GPULensAttributionAllocationOnly\n" +
			"        # alert fires when an exporter nevertheless runs in allocation-only mode.\n" +
			"        - targetLabel: process_attribution\n          replacement: requested",
	} {
		b, err := os.ReadFile(filepath.Join(chart, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), guard) {
			t.Errorf("%s is not behind %s", file, guard)
		}
	}
	for _, o := range loadDocs(t, "manifests/gpulens.yaml") {
		if slices.Contains([]string{"PrometheusRule", "ConfigMap"}, o.str("kind")) {
			t.Errorf("manifests/gpulens.yaml (default values) has a %s %s: it is switched off by default", o.str("kind"), o.str("metadata", "name"))
		}
	}
}
