package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReclaimUndoContext: undo reaches the cluster through the --context
// it is given, not the kubeconfig's current one: a context the kubeconfig
// lacks is a cluster that cannot be reached, named, and nothing written.
func TestReclaimUndoContext(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: a, user: {token: t}}]
contexts: [{name: prod-a, context: {cluster: a, user: a}}]
current-context: prod-a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := execute([]string{"reclaim", "undo", "--kubeconfig", kc, "--context", "prod-b", "ml/Deployment/nb"}, &stdout, &stderr)
	if code != exitNoCluster || stdout.Len() != 0 || !strings.Contains(stderr.String(), "prod-b") {
		t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q (want the context named)", code, exitNoCluster, stdout.String(), stderr.String())
	}
}
