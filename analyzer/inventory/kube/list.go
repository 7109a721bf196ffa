package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// pageSize keeps each list response small enough for the API server to
// serve without a memory spike on clusters with tens of thousands of pods.
const pageSize = 500

// listFunc is one typed List call, e.g. c.CoreV1().Pods("").List.
type listFunc[L runtime.Object] func(context.Context, metav1.ListOptions) (L, error)

// eachItem pages through a list and calls fn for every item, one page in
// memory at a time. When a continue token expires mid-way (410 Gone after
// an etcd compaction), the pages read so far belong to a snapshot that no
// longer exists; like client-go's pager it then reads everything again in
// one unpaged, consistent list. fn therefore sees some items twice in that
// case and must store them by name.
func eachItem[T any, L runtime.Object](ctx context.Context, list listFunc[L], fn func(*T)) error {
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		page, err := list(ctx, opts)
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				opts = metav1.ListOptions{}
				continue
			}
			return err
		}
		err = meta.EachListItem(page, func(obj runtime.Object) error {
			item, ok := any(obj).(*T)
			if !ok {
				return fmt.Errorf("unexpected list item %T", obj)
			}
			fn(item)
			return nil
		})
		if err != nil {
			return err
		}
		lm, err := meta.ListAccessor(page)
		if err != nil {
			return err
		}
		if lm.GetContinue() == "" {
			return nil
		}
		opts.Continue = lm.GetContinue()
	}
}
