// Package kustomize renders the directory `gpulens recommend -o kustomize`
// writes with kustomize's own Go packages (sigs.k8s.io/kustomize/api, the
// code behind `kubectl kustomize`), in a module of its own so that
// kustomize's dependencies stay out of the main module and its binaries.
// Its tests hold the whole of it.
package kustomize
