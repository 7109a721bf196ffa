package chart

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// podSpec is the pod template of a workload object, or nil.
func podSpec(o Object) *corev1.PodSpec {
	switch w := o.Typed.(type) {
	case *appsv1.DaemonSet:
		return &w.Spec.Template.Spec
	case *appsv1.Deployment:
		return &w.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &w.Spec.Template.Spec
	case *batchv1.CronJob:
		return &w.Spec.JobTemplate.Spec.Template.Spec
	case *batchv1.Job:
		return &w.Spec.Template.Spec
	case *corev1.Pod:
		return &w.Spec
	}
	return nil
}

func exporterPod(t *testing.T, objs []Object) *corev1.PodSpec {
	t.Helper()
	for _, o := range objs {
		if ds, ok := o.Typed.(*appsv1.DaemonSet); ok && ds.Name == "gpulens-exporter" {
			return &ds.Spec.Template.Spec
		}
	}
	t.Fatal("no exporter DaemonSet")
	return nil
}

// checkPods holds every pod the chart runs to the chart's promises: not
// privileged, no escalation, a read-only root, no capability, read-only
// mounts, the runtime's seccomp profile, no host network or IPC, and the
// host's PID namespace only for the exporter with per-process attribution.
// Only the exporter runs as root (the kubelet's pod-resources socket), and
// only it mounts a host path: that socket's directory.
func checkPods(t *testing.T, e entry, objs []Object) {
	t.Helper()
	pods := 0
	for _, o := range objs {
		pod := podSpec(o)
		if pod == nil {
			continue
		}
		pods++
		exporter := o.GVK.Kind == "DaemonSet" && o.Raw.GetName() == "gpulens-exporter"
		if pod.HostNetwork || pod.HostIPC {
			t.Errorf("%s: hostNetwork %v, hostIPC %v", o, pod.HostNetwork, pod.HostIPC)
		}
		if want := exporter && e.hostPID; pod.HostPID != want {
			t.Errorf("%s: hostPID %v, want %v", o, pod.HostPID, want)
		}
		if sc := pod.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: the pod's seccompProfile is not RuntimeDefault", o)
		}
		if !exporter {
			if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
				t.Errorf("%s: must run as a non-root user", o)
			}
		}
		for _, v := range pod.Volumes {
			if v.HostPath != nil && (!exporter || v.HostPath.Path != "/var/lib/kubelet/pod-resources") {
				t.Errorf("%s: mounts host path %s", o, v.HostPath.Path)
			}
		}
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			who := fmt.Sprintf("%s container %s", o, c.Name)
			sc := c.SecurityContext
			if sc == nil {
				t.Errorf("%s: no securityContext", who)
				continue
			}
			if sc.Privileged == nil || *sc.Privileged {
				t.Errorf("%s: privileged must be set to false", who)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s: allowPrivilegeEscalation must be set to false", who)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s: the root filesystem must be read-only", who)
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s: capabilities %+v, want drop [ALL] and no add", who, sc.Capabilities)
			}
			if !exporter && sc.RunAsUser != nil && *sc.RunAsUser == 0 {
				t.Errorf("%s: runs as root", who)
			}
			for _, m := range c.VolumeMounts {
				// The one exception: the analyzer's own state directory,
				// an emptyDir or a claim of its own, never the host's.
				state := o.Raw.GetName() == "gpulens-analyzer" && m.Name == "state" && m.MountPath == "/var/lib/gpulens" &&
					slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
						return v.Name == "state" && (v.EmptyDir != nil || v.PersistentVolumeClaim != nil)
					})
				if !m.ReadOnly && !state {
					t.Errorf("%s: %s is mounted read-write", who, m.MountPath)
				}
			}
		}
	}
	if pods == 0 {
		t.Error("no workload rendered")
	}
}

// grant is one atom of an RBAC rule.
type grant struct{ group, resource, verb, name string }

func (g grant) String() string {
	s := g.verb + " " + g.resource
	if g.group != "" {
		s += "." + g.group
	}
	if g.name != "" {
		s += "/" + g.name
	}
	return s
}

