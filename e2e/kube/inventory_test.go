package kube

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/inventory"
	invkube "github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/vocab"
)

// world is what one inventory test puts into the cluster.
type world struct {
	ns, node, other, configKey, priorityClass string
	// pods by name, as created.
	pods map[string]*corev1.Pod
}

func controller(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	apiVersion := "apps/v1"
	if kind == "Job" || kind == "CronJob" {
		apiVersion = "batch/v1"
	}
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}}
}

func gpuLimits(n int64) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(vocab.ResourceGPU): *resource.NewQuantity(n, resource.DecimalSI)}}
}

// podTemplate is a GPU pod template; Deployments and ReplicaSets require
// restartPolicy Always, Jobs Never or OnFailure.
func podTemplate(labels map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers:    []corev1.Container{{Name: "main", Image: "registry.example/train:1", Resources: gpuLimits(1)}},
		},
	}
}

// buildWorld creates, in a fresh namespace, what the controllers and
// kubelets of a small GPU cluster would have left there: a Deployment with
// its ReplicaSet and pod, a CronJob with its Job and pod, a pod whose
// ReplicaSet is gone, a bare pod, a GPU quota with its usage, a disruption
// budget, a priority class, a tainted GPU node labelled by GPU Feature
// Discovery, and a device plugin config. configMapNS is where the config
// goes, under configMapName.
func buildWorld(t *testing.T, c kubernetes.Interface, configMapNS, configMapName string) world {
	t.Helper()
	ctx := t.Context()
	s := suffix(t)
	w := world{
		node: "gpu-inv-" + s, other: "cpu-inv-" + s,
		configKey: "ts-" + s, priorityClass: "gpu-batch-" + s,
		pods: map[string]*corev1.Pod{},
	}
	w.ns = testNamespace(t, c, "inventory", map[string]string{"team": "ml-research"})

	createNode(t, c, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: w.node, Labels: map[string]string{
			inventory.LabelGPUPresent:       "true",
			inventory.LabelGPUProduct:       "NVIDIA-H100-80GB-HBM3-SHARED",
			inventory.LabelGPUMemory:        "81559",
			inventory.LabelGPUCount:         "8",
			inventory.LabelGPUReplicas:      "4",
			inventory.LabelPluginConfig:     w.configKey,
			"cloud.google.com/gke-nodepool": "h100-pool",
		}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceName(vocab.ResourceGPU): resource.MustParse("32"), corev1.ResourceCPU: resource.MustParse("96")},
			Allocatable: corev1.ResourceList{corev1.ResourceName(vocab.ResourceGPU): resource.MustParse("32"), corev1.ResourceCPU: resource.MustParse("94")},
		},
	})
	createNode(t, c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.other}})

	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: w.priorityClass}, Value: 1000}
	if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dep, err := c.AppsV1().Deployments(w.ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "trainer"}},
			Template: podTemplate(map[string]string{"app": "trainer"}, corev1.RestartPolicyAlways),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rsLabels := map[string]string{"app": "trainer", appsv1.DefaultDeploymentUniqueLabelKey: "5d4f8b7c9"}
	tmpl := podTemplate(rsLabels, corev1.RestartPolicyAlways)
	rs, err := c.AppsV1().ReplicaSets(w.ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer-5d4f8b7c9", Labels: rsLabels, OwnerReferences: controller("Deployment", dep.Name, dep.UID)},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: tmpl,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	cj, err := c.BatchV1().CronJobs(w.ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{
			Schedule:    "0 2 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.BatchV1().Jobs(w.ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29410560", OwnerReferences: controller("CronJob", cj.Name, cj.UID)},
		Spec:       batchv1.JobSpec{Template: podTemplate(nil, corev1.RestartPolicyNever)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	pod := func(name string, labels map[string]string, owners []metav1.OwnerReference, gpus int64) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: labels, OwnerReferences: owners},
			Spec: corev1.PodSpec{
				RestartPolicy:     corev1.RestartPolicyNever,
				PriorityClassName: w.priorityClass,
				Tolerations:       []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers:        []corev1.Container{{Name: "main", Image: "registry.example/train:1", Resources: gpuLimits(gpus)}},
			},
		}
		w.pods[name] = runPod(t, c, p, w.node)
	}
	pod("trainer-5d4f8b7c9-x7k2p", rsLabels, controller("ReplicaSet", rs.Name, rs.UID), 2)
	pod("nightly-29410560-q8w4z", map[string]string{"batch.kubernetes.io/job-name": job.Name}, controller("Job", job.Name, job.UID), 1)
	// The ReplicaSet of a replaced rollout, already deleted while its
	// last pod terminates: the owner is inferred from the hash label.
	pod("serve-7f8d9c6b5-m2n3b", map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "7f8d9c6b5"},
		controller("ReplicaSet", "serve-7f8d9c6b5", types.UID("3f9a2c1e-0000-4000-8000-"+s+"000000")), 1)
	pod("debug", nil, nil, 0)

	// Created after the pods: the quota admission plugin refuses GPU pods
	// in a namespace whose quota has no usage yet, and the quota controller
	// that would compute it does not run.
	q, err := c.CoreV1().ResourceQuotas(w.ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"requests.nvidia.com/gpu": resource.MustParse("4"),
			corev1.ResourcePods:       resource.MustParse("20"),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status = corev1.ResourceQuotaStatus{
		Hard: q.Spec.Hard,
		Used: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("4")},
	}
	if _, err := c.CoreV1().ResourceQuotas(w.ns).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	if _, err := c.PolicyV1().PodDisruptionBudgets(w.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "trainer"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ensureNamespace(t, c, configMapNS, nil)
	putConfigKey(t, c, configMapNS, configMapName, w.configKey, `version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    resources:
    - name: nvidia.com/gpu
      replicas: 4
`)
	return w
}

