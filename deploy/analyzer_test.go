package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// doc is one rendered object, read loosely: the tests below walk paths.
type doc map[string]any

func (d doc) get(path ...any) any {
	var cur any = map[string]any(d)
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := cur.(map[string]any)
			cur = m[k]
		case int:
			l, _ := cur.([]any)
			if k >= len(l) {
				return nil
			}
			cur = l[k]
		}
	}
	return cur
}

func (d doc) str(path ...any) string { s, _ := d.get(path...).(string); return s }

func loadDocs(t *testing.T, path string) []doc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []doc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		// A plain map, not a doc: yaml.v3 would make every nested map a
		// doc too.
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, doc(m))
		}
	}
}

func byKindName(docs []doc, kind, name string) doc {
	for _, d := range docs {
		if d.str("kind") == kind && d.str("metadata", "name") == name {
			return d
		}
	}
	return nil
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestAnalyzerDeployment(t *testing.T) {
	docs := loadDocs(t, "manifests/gpulens.yaml")
	dep := byKindName(docs, "Deployment", "gpulens-analyzer")
	if dep == nil {
		t.Fatal("no gpulens-analyzer Deployment")
	}
	pod := []any{"spec", "template", "spec"}
	c := append(pod, "containers", 0)
	args := strs(dep.get(append(c, "args")...))
	if args[0] != "serve" || !slices.Contains(args, "--web.listen-address=:9846") || !slices.Contains(args, "--interval=15m") {
		t.Errorf("analyzer args %v", args)
	}
	if dep.get(append(pod, "securityContext", "runAsNonRoot")...) != true || dep.get(append(pod, "securityContext", "runAsUser")...) == 0 {
		t.Error("the analyzer must run as non-root")
	}
	if dep.get(append(c, "securityContext", "readOnlyRootFilesystem")...) != true ||
		!slices.Equal(strs(dep.get(append(c, "securityContext", "capabilities", "drop")...)), []string{"ALL"}) {
		t.Error("the analyzer needs no writable root and no capability")
	}
	if dep.str(append(c, "readinessProbe", "httpGet", "path")...) != "/readyz" || dep.str(append(c, "livenessProbe", "httpGet", "path")...) != "/healthz" {
		t.Error("probes: readiness on /readyz, liveness on /healthz")
	}
	if dep.str(append(pod, "serviceAccountName")...) != "gpulens-analyzer" {
		t.Error("the analyzer runs under its own ServiceAccount")
	}
	svc := byKindName(docs, "Service", "gpulens-analyzer")
	if svc == nil || svc.str("spec", "selector", "app.kubernetes.io/component") != "analyzer" {
		t.Error("no Service selecting the analyzer")
	}

	cj := byKindName(docs, "CronJob", "gpulens-analyzer-weekly-report")
	if cj == nil {
		t.Fatal("no weekly report CronJob")
	}
	jc := []any{"spec", "jobTemplate", "spec", "template", "spec", "containers", 0}
	if a := strs(cj.get(append(jc, "args")...)); a[0] != "report" || !slices.Contains(a, "--since=7d") {
		t.Errorf("weekly report args %v", a)
	}

	ds := byKindName(docs, "DaemonSet", "gpulens-exporter")
	env := map[string]string{}
	for _, e := range ds.get("spec", "template", "spec", "containers", 0, "env").([]any) {
		m := e.(map[string]any)
		if v, ok := m["value"].(string); ok {
			env[m["name"].(string)] = v
		}
	}
	if env["NVIDIA_VISIBLE_DEVICES"] != "all" || env["NVIDIA_DRIVER_CAPABILITIES"] != "utility" {
		t.Errorf("exporter env %v: the NVIDIA runtime must mount libnvidia-ml into a pod that requests no GPU", env)
	}
}

// rule is one atom of an RBAC rule.
type rule struct{ group, resource, verb, name string }

func atoms(d doc) []rule {
	var out []rule
	for _, r := range d.get("rules").([]any) {
		m := doc(r.(map[string]any))
		names := []string{""}
		if m["resourceNames"] != nil {
			names = strs(m["resourceNames"])
		}
		for _, g := range strs(m["apiGroups"]) {
			for _, res := range strs(m["resources"]) {
				for _, v := range strs(m["verbs"]) {
					for _, n := range names {
						out = append(out, rule{g, res, v, n})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b rule) int {
		return strings.Compare(a.group+a.resource+a.verb+a.name, b.group+b.resource+b.verb+b.name)
	})
	return out
}

// TestAnalyzerRBACIsTheInventorys holds the chart's analyzer roles to the
// rules analyzer/inventory's own test proves exact: nothing more.
func TestAnalyzerRBACIsTheInventorys(t *testing.T) {
	want := loadDocs(t, "../analyzer/inventory/kube/testdata/rbac.yaml")
	docs := loadDocs(t, "manifests/gpulens.yaml")
	for _, tt := range []struct{ kind, chartName, invName string }{
		{"ClusterRole", "gpulens-analyzer", "gpulens-analyzer"},
		{"Role", "gpulens-analyzer-device-plugin-config", "gpulens-analyzer-device-plugin-config"},
	} {
		got := byKindName(docs, tt.kind, tt.chartName)
		ref := byKindName(want, tt.kind, tt.invName)
		if got == nil || ref == nil {
			t.Fatalf("%s %s missing", tt.kind, tt.chartName)
		}
		if !slices.Equal(atoms(got), atoms(ref)) {
			t.Errorf("%s %s grants %v; the inventory needs exactly %v", tt.kind, tt.chartName, atoms(got), atoms(ref))
		}
		if tt.kind == "Role" && got.str("metadata", "namespace") != ref.str("metadata", "namespace") {
			t.Errorf("Role in %s, the inventory reads %s", got.str("metadata", "namespace"), ref.str("metadata", "namespace"))
		}
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, d := range docs {
			if d.str("kind") == kind && strings.HasPrefix(d.str("metadata", "name"), "gpulens-analyzer") &&
				d.str("subjects", 0, "name") != "gpulens-analyzer" {
				t.Errorf("%s %s binds %s", kind, d.str("metadata", "name"), d.str("subjects", 0, "name"))
			}
		}
	}
}

// TestRenderedCoversChart checks that default values enable every
// template but the optional ones, which need the Prometheus Operator's
// CRDs or a Grafana sidecar: a plain install gets the whole of gpulens.
func TestRenderedCoversChart(t *testing.T) {
	b, err := os.ReadFile("manifests/gpulens.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tpls, _ := filepath.Glob("helm/gpulens/templates/*.yaml")
	for _, p := range tpls {
		name := filepath.Base(p)
		// Off by default: they need the Prometheus Operator's CRDs or a
		// Grafana sidecar.
		// gpulens reclaim: off by default, it changes workloads where
		// analyzer.reclaim.namespaces says (tools/chart's reclaim entries).
		if strings.HasSuffix(name, "servicemonitor.yaml") || name == "prometheusrule.yaml" || name == "dashboards.yaml" ||
			strings.HasPrefix(name, "analyzer-reclaim-") {
			continue
		}
		if !bytes.Contains(b, []byte("# Source: gpulens/templates/"+name+"\n")) {
			t.Errorf("deploy/manifests/gpulens.yaml lacks templates/%s", name)
		}
	}
	for _, p := range []string{"helm/gpulens/templates/analyzer-servicemonitor.yaml"} {
		tpl, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The findings' namespace and node labels are the workload's; the
		// scrape must not rename them exported_namespace and exported_node.
		if !bytes.Contains(tpl, []byte("honorLabels: true\n")) {
			t.Errorf("%s must set honorLabels: true", p)
		}
	}
	cron, err := os.ReadFile("helm/gpulens/templates/analyzer-cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cron, []byte("secretKeyRef:")) || !bytes.Contains(cron, []byte("- name: GPULENS_WEBHOOK_URL\n")) {
		t.Error("the weekly report must take its webhook URL from a Secret, through the environment")
	}
	// Not as an argument: the command line is what ps shows.
	if bytes.Contains(cron, []byte("--send-webhook")) {
		t.Error("the weekly report must not pass the webhook URL on its command line")
	}
}

// TestAnalyzerReadsClustersApart: serve and the weekly report name the
// label a shared store tells clusters apart by (analyzer.clusterLabel,
// default cluster, which reads a store without it as one cluster), and by
// default read this cluster's inventory in-cluster: no fleet kubeconfig,
// no contexts (docs/FLEET.md; tools/chart's TestFleet renders the fleet's
// values).
func TestAnalyzerReadsClustersApart(t *testing.T) {
	docs := loadDocs(t, "manifests/gpulens.yaml")
	for _, w := range []struct {
		kind, name string
		pod        []any
	}{
		{"Deployment", "gpulens-analyzer", []any{"spec", "template", "spec"}},
		{"CronJob", "gpulens-analyzer-weekly-report", []any{"spec", "jobTemplate", "spec", "template", "spec"}},
	} {
		d := byKindName(docs, w.kind, w.name)
		if d == nil {
			t.Fatalf("no %s %s", w.kind, w.name)
		}
		args := strs(d.get(append(w.pod, "containers", 0, "args")...))
		if !slices.Contains(args, "--cluster-label=cluster") {
			t.Errorf("%s %s args %v lack --cluster-label=cluster", w.kind, w.name, args)
		}
		for _, a := range args {
			if strings.HasPrefix(a, "--kubeconfig") || strings.HasPrefix(a, "--context") || a == "--all-contexts" {
				t.Errorf("%s %s: default args hold %s", w.kind, w.name, a)
			}
		}
		// No kubeconfig is mounted by default; serve's own state
		// directory (--state.file) is the one volume it has.
		if v, _ := d.get(append(w.pod, "volumes")...).([]any); len(v) > 0 {
			for _, vol := range v {
				if m, _ := vol.(map[string]any); m["name"] != "state" {
					t.Errorf("%s %s: default volume %v", w.kind, w.name, vol)
				}
			}
		}
	}
}
