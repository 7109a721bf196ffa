package chart

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func deployment(t *testing.T, objs []Object, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if d, ok := o.Typed.(*appsv1.Deployment); ok && d.Name == name {
			return d
		}
	}
	t.Fatalf("no Deployment %s", name)
	return nil
}

func serviceMonitor(t *testing.T, objs []Object, name string) *monitoringv1.ServiceMonitor {
	t.Helper()
	for _, o := range objs {
		if sm, ok := o.Typed.(*monitoringv1.ServiceMonitor); ok && sm.Name == name {
			return sm
		}
	}
	t.Fatalf("no ServiceMonitor %s", name)
	return nil
}

// checkProcessAttribution: the exporter reads host PIDs (hostPID, and no
// --path.procfs= turning attribution off), and its ServiceMonitor labels
// the targets process_attribution="requested", which the
// GPULensAttributionAllocationOnly alert selects on.
func checkProcessAttribution(t *testing.T, objs []Object) {
	pod := exporterPod(t, objs)
	if slices.Contains(pod.Containers[0].Args, "--path.procfs=") {
		t.Error("per-process attribution is on, yet the exporter is told to read no procfs")
	}
	sm := serviceMonitor(t, objs, "gpulens-exporter")
	var relabeled bool
	for _, r := range sm.Spec.Endpoints[0].RelabelConfigs {
		if r.TargetLabel == "process_attribution" && r.Replacement != nil && *r.Replacement == "requested" {
			relabeled = true
		}
	}
	if !relabeled {
		t.Errorf("ServiceMonitor relabelings %+v: want process_attribution=requested", sm.Spec.Endpoints[0].RelabelConfigs)
	}
}

// checkTLS: both servers read the web config from their Secret, mounted
// read-only, and their probes go to the health port, which serves them
// without the web config (probes_test.go runs the binaries to prove it).
func checkTLS(t *testing.T, objs []Object) {
	for _, w := range []struct {
		who    string
		pod    *corev1.PodSpec
		secret string
	}{
		{"exporter", exporterPod(t, objs), "gpulens-web-config"},
		{"analyzer", &deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec, "gpulens-analyzer-web-config"},
	} {
		c := w.pod.Containers[0]
		wantArgs(t, w.who, c.Args, "--web.config.file=/etc/gpulens/web-config.yml")
		checkProbes(t, w.who, c)
		var mounted bool
		for _, m := range c.VolumeMounts {
			mounted = mounted || (m.MountPath == "/etc/gpulens" && m.ReadOnly)
		}
		var fromSecret bool
		for _, v := range w.pod.Volumes {
			fromSecret = fromSecret || (v.Secret != nil && v.Secret.SecretName == w.secret)
		}
		if !mounted || !fromSecret {
			t.Errorf("%s: web config mounted %v at /etc/gpulens, from Secret %s %v", w.who, mounted, w.secret, fromSecret)
		}
	}
}

// checkProbes: liveness on /healthz and readiness on /readyz, both on the
// container's health port, which --web.health-address serves in plain
// HTTP, without credentials, whatever the web config.
func checkProbes(t *testing.T, who string, c corev1.Container) {
	t.Helper()
	var health int32
	for _, p := range c.Ports {
		if p.Name == "health" {
			health = p.ContainerPort
		}
	}
	if health == 0 {
		t.Fatalf("%s: no container port named health", who)
	}
	wantArgs(t, who, c.Args, fmt.Sprintf("--web.health-address=:%d", health))
	for path, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s: probe for %s is not an httpGet", who, path)
			continue
		}
		g := p.HTTPGet
		if g.Path != path || g.Port.String() != "health" || (g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP) || len(g.HTTPHeaders) > 0 {
			t.Errorf("%s: probe %+v, want GET %s on port health in plain HTTP without headers", who, g, path)
		}
	}
}

// checkState: serve keeps its alerts in --state.file on a writable volume
// (the root filesystem is read-only), so a restart neither resolves nor
// re-fires them.
func checkState(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	c := pod.Containers[0]
	wantArgs(t, "analyzer", c.Args, "--state.file=/var/lib/gpulens/alerts.json")
	var mounted, volume bool
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "state" && m.MountPath == "/var/lib/gpulens" && !m.ReadOnly)
	}
	for _, v := range pod.Volumes {
		volume = volume || (v.Name == "state" && (v.EmptyDir != nil || v.PersistentVolumeClaim != nil))
	}
	if !mounted || !volume {
		t.Errorf("analyzer: state volume mounted %v, declared %v", mounted, volume)
	}
}

