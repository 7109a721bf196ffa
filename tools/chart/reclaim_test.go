package chart

import (
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// gpulens reclaim (docs/RECLAIM.md): a second container of the analyzer's
// pod, whose writes are bound by RoleBindings only in
// analyzer.reclaim.namespaces, and whose Lease is in the release's.

// reclaimObjects is what enabling reclaim for ml-notebooks and research
// adds to the default objects.
var reclaimObjects = []string{
	"ClusterRole gpulens-analyzer-reclaim",
	"RoleBinding ml-notebooks/gpulens-analyzer-reclaim", "RoleBinding research/gpulens-analyzer-reclaim",
	"Role gpulens/gpulens-analyzer-reclaim-lease", "RoleBinding gpulens/gpulens-analyzer-reclaim-lease",
}

// reclaimSourceArgs are serve's source flags with default values, which
// reclaim reads the same store with.
var reclaimSourceArgs = []string{
	"--prometheus-url=http://prometheus-operated.monitoring.svc:9090", "--team-label=team",
	"--cluster-label=cluster", "--query.max-reply-size=128MiB",
}

func reclaimEntries() []entry {
	return []entry{
		{
			// Enabled, as the values say to start: a dry run.
			name:    "reclaim-dry-run",
			values:  "analyzer: {reclaim: {enabled: true, namespaces: [ml-notebooks, research]}}\n",
			objects: concat(defaultObjects, reclaimObjects),
			check: func(t *testing.T, objs []Object) {
				c := reclaimContainer(t, objs)
				want := slices.Concat([]string{"reclaim"}, reclaimSourceArgs, []string{
					"--interval=15m", "--alertmanager.resend-interval=1m", "--web.listen-address=:9849",
					"--leader-election.namespace=gpulens", "--leader-election.name=gpulens-reclaim",
				})
				if !slices.Equal(c.Args, want) {
					t.Errorf("reclaim args\n %q\nwant\n %q", c.Args, want)
				}
				if len(c.VolumeMounts) != 0 {
					t.Errorf("reclaim mounts %v without a policy", c.VolumeMounts)
				}
				checkReclaimBindings(t, objs, "ml-notebooks", "research")
				checkReclaimScraped(t, objs)
			},
		},
		{
			name: "reclaim-act",
			values: `
analyzer:
  alertmanagers: [http://am-0:9093, http://am-1:9093]
  serviceMonitor: {enabled: true}
  reclaim:
    enabled: true
    act: true
    namespaces: [ml-notebooks, research]
    cluster: gpu-eu
    interval: 5m
    policy: {grace_period: 2h, idle: {for: 36h}}
`,
			objects: concat(defaultObjects, reclaimObjects, []string{"ConfigMap gpulens/gpulens-analyzer-reclaim-policy", "ServiceMonitor gpulens/gpulens-analyzer"}),
			check: func(t *testing.T, objs []Object) {
				c := reclaimContainer(t, objs)
				want := slices.Concat([]string{"reclaim"}, reclaimSourceArgs, []string{
					"--interval=5m", "--act", "--cluster=gpu-eu",
					"--alertmanager.url=http://am-0:9093", "--alertmanager.url=http://am-1:9093", "--alertmanager.resend-interval=1m",
					"--web.listen-address=:9849", "--leader-election.namespace=gpulens", "--leader-election.name=gpulens-reclaim",
					"--policy.file=/etc/gpulens-reclaim/policy.yaml",
				})
				if !slices.Equal(c.Args, want) {
					t.Errorf("reclaim args\n %q\nwant\n %q", c.Args, want)
				}
				if m := c.VolumeMounts; len(m) != 1 || m[0].Name != "reclaim-policy" || m[0].MountPath != "/etc/gpulens-reclaim" || !m[0].ReadOnly {
					t.Errorf("reclaim mounts %+v, want the policy's directory read-only", c.VolumeMounts)
				}
				pod := deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec
				i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "reclaim-policy" })
				if i < 0 || pod.Volumes[i].ConfigMap == nil || pod.Volumes[i].ConfigMap.Name != "gpulens-analyzer-reclaim-policy" {
					t.Errorf("no reclaim-policy volume from the ConfigMap: %+v", pod.Volumes)
				}
				var cm *corev1.ConfigMap
				for _, o := range objs {
					if m, ok := o.Typed.(*corev1.ConfigMap); ok && m.Name == "gpulens-analyzer-reclaim-policy" {
						cm = m
					}
				}
				var policy map[string]any
				if err := yaml.Unmarshal([]byte(cm.Data["policy.yaml"]), &policy); err != nil {
					t.Fatal(err)
				}
				want2 := map[string]any{"grace_period": "2h", "idle": map[string]any{"for": "36h"}}
				if !equalJSON(policy, want2) {
					t.Errorf("policy.yaml %v, want %v", policy, want2)
				}
				checkReclaimBindings(t, objs, "ml-notebooks", "research")
				checkReclaimScraped(t, objs)
				var ports []string
				for _, e := range serviceMonitor(t, objs, "gpulens-analyzer").Spec.Endpoints {
					if e.HonorLabels {
						ports = append(ports, e.Port+e.Path)
					}
				}
				if want := []string{"http/metrics", "reclaim/metrics"}; !slices.Equal(ports, want) {
					t.Errorf("the analyzer's ServiceMonitor scrapes %q with honorLabels, want %q", ports, want)
				}
			},
		},
	}
}

