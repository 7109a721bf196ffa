// Package manifest builds gpulens's advice as Kubernetes objects: every
// change 'recommend', 'plan' and 'quota' advise becomes an object to create
// or a patch with its target, built from k8s.io/api's typed objects and
// marshalled by sigs.k8s.io/yaml, never written from strings. Nothing a
// metrics store holds (a namespace, a workload's or a pod's name) can then
// change the YAML's structure; what is said in words around the objects
// goes through safetext.Comment.
//
// The analysis packages (report, findings, recommend, plan, quota) hand
// it plain data and stay free of k8s.io/api, which alone is some 270
// packages; only cmd/gpulens imports this one.
//
// Two forms: a YAML stream for 'kubectl apply --server-side -f' (Write),
// and a kustomize directory, a kustomization.yaml with the objects as
// resources and one patch per workload with its target (WriteKustomize).
package manifest
