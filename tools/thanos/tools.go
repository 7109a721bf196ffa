//go:build tools

// Package thanos records the command this module builds, so that go mod tidy
// keeps its dependencies.
package thanos

import _ "github.com/thanos-io/thanos/cmd/thanos"
