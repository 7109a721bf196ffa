package chart

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// chartDir is the chart under test, from this module's directory.
const chartDir = "../../deploy/helm/gpulens"

// entry is one way of installing the chart.
type entry struct {
	name   string
	values string // a values file, as given to helm -f
	// objects is every object the entry renders, "Kind namespace/name",
	// worked out from the values by hand.
	objects []string
	// hostPID: only per-process attribution may share the host's PID
	// namespace, and only the exporter.
	hostPID bool
	// check asserts what the entry's values are for.
	check func(t *testing.T, objs []Object)
}

// The objects of each switch, with the release "gpulens" in namespace
// "gpulens".
var (
	exporterObjects = []string{
		"ServiceAccount gpulens/gpulens-exporter", "ClusterRole gpulens-exporter", "ClusterRoleBinding gpulens-exporter",
		"Service gpulens/gpulens-exporter", "DaemonSet gpulens/gpulens-exporter",
	}
	analyzerObjects = []string{
		"ServiceAccount gpulens/gpulens-analyzer", "ClusterRole gpulens-analyzer", "ClusterRoleBinding gpulens-analyzer",
		// The inventory reads the device plugin's config by name in the
		// GPU Operator's namespace, whatever the release's.
		"Role gpu-operator/gpulens-analyzer-device-plugin-config", "RoleBinding gpu-operator/gpulens-analyzer-device-plugin-config",
		"Service gpulens/gpulens-analyzer", "Deployment gpulens/gpulens-analyzer",
	}
	reportObjects  = []string{"CronJob gpulens/gpulens-analyzer-weekly-report"}
	monitorObjects = []string{"ServiceMonitor gpulens/gpulens-exporter", "ServiceMonitor gpulens/gpulens-analyzer", "PrometheusRule gpulens/gpulens-rules"}
	defaultObjects = concat(exporterObjects, analyzerObjects, reportObjects)
)

// dashboardObjects is one ConfigMap per dashboard the chart ships for
// schema.
func dashboardObjects(t *testing.T, schema string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "files/dashboards", schema, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards for %s in the chart (%v)", schema, err)
	}
	var out []string
	for _, f := range files {
		out = append(out, "ConfigMap gpulens/gpulens-dashboard-"+strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func matrix(t *testing.T) []entry {
	t.Helper()
	return append([]entry{
		{name: "default", objects: defaultObjects, check: func(t *testing.T, objs []Object) {
			exp := exporterPod(t, objs).Containers[0]
			wantArgs(t, "exporter", exp.Args, "--attribution.sharing-strategy=auto", "--path.procfs=")
			checkProbes(t, "exporter", exp)
			checkProbes(t, "analyzer", deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec.Containers[0])
			checkState(t, deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec)
		}},
		{
			// GPUs through DRA claims of NVIDIA's driver and of a second one.
			name: "dra",
			values: `
exporter:
  draDrivers: [gpu.nvidia.com, gpu.example.com]
`,
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				wantArgs(t, "exporter", exporterPod(t, objs).Containers[0].Args,
					"--attribution.dra-driver=gpu.nvidia.com", "--attribution.dra-driver=gpu.example.com")
			},
		},
		{
			// The GPU Operator's mixed MIG strategy advertises
			// nvidia.com/mig-<profile>; a cluster that renames them tells the
			// exporter, and GFD's label keeps the DaemonSet on MIG nodes.
			name: "mig",
			values: `
nodeSelector: {nvidia.com/gpu.present: "true", nvidia.com/mig.capable: "true"}
exporter:
  resourceNames: [example.com/a100-1g.10gb, example.com/a100-3g.40gb]
`,
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				pod := exporterPod(t, objs)
				wantArgs(t, "exporter", pod.Containers[0].Args,
					"--kubelet.resource-names=example.com/a100-1g.10gb", "--kubelet.resource-names=example.com/a100-3g.40gb")
				if pod.NodeSelector["nvidia.com/mig.capable"] != "true" || pod.NodeSelector["nvidia.com/gpu.present"] != "true" {
					t.Errorf("exporter nodeSelector %v", pod.NodeSelector)
				}
			},
		},
		{
			name:    "time-slicing",
			values:  "exporter: {sharingStrategy: time-slicing}\n",
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				// Allocation-only on shared GPUs: no host PIDs to map.
				wantArgs(t, "exporter", exporterPod(t, objs).Containers[0].Args, "--attribution.sharing-strategy=time-slicing", "--path.procfs=")
			},
		},
		{
			name:    "mps",
			values:  "exporter: {sharingStrategy: mps}\n",
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				wantArgs(t, "exporter", exporterPod(t, objs).Containers[0].Args, "--attribution.sharing-strategy=mps")
			},
		},
		{
			name: "process-attribution",
			values: `
exporter:
  sharingStrategy: time-slicing
  processAttribution: {enabled: true}
  serviceMonitor: {enabled: true}
`,
			objects: concat(defaultObjects, []string{"ServiceMonitor gpulens/gpulens-exporter"}),
			hostPID: true,
			check:   checkProcessAttribution,
		},
		{
			name: "tls",
			values: `
exporter: {webConfig: {secretName: gpulens-web-config}}
analyzer: {webConfig: {secretName: gpulens-analyzer-web-config}}
`,
			objects: defaultObjects,
			check:   checkTLS,
		},
		{
			name: "prometheus-operator",
			values: `
exporter: {serviceMonitor: {enabled: true, additionalLabels: {release: kube-prometheus-stack}}}
analyzer: {serviceMonitor: {enabled: true}}
prometheusRule: {enabled: true, additionalLabels: {release: kube-prometheus-stack}}
grafanaDashboards: {enabled: true}
`,
			objects: concat(defaultObjects, monitorObjects, dashboardObjects(t, "native")),
			check:   func(t *testing.T, objs []Object) { checkOperator(t, objs, "native") },
		},
		{
			name: "prometheus-operator-dcgm-exporter",
			values: `
exporter: {serviceMonitor: {enabled: true}}
analyzer: {serviceMonitor: {enabled: true}}
prometheusRule: {enabled: true, schema: dcgm-exporter}
grafanaDashboards: {enabled: true, schema: dcgm-exporter}
`,
			objects: concat(defaultObjects, monitorObjects, dashboardObjects(t, "dcgm-exporter")),
			check:   func(t *testing.T, objs []Object) { checkOperator(t, objs, "dcgm-exporter") },
		},
		{
			// Said explicitly, so that a changed default cannot make this
			// entry render operator kinds into a cluster without their CRDs.
			name: "no-prometheus-operator",
			values: `
exporter: {serviceMonitor: {enabled: false}}
analyzer: {serviceMonitor: {enabled: false}}
prometheusRule: {enabled: false}
grafanaDashboards: {enabled: true}
`,
			objects: concat(defaultObjects, dashboardObjects(t, "native")),
			check: func(t *testing.T, objs []Object) {
				for _, o := range objs {
					if o.GVK.Group == "monitoring.coreos.com" {
						t.Errorf("%s rendered without the Prometheus Operator", o)
					}
				}
			},
		},
		{
			name: "serve",
			values: `
analyzer:
  prometheusURL: http://vmselect.monitoring.svc:8481/select/0/prometheus
  headers: [X-Scope-OrgID=gpu]
  bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
  alertmanagers: [http://alertmanager-0.monitoring.svc:9093, http://alertmanager-1.monitoring.svc:9093]
  pushURL: http://vminsert.monitoring.svc:8480/insert/0/prometheus/api/v1/import/prometheus
  weeklyReport: {enabled: false}
`,
			objects: concat(exporterObjects, analyzerObjects),
			check:   checkServe,
		},
		{
			name: "report-cronjob",
			values: `
analyzer:
  weeklyReport:
    enabled: true
    schedule: "30 7 * * 1"
    webhookSecret: {name: gpulens-webhook, key: url}
`,
			objects: defaultObjects,
			check:   checkReport,
		},
		{
			name:    "exporter-only",
			values:  "analyzer: {enabled: false}\n",
			objects: exporterObjects,
		},
	}, reclaimEntries()...)
}

