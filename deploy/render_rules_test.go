package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestChartRendersRulesAndDashboards(t *testing.T) {
	for _, schema := range []string{"native", "dcgm-exporter"} {
		rulesFile := map[string]string{"native": "gpulens.rules.yml", "dcgm-exporter": "dcgm-exporter.rules.yml"}[schema]
		docs := renderChart(t, []string{"prometheusrule.yaml", "dashboards.yaml", "servicemonitor.yaml"}, map[string]any{
			"prometheusRule.enabled": true, "prometheusRule.schema": schema,
			"grafanaDashboards.enabled": true, "grafanaDashboards.schema": schema,
			"exporter.serviceMonitor.enabled": true, "exporter.processAttribution.enabled": true,
		})
		var rules, monitors int
		dashboards := map[string]bool{}
		for _, d := range docs {
			md, _ := d["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			switch d["kind"] {
			case "PrometheusRule":
				rules++
				b, err := os.ReadFile(filepath.Join("..", "alerts", rulesFile))
				if err != nil {
					t.Fatal(err)
				}
				var want map[string]any
				if err := yaml.Unmarshal(b, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(d["spec"], want) {
					t.Errorf("%s: the PrometheusRule's spec is not alerts/%s", schema, rulesFile)
				}
			case "ConfigMap":
				if labels["grafana_dashboard"] != "1" {
					t.Errorf("%s: ConfigMap %v lacks grafana_dashboard: \"1\"", schema, md["name"])
				}
				for key, v := range d["data"].(map[string]any) {
					want, err := os.ReadFile(filepath.Join("..", "dashboards", schema, key))
					if err != nil || strings.TrimSpace(v.(string)) != strings.TrimSpace(string(want)) || !json.Valid([]byte(v.(string))) {
						t.Errorf("%s: ConfigMap %v key %s is not dashboards/%s/%s (%v)", schema, md["name"], key, schema, key, err)
					}
					dashboards[key] = true
				}
			case "ServiceMonitor":
				monitors++
				ep := d["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
				relabel, _ := ep["relabelings"].([]any)
				if len(relabel) != 1 || relabel[0].(map[string]any)["targetLabel"] != "process_attribution" {
					t.Errorf("ServiceMonitor relabelings %v: want the process_attribution label", relabel)
				}
			}
		}
		if rules != 1 || len(dashboards) != 5 || monitors != 1 {
			t.Errorf("%s: %d PrometheusRules, %d dashboards, %d ServiceMonitors; want 1, 5, 1", schema, rules, len(dashboards), monitors)
		}
	}
	// Switched off (the defaults), nothing renders.
	if docs := renderChart(t, []string{"prometheusrule.yaml", "dashboards.yaml"}, nil); len(docs) != 0 {
		t.Errorf("defaults render %d objects, want none", len(docs))
	}
}
