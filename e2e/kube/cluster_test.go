// Package kube tests the code that talks to Kubernetes against a real
// kube-apiserver (scripts/test-servers.sh starts one over etcd and exports
// GPULENS_TEST_KUBECONFIG). Unlike client-go's fake clientset, the server
// applies field selectors, RBAC, admission, defaulting and validation, so
// these tests fail where a real cluster would.
//
// Only the API server runs: no scheduler, no controllers, no kubelet. The
// tests therefore do what those would have done themselves: bind pods to
// nodes (spec.nodeName), write pod and node status, link owners through
// ownerReferences and fill in quota usage. Every test names its objects
// uniquely, so tests may share one server and be rerun against it.
package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpulens/gpulens/internal/testenv"
)

// adminConfig is the cluster-admin (system:masters) identity of the test
// server's kubeconfig.
func adminConfig(t *testing.T) *rest.Config {
	t.Helper()
	path := testKubeconfig(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	// Setting up a test takes a few dozen requests; client-go's default of
	// 5 QPS would make that the slowest part of the test.
	cfg.QPS, cfg.Burst = 100, 200
	cfg.Timeout = 30 * time.Second
	return cfg
}

// testKubeconfig is the path of the test server's kubeconfig.
func testKubeconfig(t *testing.T) string {
	t.Helper()
	return testenv.Env(t, "GPULENS_TEST_KUBECONFIG")
}

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// asServiceAccount returns cfg acting as a service account, as a pod
// running under it would: the API server authorizes every request as that
// account, with its groups, and RBAC decides.
func asServiceAccount(cfg *rest.Config, namespace, name string) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return out
}

// kubeconfigAs writes a copy of the test kubeconfig that acts as a
// service account (kubectl's --as), for code that builds its own client
// from --kubeconfig.
func kubeconfigAs(t *testing.T, namespace, name string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(testKubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	user := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	user.Impersonate = fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
	user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// suffix makes names unique across tests and reruns on one server.
func suffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// containerID is a runtime container ID in the form pod status carries.
func containerID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "containerd://" + hex.EncodeToString(b)
}

// ensureNamespace creates a namespace, and its default ServiceAccount, if
// absent. The ServiceAccount admission plugin refuses pods whose service
// account does not exist, and without the controller manager nobody else
// creates "default".
func ensureNamespace(t *testing.T, c kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("namespace %s: %v", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
	if _, err := c.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("service account %s/default: %v", name, err)
	}
}

// testNamespace is a fresh namespace for one test. It is not deleted: with
// no namespace controller a deleted namespace stays Terminating with all
// its objects, which would only hide them from later reads.
func testNamespace(t *testing.T, c kubernetes.Interface, prefix string, labels map[string]string) string {
	t.Helper()
	name := prefix + "-" + suffix(t)
	ensureNamespace(t, c, name, labels)
	return name
}

// createNode registers a node as a kubelet would: the object, then its
// status with the capacity the device plugin advertises.
func createNode(t *testing.T, c kubernetes.Interface, n *corev1.Node) *corev1.Node {
	t.Helper()
	ctx := t.Context()
	status := n.Status
	created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("node %s: %v", n.Name, err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
	})
	if len(status.Capacity) == 0 {
		return created
	}
	created.Status = status
	updated, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("node %s status: %v", n.Name, err)
	}
	return updated
}

// runPod creates a pod bound to node, standing in for the scheduler, and
// reports it running with started containers, standing in for the
// kubelet. The pod's containers are those of spec (one "main" container
// when spec has none).
func runPod(t *testing.T, c kubernetes.Interface, p *corev1.Pod, node string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	p = p.DeepCopy()
	p.Spec.NodeName = node
	if len(p.Spec.Containers) == 0 {
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}
	}
	created, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	created.Status.Phase = corev1.PodRunning
	for _, ctr := range created.Spec.Containers {
		created.Status.ContainerStatuses = append(created.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:        ctr.Name,
			Image:       ctr.Image,
			ImageID:     ctr.Image,
			ContainerID: containerID(t),
			Ready:       true,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
		})
	}
	running, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("pod %s/%s status: %v", p.Namespace, p.Name, err)
	}
	return running
}

// eventually polls cond, since watch events arrive asynchronously.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
