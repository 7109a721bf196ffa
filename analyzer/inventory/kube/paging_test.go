package kube

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// pagedPods makes the fake clientset page pod lists the way the API
// server does (the fake tracker ignores Limit and Continue): Continue is
// the offset of the next page. When expireAfter > 0, the continue token of
// that many pages later has expired, as after an etcd compaction.
func pagedPods(c *fake.Clientset, calls *[]metav1.ListOptions, expireAfter int) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(interface{ GetListOptions() metav1.ListOptions }).GetListOptions()
		*calls = append(*calls, opts)
		obj, err := c.Tracker().List(podsGVR, podsGVK, a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.PodList)
		slices.SortFunc(list.Items, func(a, b corev1.Pod) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		start := 0
		if opts.Continue != "" {
			if expireAfter > 0 && len(*calls) > expireAfter {
				return true, nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
			}
			start, _ = strconv.Atoi(opts.Continue)
		}
		end := len(list.Items)
		if opts.Limit > 0 && start+int(opts.Limit) < end {
			end = start + int(opts.Limit)
			list.Continue = strconv.Itoa(end)
		}
		list.Items = list.Items[start:end]
		return true, list, nil
	}
}

func manyPods(n int) []runtime.Object {
	objs := make([]runtime.Object, 0, n)
	for i := range n {
		objs = append(objs, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprintf("team-%d", i%7),
				Name:      fmt.Sprintf("worker-%d", i),
				UID:       types.UID("uid-" + strconv.Itoa(i)),
			},
			Spec: corev1.PodSpec{
				NodeName: fmt.Sprintf("gpu-%d", i%64),
				Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return objs
}

func TestReadPagesPods(t *testing.T) {
	const pods = 1234
	tests := []struct {
		name        string
		expireAfter int
		// wantLimits are the Limit of each request, in order.
		wantLimits []int64
	}{
		{"three pages", 0, []int64{500, 500, 500}},
		// One unpaged list replaces the lost snapshot rather than failing.
		{"continue token expires", 2, []int64{500, 500, 500, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientset(manyPods(pods)...)
			var calls []metav1.ListOptions
			c.PrependReactor("list", "pods", pagedPods(c, &calls, tt.expireAfter))

			inv := Read(t.Context(), c, testOptions(t))
			if len(inv.Skipped) != 0 {
				t.Errorf("Skipped = %q", inv.Skipped)
			}
			if len(inv.Pods) != pods {
				t.Errorf("read %d pods, want %d", len(inv.Pods), pods)
			}
			var limits []int64
			for _, o := range calls {
				limits = append(limits, o.Limit)
			}
			if !slices.Equal(limits, tt.wantLimits) {
				t.Errorf("list limits = %v, want %v", limits, tt.wantLimits)
			}
			if tt.expireAfter == 0 && (calls[1].Continue != "500" || calls[2].Continue != "1000") {
				t.Errorf("continue tokens %q, %q; want each page to continue the last", calls[1].Continue, calls[2].Continue)
			}
			p := inv.Pods[inventory.PodKey{Namespace: "team-1", Name: "worker-1233"}]
			if p.GPURequests["nvidia.com/gpu"] != 1 || p.Node != "gpu-17" {
				t.Errorf("last pod = %+v", p)
			}
		})
	}
}