// checkReclaimScraped: the analyzer's Service exposes reclaim's /metrics
// port.
func checkReclaimScraped(t *testing.T, objs []Object) {
	t.Helper()
	for _, o := range objs {
		if s, ok := o.Typed.(*corev1.Service); ok && s.Name == "gpulens-analyzer" {
			for _, p := range s.Spec.Ports {
				if p.Name == "reclaim" && p.Port == 9849 && p.TargetPort.StrVal == "reclaim" {
					return
				}
			}
			t.Errorf("the analyzer's Service ports %+v lack reclaim's", s.Spec.Ports)
			return
		}
	}
	t.Error("no analyzer Service")
}

func equalJSON(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return string(x) == string(y)
}

func reclaimContainer(t *testing.T, objs []Object) corev1.Container {
	t.Helper()
	cs := deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec.Containers
	if len(cs) != 2 || cs[0].Name != "analyzer" || cs[1].Name != "reclaim" {
		t.Fatalf("analyzer pod containers %d, want analyzer then reclaim", len(cs))
	}
	return cs[1]
}

// checkReclaimBindings: the reclaim ClusterRole is bound by RoleBindings
// in exactly the namespaces given, never cluster-wide, to the analyzer's
// ServiceAccount.
func checkReclaimBindings(t *testing.T, objs []Object, namespaces ...string) {
	t.Helper()
	var bound []string
	for _, o := range objs {
		switch b := o.Typed.(type) {
		case *rbacv1.ClusterRoleBinding:
			if b.RoleRef.Name == "gpulens-analyzer-reclaim" {
				t.Errorf("%s binds reclaim's writes cluster-wide", o)
			}
		case *rbacv1.RoleBinding:
			if b.RoleRef.Name != "gpulens-analyzer-reclaim" {
				continue
			}
			bound = append(bound, b.Namespace)
			if b.RoleRef.Kind != "ClusterRole" || len(b.Subjects) != 1 || b.Subjects[0].Name != "gpulens-analyzer" || b.Subjects[0].Namespace != "gpulens" {
				t.Errorf("%s: roleRef %+v, subjects %+v", o, b.RoleRef, b.Subjects)
			}
		}
	}
	if slices.Sort(bound); !slices.Equal(bound, namespaces) {
		t.Errorf("reclaim bound in %q, want %q", bound, namespaces)
	}
}

// TestReclaimOffByDefault: no reclaim container and no reclaim roles
// unless enabled (TestMatrix's default entry lists its objects).
func TestReclaimOffByDefault(t *testing.T) {
	_, objs := render(t, entry{name: "default"})
	for _, c := range deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec.Containers {
		if c.Name != "analyzer" {
			t.Errorf("default analyzer pod runs %s", c.Name)
		}
	}
}

// TestReclaimRefuses: values reclaim cannot honour fail the render, naming
// the value, rather than installing a reclaimer bound nowhere or bound by
// roles the chart does not write.
func TestReclaimRefuses(t *testing.T) {
	for _, tt := range []struct{ values, want string }{
		{"analyzer: {reclaim: {enabled: true}}\n", "analyzer.reclaim.namespaces"},
		{"analyzer: {reclaim: {enabled: true, namespaces: []}}\n", "analyzer.reclaim.namespaces"},
		{"analyzer: {rbac: {create: false}, reclaim: {enabled: true, namespaces: [a]}}\n", "analyzer.rbac.create"},
		{"analyzer: {fleet: {kubeconfigSecret: {name: k}}, reclaim: {enabled: true, namespaces: [a]}}\n", "analyzer.fleet"},
	} {
		vals, err := ParseValues(tt.values)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Render(chartDir, Release{Values: vals}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q renders (%v): want an error naming %s", tt.values, err, tt.want)
		}
	}
}

// TestReclaimLeaseName: the Lease the container campaigns for is the one
// its Role names.
func TestReclaimLeaseName(t *testing.T) {
	vals, err := ParseValues("analyzer: {reclaim: {enabled: true, namespaces: [a], leaseName: gpu-reclaimer}}\n")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := Render(chartDir, Release{Name: "lens", Namespace: "ops", Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	c := deployment(t, objs, "lens-analyzer").Spec.Template.Spec.Containers[1]
	wantArgs(t, "reclaim", c.Args, "--leader-election.namespace=ops", "--leader-election.name=gpu-reclaimer")
	for _, o := range objs {
		if r, ok := o.Typed.(*rbacv1.Role); ok && r.Name == "lens-analyzer-reclaim-lease" {
			if r.Namespace != "ops" || !slices.Equal(r.Rules[0].ResourceNames, []string{"gpu-reclaimer"}) {
				t.Errorf("lease Role %s/%s names %v", r.Namespace, r.Name, r.Rules[0].ResourceNames)
			}
			return
		}
	}
	t.Error("no lease Role")
}

// reclaimChartPath is the chart with reclaim enabled in one namespace,
// whose RBAC e2e/kube's TestReclaimRBAC runs under.
const (
	reclaimValuesPath = "../../e2e/kube/testdata/reclaim/values.yaml"
	reclaimChartPath  = "../../e2e/kube/testdata/reclaim/chart.yaml"
)

// TestReclaimManifestCurrent fails when that render is stale: run make
// manifests.
func TestReclaimManifestCurrent(t *testing.T) {
	b, err := os.ReadFile(reclaimValuesPath)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ParseValues(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(chartDir, Release{Name: "reclaimrbac", Namespace: "reclaimrbac-gpulens", Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(reclaimChartPath)
	if err != nil {
		t.Fatalf("%v: run make manifests", err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run make manifests", reclaimChartPath)
	}
}
