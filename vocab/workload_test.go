package vocab

import "testing"

// Pod names as the controllers generate them: generateName's five
// characters of k8s.io/apimachinery/pkg/util/rand's alphabet, a
// ReplicaSet's pod-template-hash, a CronJob's scheduled minute
// (kubernetes pkg/controller/cronjob getJobName), an indexed Job's
// completion index, a StatefulSet's ordinal.
func TestWorkloadOf(t *testing.T) {
	for _, tt := range []struct{ pod, name, kind string }{
		{"", "", ""},
		{"triton-6b8f9c7d54-x2k4q", "triton", "Deployment"},
		{"nightly-eval-29431200-7hq2m", "nightly-eval", "CronJob"},
		{"trainer-3-x2k4q", "trainer", "Job"},
		{"trainer-x2k4q", "trainer", "Job"},
		{"db-0", "db", "StatefulSet"},
		{"notebook", "notebook", "Pod"},
		// "aeiou" is not generateName's alphabet (no vowels): a pod of its own.
		{"web-aeiou", "web-aeiou", "Pod"},
	} {
		if name, kind := WorkloadOf(tt.pod); name != tt.name || kind != tt.kind {
			t.Errorf("WorkloadOf(%q) = %q, %q, want %q, %q", tt.pod, name, kind, tt.name, tt.kind)
		}
	}
}
