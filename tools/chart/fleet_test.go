package chart

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// One 'gpulens serve' for a fleet of clusters (docs/FLEET.md): the
// analyzer reads a distributed store through analyzer.clusterLabel and
// each member cluster's inventory through the kubeconfig of
// analyzer.fleet, and each member cluster renders only the analyzer's
// read-only identity (analyzer.remoteReader).

const (
	fleetMount      = "/etc/gpulens-fleet"
	fleetKubeconfig = fleetMount + "/kubeconfig"
)

// remoteReaderObjects are the analyzer's ServiceAccount and read-only
// RBAC without its workloads and Service.
var remoteReaderObjects = []string{
	"ServiceAccount gpulens/gpulens-analyzer", "ClusterRole gpulens-analyzer", "ClusterRoleBinding gpulens-analyzer",
	"Role gpu-operator/gpulens-analyzer-device-plugin-config", "RoleBinding gpu-operator/gpulens-analyzer-device-plugin-config",
}

func fleetEntries() []entry {
	return []entry{
		{
			name: "fleet",
			values: `
analyzer:
  prometheusURL: http://thanos-query.monitoring.svc:9090
  fleet:
    kubeconfigSecret: {name: gpulens-fleet-kubeconfig, key: fleet.kubeconfig}
    contexts: [gpu-eu, "arn:aws:eks:us-east-1:123456789012:cluster/gpu=us-east"]
`,
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				checkFleet(t, objs, "gpulens-fleet-kubeconfig", "fleet.kubeconfig", []string{
					"--cluster-label=cluster", "--kubeconfig=" + fleetKubeconfig,
					"--context=gpu-eu", "--context=arn:aws:eks:us-east-1:123456789012:cluster/gpu=us-east",
				}, "--all-contexts")
			},
		},
		{
			// Every context, another cluster label, and the web config's
			// Secret beside the kubeconfig's: two mounts that must not
			// overlap.
			name: "fleet-all-contexts-tls",
			values: `
exporter: {webConfig: {secretName: gpulens-web-config}}
analyzer:
  clusterLabel: k8s_cluster
  webConfig: {secretName: gpulens-analyzer-web-config}
  fleet:
    kubeconfigSecret: {name: fleet}
    contexts: [kind-b=b]
    allContexts: true
`,
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				checkFleet(t, objs, "fleet", "config", []string{
					"--cluster-label=k8s_cluster", "--kubeconfig=" + fleetKubeconfig, "--context=kind-b=b", "--all-contexts",
				})
				checkTLS(t, objs)
			},
		},
		{
			// A member cluster: its exporter, and the identity the
			// fleet's serve reads it as; nothing that runs the analyzer.
			name:    "remote-reader",
			values:  "analyzer: {enabled: false, remoteReader: {enabled: true}}\n",
			objects: concat(exporterObjects, remoteReaderObjects),
		},
		{
			name:    "remote-reader-no-device-plugin-config",
			values:  "exporter: {enabled: false}\nanalyzer: {enabled: false, remoteReader: {enabled: true}, rbac: {devicePluginConfig: {enabled: false}}}\n",
			objects: remoteReaderObjects[:3],
		},
		{
			name:    "single-store",
			values:  "analyzer: {clusterLabel: \"\"}\n",
			objects: defaultObjects,
			check: func(t *testing.T, objs []Object) {
				for who, args := range analyzerArgs(t, objs) {
					wantArgs(t, who, args, "--cluster-label=")
				}
			},
		},
	}
}

// analyzerArgs are the args of serve and of the weekly report.
func analyzerArgs(t *testing.T, objs []Object) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for who, pod := range analyzerPods(t, objs) {
		out[who] = pod.Containers[0].Args
	}
	return out
}

// analyzerPods are the pod specs of serve and the weekly report.
func analyzerPods(t *testing.T, objs []Object) map[string]*corev1.PodSpec {
	t.Helper()
	out := map[string]*corev1.PodSpec{"serve": &deployment(t, objs, "gpulens-analyzer").Spec.Template.Spec}
	for _, o := range objs {
		if cj, ok := o.Typed.(*batchv1.CronJob); ok {
			out["report"] = &cj.Spec.JobTemplate.Spec.Template.Spec
		}
	}
	if out["report"] == nil {
		t.Fatal("no weekly report CronJob")
	}
	return out
}