// rendered caches each entry's render: the matrix, lint and dry-run tests
// share them, and a render costs a chart load.
var rendered sync.Map // entry name → renderResult

type renderResult struct {
	manifest string
	objs     []Object
	err      error
}

func render(t *testing.T, e entry) (string, []Object) {
	t.Helper()
	if r, ok := rendered.Load(e.name); ok {
		r := r.(renderResult)
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.manifest, r.objs
	}
	var r renderResult
	vals, err := ParseValues(e.values)
	if err == nil {
		r.manifest, err = Render(chartDir, Release{Values: vals})
	}
	if err == nil {
		r.objs, err = Decode(r.manifest)
	}
	r.err = err
	rendered.Store(e.name, r)
	if err != nil {
		t.Fatalf("%s: %v", e.name, err)
	}
	return r.manifest, r.objs
}

func values(t *testing.T, e entry) map[string]any {
	t.Helper()
	v, err := ParseValues(e.values)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMatrix renders the chart for every entry, decodes every object
// strictly (an unknown field fails), checks that exactly the expected
// objects render, the security invariants and what the entry's values
// are for.
func TestMatrix(t *testing.T) {
	for _, e := range matrix(t) {
		t.Run(e.name, func(t *testing.T) {
			_, objs := render(t, e)
			var got []string
			for _, o := range objs {
				id := o.GVK.Kind + " " + o.Raw.GetName()
				if ns := o.Raw.GetNamespace(); ns != "" {
					id = o.GVK.Kind + " " + ns + "/" + o.Raw.GetName()
				}
				got = append(got, id)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(e.objects))
			if !slices.Equal(got, want) {
				t.Errorf("rendered objects:\n got %q\nwant %q", got, want)
			}
			checkPods(t, e, objs)
			checkRBAC(t, objs)
			if e.check != nil {
				e.check(t, objs)
			}
		})
	}
}

func wantArgs(t *testing.T, who string, args []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(args, w) {
			t.Errorf("%s args %q lack %s", who, args, w)
		}
	}
}
