package reclaim

import (
	"errors"
	"testing"
)

// TestOneContext: reclaim writes to one API server: no --context is the
// kubeconfig's current one, one is that context (CONTEXT=CLUSTER names
// the cluster after the "="), and several or --all-contexts are refused.
func TestOneContext(t *testing.T) {
	for _, tc := range []struct {
		contexts []string
		all      bool
		want     string
		refused  bool
	}{
		{nil, false, "", false},
		{[]string{"prod-eu"}, false, "prod-eu", false},
		{[]string{"arn:aws:eks:us-east-1:1234:cluster/gpu=us-east"}, false, "arn:aws:eks:us-east-1:1234:cluster/gpu", false},
		{[]string{"a", "b"}, false, "", true},
		{nil, true, "", true},
	} {
		got, err := OneContext(tc.contexts, tc.all)
		var ce *ConfigError
		if got != tc.want || (err != nil) != tc.refused || (err != nil && !errors.As(err, &ce)) {
			t.Errorf("OneContext(%q, %v) = %q, %v; want %q, refused %v (a ConfigError)", tc.contexts, tc.all, got, err, tc.want, tc.refused)
		}
	}
}