// putConfigKey adds one device plugin config to a ConfigMap, creating it
// when absent, so that tests sharing the GPU Operator's ConfigMap each add
// their own key.
func putConfigKey(t *testing.T, c kubernetes.Interface, ns, name, key, value string) {
	t.Helper()
	ctx := t.Context()
	for range 5 {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{key: value}}
			if _, err = c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err == nil {
				return
			}
			continue
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[key] = value
		if _, err = c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	t.Fatalf("cannot write configmap %s/%s", ns, name)
}

// checkWorld compares what Read found of w with what was created.
func checkWorld(t *testing.T, inv *inventory.Inventory, w world, configSource string) {
	t.Helper()
	if !inv.Available || len(inv.Skipped) != 0 {
		t.Fatalf("Available = %v, Skipped = %q", inv.Available, inv.Skipped)
	}
	if got := inv.Namespaces[w.ns].Team; got != "ml-research" {
		t.Errorf("team of %s = %q", w.ns, got)
	}

	type owner struct {
		Kind, Name string
		Inferred   bool
		GPUs       map[vocab.Resource]int64
		Node       string
		Phase      string
		Priority   string
	}
	want := map[string]owner{
		"trainer-5d4f8b7c9-x7k2p": {"Deployment", "trainer", false, map[vocab.Resource]int64{"nvidia.com/gpu": 2}, w.node, "Running", w.priorityClass},
		"nightly-29410560-q8w4z":  {"CronJob", "nightly", false, map[vocab.Resource]int64{"nvidia.com/gpu": 1}, w.node, "Running", w.priorityClass},
		"serve-7f8d9c6b5-m2n3b":   {"Deployment", "serve", true, map[vocab.Resource]int64{"nvidia.com/gpu": 1}, w.node, "Running", w.priorityClass},
		"debug":                   {"Pod", "debug", false, nil, w.node, "Running", w.priorityClass},
	}
	got := map[string]owner{}
	for k, p := range inv.Pods {
		if k.Namespace != w.ns {
			continue
		}
		if p.UID != string(w.pods[k.Name].UID) {
			t.Errorf("pod %s: UID %s, created as %s", k.Name, p.UID, w.pods[k.Name].UID)
		}
		got[k.Name] = owner{p.WorkloadKind, p.WorkloadName, p.WorkloadInferred, p.GPURequests, p.Node, p.Phase, p.PriorityClass}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pods of %s (-want +got):\n%s", w.ns, d)
	}

	wantNode := inventory.Node{
		Name: w.node, Product: "NVIDIA-H100-80GB-HBM3", MemoryMiB: 81559, Count: 8, Replicas: 4,
		DevicePluginCfg: w.configKey,
		Capacity:        map[vocab.Resource]int64{"nvidia.com/gpu": 32},
		Allocatable:     map[vocab.Resource]int64{"nvidia.com/gpu": 32},
		// The second taint is the API server's own: the TaintNodesByCondition
		// admission plugin marks every new node not-ready until the node
		// controller, which does not run here, sees it Ready.
		Taints: []inventory.Taint{
			{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"},
			{Key: "node.kubernetes.io/not-ready", Effect: "NoSchedule"},
		},
		NodePool: "h100-pool",
	}
	gotNode := inv.Nodes[w.node]
	gotNode.Labels = nil
	if d := cmp.Diff(wantNode, gotNode); d != "" {
		t.Errorf("node %s (-want +got):\n%s", w.node, d)
	}
	if n, ok := inv.Nodes[w.other]; !ok || n.HasGPUs() {
		t.Errorf("CPU node %s = %+v, %v", w.other, n, ok)
	}

	wantQuota := []inventory.Quota{{Name: "gpu",
		Hard: map[string]int64{"requests.nvidia.com/gpu": 4},
		Used: map[string]int64{"requests.nvidia.com/gpu": 4}}}
	if d := cmp.Diff(wantQuota, inv.Quotas[w.ns]); d != "" {
		t.Errorf("quotas of %s (-want +got):\n%s", w.ns, d)
	}
	if pdbs := inv.PDBs[w.ns]; len(pdbs) != 1 || pdbs[0].MinAvailable != "1" || pdbs[0].Selector["app"] != "trainer" {
		t.Errorf("PDBs of %s = %+v", w.ns, pdbs)
	}
	if v, ok := inv.PriorityClasses[w.priorityClass]; !ok || v != 1000 {
		t.Errorf("priority class %s = %d, %v", w.priorityClass, v, ok)
	}
	wantSharing := inventory.SharingConfig{TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}, MIGStrategy: "none", Source: configSource}
	if d := cmp.Diff(wantSharing, inv.Sharing[w.configKey]); d != "" {
		t.Errorf("sharing config %s (-want +got):\n%s", w.configKey, d)
	}
	if sc, ok := inv.SharingFor(inv.Nodes[w.node]); !ok || sc.TimeSlicing["nvidia.com/gpu"] != 4 {
		t.Errorf("SharingFor(%s) = %+v, %v", w.node, sc, ok)
	}
}

