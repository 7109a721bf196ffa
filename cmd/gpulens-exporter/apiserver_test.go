package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/vocab"
)

// TestKubeconfigSharingStrategy runs --kubernetes.kubeconfig's client
// against the test API server (scripts/test-servers.sh): GFD's label picks
// MPS, an unlabelled node and a node the server does not know (a real 404)
// fall back to time-slicing. e2e/kube checks the same reads under the
// chart's RBAC.
func TestKubeconfigSharingStrategy(t *testing.T) {
	kube, err := kubeClient(testenv.Env(t, "GPULENS_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	s := hex.EncodeToString(b)
	mps, plain := "gpu-mps-"+s, "gpu-plain-"+s
	for name, labels := range map[string]map[string]string{mps: {sharingLabel: "mps"}, plain: nil} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if err := kube.Post().Resource("nodes").Body(n).Do(ctx).Error(); err != nil {
			t.Fatalf("create node %s: %v", name, err)
		}
		t.Cleanup(func() { _ = kube.Delete().Resource("nodes").Name(name).Do(context.Background()).Error() })
	}
	logger := slog.New(slog.DiscardHandler)
	for node, want := range map[string]vocab.Sharing{
		mps:           attribution.SharingMPS,
		plain:         attribution.SharingTimeSlicing,
		"absent-" + s: attribution.SharingTimeSlicing,
	} {
		labels := func(ctx context.Context) (map[string]string, error) { return podindex.NodeLabels(ctx, kube, node) }
		if got := nodeSharingStrategy(ctx, labels, node, logger); got != want {
			t.Errorf("node %s: sharing strategy %q, want %q", node, got, want)
		}
	}
}
