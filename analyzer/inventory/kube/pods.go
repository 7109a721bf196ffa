package kube

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

func readPods(ctx context.Context, r *reader) (func(), error) {
	pods := map[inventory.PodKey]inventory.Pod{}
	err := eachItem(ctx, r.c.CoreV1().Pods("").List, func(p *corev1.Pod) {
		pods[inventory.PodKey{Namespace: p.Namespace, Name: p.Name}] = r.podSummary(p)
	})
	return func() { r.inv.Pods = pods }, err
}

func (r *reader) podSummary(p *corev1.Pod) inventory.Pod {
	w, inferred := ownerRef{"Pod", p.Name}, false
	if ref := controllerOf(&p.ObjectMeta); ref.kind != "" {
		w, inferred = r.resolveOwner(p.Namespace, p.Labels, ref)
	}
	return inventory.Pod{
		PodKey:           inventory.PodKey{Namespace: p.Namespace, Name: p.Name},
		UID:              string(p.UID),
		Node:             p.Spec.NodeName,
		Phase:            string(p.Status.Phase),
		WorkloadKind:     w.kind,
		WorkloadName:     w.name,
		WorkloadInferred: inferred,
		GPURequests:      gpuRequests(&p.Spec),
		GPUContainer:     gpuContainer(&p.Spec),
		Claims:           podClaims(p),
		PriorityClass:    p.Spec.PriorityClassName,
		Labels:           p.Labels,
	}
}

// gpuRequests returns the GPU devices the kubelet allocates to a pod, by
// resource name, or nil for a CPU-only pod. It follows the scheduler's
// effective-request rule: the larger of what the app containers and all
// sidecars hold together, and what each init container holds alongside
// the sidecars started before it. Init containers run before the app
// containers, so their devices are reused rather than added.
func gpuRequests(spec *corev1.PodSpec) map[vocab.Resource]int64 {
	sidecars, initPeak := map[vocab.Resource]int64{}, map[vocab.Resource]int64{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addGPUs(sidecars, c)
			continue
		}
		during := maps.Clone(sidecars)
		addGPUs(during, c)
		for name, n := range during {
			initPeak[name] = max(initPeak[name], n)
		}
	}
	total := sidecars
	for i := range spec.Containers {
		addGPUs(total, &spec.Containers[i])
	}
	for name, n := range initPeak {
		total[name] = max(total[name], n)
	}
	if len(total) == 0 {
		return nil
	}
	return total
}

// addGPUs adds a container's GPUs. Extended resources must have a limit
// and a request equal to it, or only a limit; the larger of the two is
// taken so that a pod rejected by neither rule is still counted right.
func addGPUs(into map[vocab.Resource]int64, c *corev1.Container) {
	seen := map[corev1.ResourceName]bool{}
	for _, list := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
		for name := range list {
			if !vocab.Resource(name).IsGPU() || seen[name] {
				continue
			}
			seen[name] = true
			lim, req := c.Resources.Limits[name], c.Resources.Requests[name]
			if n := max(lim.Value(), req.Value()); n > 0 {
				into[vocab.Resource(name)] += n
			}
		}
	}
}

// gpuContainer is the one app container whose resources hold a GPU; empty
// where none or several do, since which of several a change is for is not
// in the spec. An init container's devices are not what a change of the
// running workload's request is about.
func gpuContainer(spec *corev1.PodSpec) string {
	name := ""
	for i := range spec.Containers {
		c := &spec.Containers[i]
		held := map[vocab.Resource]int64{}
		addGPUs(held, c)
		if len(held) == 0 {
			continue
		}
		if name != "" {
			return ""
		}
		name = c.Name
	}
	return name
}