func grants(rules []rbacv1.PolicyRule) []grant {
	var out []grant
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, grant{g, res, v, n})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b grant) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// leastRBAC is every role the chart may render and exactly what it may
// grant: what the code reads, no more, no less. The exporter's pod
// informer lists and watches pods (its node's, by field selector) and it
// gets its own Node for GPU Feature Discovery's labels; the analyzer's
// inventory lists once per run and gets the device plugin's ConfigMaps by
// name (analyzer/inventory/kube/testdata/rbac.yaml, which the inventory's
// tests prove exact). A rule missing here is a refused request in a
// cluster; e2e/kube runs the code under these roles against a real API
// server.
var leastRBAC = map[string][]grant{
	"ClusterRole gpulens-exporter": {
		{"", "nodes", "get", ""},
		{"", "pods", "list", ""},
		{"", "pods", "watch", ""},
		// Its node's ResourceSlices, once a GPU is allocated through a
		// claim (cmd/gpulens-exporter/slices.go).
		{"resource.k8s.io", "resourceslices", "get", ""},
		{"resource.k8s.io", "resourceslices", "list", ""},
		{"resource.k8s.io", "resourceslices", "watch", ""},
	},
	"ClusterRole gpulens-analyzer": {
		{"", "namespaces", "list", ""},
		{"", "nodes", "list", ""},
		{"", "pods", "list", ""},
		{"", "resourcequotas", "list", ""},
		{"apps", "replicasets", "list", ""},
		{"batch", "jobs", "list", ""},
		{"policy", "poddisruptionbudgets", "list", ""},
		{"scheduling.k8s.io", "priorityclasses", "list", ""},
		// Dynamic Resource Allocation: which workloads get GPUs by claims,
		// and the claim templates their right-sizing replaces.
		{"resource.k8s.io", "resourceclaims", "list", ""},
		{"resource.k8s.io", "resourceclaimtemplates", "list", ""},
		// Kueue's queues, for the quota advice (gpulens quota).
		{"kueue.x-k8s.io", "clusterqueues", "list", ""},
		{"kueue.x-k8s.io", "localqueues", "list", ""},
		{"kueue.x-k8s.io", "resourceflavors", "list", ""},
	},
	// gpulens reclaim's writes, bound by RoleBindings only in
	// analyzer.reclaim.namespaces: what analyzer/reclaim calls (its
	// objects.go and actuator.go), no delete and no create of workloads.
	"ClusterRole gpulens-analyzer-reclaim": {
		{"apps", "deployments", "get", ""},
		{"apps", "deployments", "list", ""},
		{"apps", "deployments", "patch", ""}, // the records in annotations
		{"apps", "statefulsets", "get", ""},
		{"apps", "statefulsets", "list", ""},
		{"apps", "statefulsets", "patch", ""},
		{"apps", "deployments/scale", "patch", ""}, // replicas to 0 and back
		{"apps", "statefulsets/scale", "patch", ""},
		{"batch", "jobs", "get", ""},
		{"batch", "jobs", "list", ""},
		{"batch", "jobs", "patch", ""}, // spec.suspend and the records
		{"batch", "cronjobs", "get", ""},
		{"batch", "cronjobs", "list", ""},
		{"batch", "cronjobs", "patch", ""},
		{"events.k8s.io", "events", "create", ""},
	},
	// Its leader election's Lease, by name where RBAC can name it: a
	// create cannot be restricted by resourceNames.
	"Role gpulens/gpulens-analyzer-reclaim-lease": {
		{"coordination.k8s.io", "leases", "get", "gpulens-reclaim"},
		{"coordination.k8s.io", "leases", "update", "gpulens-reclaim"},
		{"coordination.k8s.io", "leases", "create", ""},
	},
	"Role gpu-operator/gpulens-analyzer-device-plugin-config": {
		{"", "configmaps", "get", "device-plugin-config"},
		{"", "configmaps", "get", "time-slicing-config"},
	},
}

// checkRBAC holds every role to leastRBAC, and every binding to a role of
// the chart and the chart's own ServiceAccounts.
func checkRBAC(t *testing.T, objs []Object) {
	t.Helper()
	roles := map[string]bool{}
	accounts := map[string]bool{}
	for _, o := range objs {
		var id string
		var rules []rbacv1.PolicyRule
		switch r := o.Typed.(type) {
		case *rbacv1.ClusterRole:
			id, rules = "ClusterRole "+r.Name, r.Rules
			if r.AggregationRule != nil {
				t.Errorf("%s aggregates other roles", o)
			}
		case *rbacv1.Role:
			id, rules = "Role "+r.Namespace+"/"+r.Name, r.Rules
		case *corev1.ServiceAccount:
			accounts[r.Namespace+"/"+r.Name] = true
			continue
		default:
			continue
		}
		roles[id] = true
		want, ok := leastRBAC[id]
		if !ok {
			t.Errorf("%s: a role the least-privilege table does not know", o)
			continue
		}
		sorted := slices.Clone(want)
		slices.SortFunc(sorted, func(a, b grant) int { return strings.Compare(a.String(), b.String()) })
		if got := grants(rules); !slices.Equal(got, sorted) {
			t.Errorf("%s grants\n %v\nwant exactly\n %v", o, got, sorted)
		}
		for _, r := range rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("%s grants non-resource URLs %v", o, r.NonResourceURLs)
			}
		}
	}
	for _, o := range objs {
		var ref rbacv1.RoleRef
		var subjects []rbacv1.Subject
		var id string
		switch b := o.Typed.(type) {
		case *rbacv1.ClusterRoleBinding:
			ref, subjects, id = b.RoleRef, b.Subjects, b.RoleRef.Kind+" "+b.RoleRef.Name
		case *rbacv1.RoleBinding:
			ref, subjects = b.RoleRef, b.Subjects
			id = ref.Kind + " " + b.Namespace + "/" + ref.Name
			if ref.Kind == "ClusterRole" {
				id = "ClusterRole " + ref.Name
			}
		default:
			continue
		}
		if !roles[id] {
			t.Errorf("%s binds %s, which the chart does not render", o, id)
		}
		for _, s := range subjects {
			if s.Kind != rbacv1.ServiceAccountKind || !accounts[s.Namespace+"/"+s.Name] {
				t.Errorf("%s binds %s %s/%s, not one of the chart's ServiceAccounts %v", o, s.Kind, s.Namespace, s.Name, accounts)
			}
		}
	}
}