// checkOperator: the ServiceMonitors keep the targets' labels
// (honorLabels; without it Prometheus renames the tenant's pod, namespace
// and container exported_* and charges every GPU to the exporter), the
// PrometheusRule is the schema's rules file unchanged, and every
// dashboard of the schema ships in a ConfigMap the Grafana sidecar finds.
func checkOperator(t *testing.T, objs []Object, schema string) {
	for _, name := range []string{"gpulens-exporter", "gpulens-analyzer"} {
		sm := serviceMonitor(t, objs, name)
		if len(sm.Spec.Endpoints) == 0 {
			t.Errorf("ServiceMonitor %s has no endpoints", name)
		}
		for _, ep := range sm.Spec.Endpoints {
			if !ep.HonorLabels {
				t.Errorf("ServiceMonitor %s endpoint %s: honorLabels false", name, ep.Port)
			}
		}
	}
	rulesFile := map[string]string{"native": "gpulens.rules.yml", "dcgm-exporter": "dcgm-exporter.rules.yml"}[schema]
	b, err := os.ReadFile(filepath.Join("../../alerts", rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(b, &want); err != nil {
		t.Fatalf("alerts/%s: %v", rulesFile, err)
	}
	var rules int
	dashboards := map[string]bool{}
	for _, o := range objs {
		switch r := o.Typed.(type) {
		case *monitoringv1.PrometheusRule:
			rules++
			if !reflect.DeepEqual(r.Spec, want) {
				t.Errorf("%s: the spec is not alerts/%s", o, rulesFile)
			}
		case *corev1.ConfigMap:
			if r.Labels["grafana_dashboard"] != "1" || r.Annotations["grafana_folder"] != "gpulens" {
				t.Errorf("%s: labels %v, annotations %v; want grafana_dashboard: \"1\", grafana_folder: gpulens", o, r.Labels, r.Annotations)
			}
			for key, v := range r.Data {
				want, err := os.ReadFile(filepath.Join("../../dashboards", schema, key))
				if err != nil || strings.TrimSpace(v) != strings.TrimSpace(string(want)) || !json.Valid([]byte(v)) {
					t.Errorf("%s: key %s is not dashboards/%s/%s (%v)", o, key, schema, key, err)
				}
				dashboards[key] = true
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("../../dashboards", schema, "*.json"))
	if rules != 1 || len(dashboards) != len(files) || len(files) == 0 {
		t.Errorf("%d PrometheusRules and %d dashboards; want 1 and the %d of dashboards/%s", rules, len(dashboards), len(files), schema)
	}
}

// checkServe: `gpulens serve` gets every source and sink the values name,
// one flag each, and no weekly report runs.
func checkServe(t *testing.T, objs []Object) {
	c := deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("analyzer args %q: want serve first", c.Args)
	}
	wantArgs(t, "analyzer", c.Args,
		"--prometheus-url=http://vmselect.monitoring.svc:8481/select/0/prometheus",
		"--header=X-Scope-OrgID=gpu",
		"--bearer-token-file=/var/run/secrets/kubernetes.io/serviceaccount/token",
		"--alertmanager.url=http://alertmanager-0.monitoring.svc:9093",
		"--alertmanager.url=http://alertmanager-1.monitoring.svc:9093",
		"--push.url=http://vminsert.monitoring.svc:8480/insert/0/prometheus/api/v1/import/prometheus",
		"--web.listen-address=:9846",
	)
	for _, o := range objs {
		if o.GVK.Kind == "CronJob" {
			t.Errorf("%s rendered with weeklyReport.enabled false", o)
		}
	}
}

// checkReport: the weekly report runs on its schedule and takes the
// webhook URL from the Secret through the environment, so the URL is in
// neither the pod spec nor the command line.
func checkReport(t *testing.T, objs []Object) {
	var cj *batchv1.CronJob
	for _, o := range objs {
		if c, ok := o.Typed.(*batchv1.CronJob); ok {
			cj = c
		}
	}
	if cj == nil {
		t.Fatal("no CronJob")
	}
	if cj.Spec.Schedule != "30 7 * * 1" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("schedule %q, concurrency %s", cj.Spec.Schedule, cj.Spec.ConcurrencyPolicy)
	}
	c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "report" {
		t.Fatalf("report args %q", c.Args)
	}
	wantArgs(t, "report", c.Args, "--since=7d")
	// The report reads $GPULENS_WEBHOOK_URL itself: a $(VAR) argument
	// would put the URL on the command line, which ps shows.
	for _, a := range c.Args {
		if strings.Contains(a, "webhook") {
			t.Errorf("report arg %q: the webhook URL must come from the environment alone", a)
		}
	}
	var fromSecret bool
	for _, e := range c.Env {
		if e.Name == "GPULENS_WEBHOOK_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == "gpulens-webhook" && e.ValueFrom.SecretKeyRef.Key == "url" {
			fromSecret = true
		}
	}
	if !fromSecret {
		t.Errorf("report env %+v: want GPULENS_WEBHOOK_URL from Secret gpulens-webhook key url", c.Env)
	}
}