// checkFleet: serve and the weekly report both get the fleet's flags and
// the kubeconfig, only the Secret's key, mounted read-only in a directory
// of its own; and none of the flags absent names.
func checkFleet(t *testing.T, objs []Object, secret, key string, want []string, absent ...string) {
	t.Helper()
	for who, pod := range analyzerPods(t, objs) {
		c := pod.Containers[0]
		wantArgs(t, who, c.Args, want...)
		for _, a := range absent {
			if slices.Contains(c.Args, a) {
				t.Errorf("%s args %q hold %s", who, c.Args, a)
			}
		}
		var vol *corev1.Volume
		for i, v := range pod.Volumes {
			if v.Secret != nil && v.Secret.SecretName == secret {
				vol = &pod.Volumes[i]
			}
		}
		if vol == nil {
			t.Errorf("%s: no volume of Secret %s in %+v", who, secret, pod.Volumes)
			continue
		}
		if items := vol.Secret.Items; len(items) != 1 || items[0].Key != key || items[0].Path != "kubeconfig" {
			t.Errorf("%s: Secret %s projects %+v, want only key %s as kubeconfig", who, secret, items, key)
		}
		var mounted bool
		for _, m := range c.VolumeMounts {
			if m.Name == vol.Name {
				mounted = m.MountPath == fleetMount && m.ReadOnly && m.SubPath == ""
			}
			// A mount inside another's directory would hide or be hidden.
			for _, o := range c.VolumeMounts {
				if o.Name != m.Name && strings.HasPrefix(o.MountPath+"/", m.MountPath+"/") {
					t.Errorf("%s: %s is mounted inside %s", who, o.MountPath, m.MountPath)
				}
			}
		}
		if !mounted {
			t.Errorf("%s: the kubeconfig is not mounted read-only at %s: %+v", who, fleetMount, c.VolumeMounts)
		}
	}
}

// TestFleet renders the chart for each fleet entry as TestMatrix does the
// matrix's: exactly the expected objects, the pods' security invariants,
// the least-privilege RBAC (a member cluster grants exactly what the
// inventory lists, nothing more), what the entry is for, and helm lint.
func TestFleet(t *testing.T) {
	for _, e := range fleetEntries() {
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
			if want := slices.Sorted(slices.Values(e.objects)); !slices.Equal(got, want) {
				t.Errorf("rendered objects:\n got %q\nwant %q", got, want)
			}
			if e.name != "remote-reader-no-device-plugin-config" {
				checkPods(t, e, objs)
			}
			checkRBAC(t, objs)
			if e.check != nil {
				e.check(t, objs)
			}
			for _, msg := range Lint(chartDir, Release{Values: values(t, e)}) {
				t.Error(msg)
			}
		})
	}
}

// TestFleetDefaults: the default render names the store's cluster label
// and reads no kubeconfig (in-cluster, as before), and contexts without
// the kubeconfig that holds them fail the render instead of a pod that
// cannot resolve them.
func TestFleetDefaults(t *testing.T) {
	_, objs := render(t, entry{name: "default"})
	for who, pod := range analyzerPods(t, objs) {
		args := pod.Containers[0].Args
		wantArgs(t, who, args, "--cluster-label=cluster")
		for _, a := range args {
			if strings.HasPrefix(a, "--kubeconfig") || strings.HasPrefix(a, "--context") || a == "--all-contexts" {
				t.Errorf("%s: default args hold %s", who, a)
			}
		}
		for _, v := range pod.Volumes {
			// serve's state directory is its own; no kubeconfig is mounted.
			if v.Name != "state" {
				t.Errorf("%s: default volume %+v", who, v)
			}
		}
	}
	for _, v := range []string{
		"analyzer: {fleet: {contexts: [a]}}\n",
		"analyzer: {fleet: {allContexts: true}}\n",
	} {
		vals, err := ParseValues(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Render(chartDir, Release{Values: vals}); err == nil || !strings.Contains(err.Error(), "analyzer.fleet.kubeconfigSecret.name") {
			t.Errorf("%q renders (%v): want an error naming analyzer.fleet.kubeconfigSecret.name", v, err)
		}
	}
}
