package kube

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gpulens/gpulens/analyzer/inventory"
	invkube "github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/vocab"
)

// fleetKubeconfig writes a kubeconfig of three contexts, as one of several
// clusters would be: "gpu-a" is the test server's admin, "gpu-b" the same
// server as a ServiceAccount that no role is bound to (its own
// credentials, refused), and "gpu-down" an address nothing listens on.
// gpu-a is the current context.
func fleetKubeconfig(t *testing.T, nobody string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(testKubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cur := kc.Contexts[kc.CurrentContext]
	admin := kc.AuthInfos[cur.AuthInfo]
	b := admin.DeepCopy()
	b.Impersonate = "system:serviceaccount:default:" + nobody
	b.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}
	down := kc.Clusters[cur.Cluster].DeepCopy()
	down.Server = "https://127.0.0.1:1"
	out := clientcmdapi.NewConfig()
	out.Clusters = map[string]*clientcmdapi.Cluster{"test": kc.Clusters[cur.Cluster], "down": down}
	out.AuthInfos = map[string]*clientcmdapi.AuthInfo{"admin": admin, "nobody": b}
	out.Contexts = map[string]*clientcmdapi.Context{
		"gpu-a":    {Cluster: "test", AuthInfo: "admin"},
		"gpu-b":    {Cluster: "test", AuthInfo: "nobody"},
		"gpu-down": {Cluster: "down", AuthInfo: "admin"},
	}
	out.CurrentContext = "gpu-a"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleetEachClusterItsOwnPart reads three contexts of one kubeconfig
// (--all-contexts) from the real API server: each is read with its own
// credentials, the one whose user RBAC refuses degrades to what it was
// refused (forbidden, named per resource), the unreachable one to its
// reason, and the admin's inventory is whole, with the node and pod the
// test created.
func TestFleetEachClusterItsOwnPart(t *testing.T) {
	c := clientFor(t, adminConfig(t))
	s := suffix(t)
	ns := testNamespace(t, c, "fleet", map[string]string{"team": "fleet-" + s})
	node := "gpu-fleet-" + s
	createNode(t, c, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{inventory.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceName(vocab.ResourceGPU): *resource.NewQuantity(8, resource.DecimalSI)}},
	})
	runPod(t, c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train-" + s, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1", Resources: gpuLimits(1)}}}}, node)

	o := invkube.Options{Kubeconfig: fleetKubeconfig(t, "nobody-"+s), Timeout: 20 * time.Second}
	members, err := invkube.ResolveMembers(o, []string{"gpu-b=b"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []inventory.Member{{Context: "gpu-a", Cluster: "gpu-a"}, {Context: "gpu-b", Cluster: "b"}, {Context: "gpu-down", Cluster: "gpu-down"}}
	if !slices.Equal(members, want) {
		t.Fatalf("members %v, want %v", members, want)
	}
	f := invkube.ReadFleet(t.Context(), o, members, 2)

	a := f.For("gpu-a")
	if !a.Available || slices.ContainsFunc(a.Skipped, func(sk string) bool { return strings.Contains(sk, "forbidden") }) {
		t.Fatalf("gpu-a: available %v, skipped %q: want the admin's whole inventory", a.Available, a.Skipped)
	}
	if _, ok := a.Nodes[node]; !ok {
		t.Errorf("gpu-a lacks node %s", node)
	}
	if p, ok := a.Pods[inventory.PodKey{Namespace: ns, Name: "train-" + s}]; !ok || p.Node != node {
		t.Errorf("gpu-a pod %+v (found %v), want train-%s on %s", p, ok, s, node)
	}
	if team := a.Namespaces[ns].Team; team != "fleet-"+s {
		t.Errorf("gpu-a team of %s = %q", ns, team)
	}

	b := f.For("b")
	if !b.Available || len(b.Nodes) != 0 || len(b.Pods) != 0 {
		t.Errorf("b: available %v, %d nodes, %d pods: want the server reached and nothing read", b.Available, len(b.Nodes), len(b.Pods))
	}
	for _, res := range []string{"nodes", "pods", "namespaces"} {
		if !slices.ContainsFunc(b.Skipped, func(sk string) bool { return strings.HasPrefix(sk, res+": forbidden") }) {
			t.Errorf("b skipped %q, want %s forbidden", b.Skipped, res)
		}
	}

	down := f.For("gpu-down")
	if down.Available || len(down.Skipped) != 1 || !strings.HasPrefix(down.Skipped[0], "kubernetes API unreachable: ") {
		t.Errorf("gpu-down: available %v, skipped %q: want unreachable", down.Available, down.Skipped)
	}

	unread := f.Unread()
	for _, prefix := range []string{"cluster b (context gpu-b): nodes: forbidden", "cluster gpu-down: kubernetes API unreachable: "} {
		if !slices.ContainsFunc(unread, func(u string) bool { return strings.HasPrefix(u, prefix) }) {
			t.Errorf("Unread %q lacks %q", unread, prefix)
		}
	}
	if slices.ContainsFunc(unread, func(u string) bool { return strings.HasPrefix(u, "cluster gpu-a:") && strings.Contains(u, "forbidden") }) {
		t.Errorf("Unread %q blames gpu-a", unread)
	}
	if m, _ := f.Primary(); m.Cluster != "gpu-a" {
		t.Errorf("Primary %v, want gpu-a", m)
	}
}