// TestInventoryReadsRealObjects reads, as cluster admin, objects the API
// server has validated, defaulted and stored, and finds every fact the
// analysis uses: owners through real ownerReferences, quotas, taints,
// GFD labels, capacity and the device plugin config.
func TestInventoryReadsRealObjects(t *testing.T) {
	cfg := adminConfig(t)
	c := clientFor(t, cfg)
	s := suffix(t)
	cmNS := "plugin-" + s
	w := buildWorld(t, c, cmNS, "device-plugin-config")
	// NewClient, as the analyzer builds its client from --kubeconfig.
	client, err := invkube.NewClient(invkube.Options{Kubeconfig: testKubeconfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	inv := invkube.Read(t.Context(), client, invkube.Options{DevicePluginConfigMaps: []string{cmNS + "/device-plugin-config"}})
	checkWorld(t, inv, w, cmNS+"/device-plugin-config")
}

// TestInventoryPagesThroughContinueTokens makes the namespace list longer
// than one page (500), so Read follows the server's own continue tokens,
// which client-go's fake never issues.
func TestInventoryPagesThroughContinueTokens(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	s := suffix(t)
	const n = 520
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			name := fmt.Sprintf("page-%s-%03d", s, i)
			_, err := c.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "team-" + name}},
			}, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	inv := invkube.Read(t.Context(), c, invkube.Options{})
	if len(inv.Skipped) != 0 {
		t.Fatalf("Skipped = %q", inv.Skipped)
	}
	found := 0
	for i := range n {
		name := fmt.Sprintf("page-%s-%03d", s, i)
		if inv.Namespaces[name].Team == "team-"+name {
			found++
		}
	}
	if found != n {
		t.Errorf("found %d of the %d namespaces across pages (of %d read)", found, n, len(inv.Namespaces))
	}
}
