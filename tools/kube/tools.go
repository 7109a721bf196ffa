//go:build tools

// Package kube records the commands this module builds, so that go mod tidy
// keeps their dependencies.
package kube

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
