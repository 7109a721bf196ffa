// Package chart renders and checks deploy/helm/gpulens with Helm's own Go
// packages (helm.sh/helm/v4), as `helm template` and `helm lint` would,
// so that neither CI nor `make manifests` needs a helm binary. It is a
// module of its own: Helm brings a large dependency graph that the
// exporter and the analyzer must not inherit.
package chart

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"
)

// KubeVersion is the Kubernetes version the chart is rendered and linted
// for: that of the kube-apiserver the e2e tests run (tools/kube/go.mod).
// Helm would otherwise derive it from client-go's version, and pin it to
// an old default inside test binaries, so renders would differ between
// `make manifests` and the tests.
const KubeVersion = "v1.37.2"

// Release is how the chart is installed.
type Release struct {
	// Name is the release name; "gpulens" when empty.
	Name string
	// Namespace is the release namespace; "gpulens" when empty.
	Namespace string
	// Values overrides the chart's values.yaml, as `helm template -f`
	// does (maps merge, anything else replaces).
	Values map[string]any
}

func (r Release) name() string      { return cmp(r.Name, "gpulens") }
func (r Release) namespace() string { return cmp(r.Namespace, "gpulens") }

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ParseValues reads a values document, as a file given to -f.
func ParseValues(doc string) (map[string]any, error) {
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	return v, nil
}

func kubeVersion() *common.KubeVersion {
	v, err := common.ParseKubeVersion(KubeVersion)
	if err != nil {
		panic(err) // a constant
	}
	return v
}

// Render returns the chart's manifests as `helm template` prints them:
// every object after a "---" and a "# Source:" line naming its template,
// in Helm's install order. Nothing talks to a cluster.
func Render(chartDir string, r Release) (string, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return "", fmt.Errorf("load chart %s: %w", chartDir, err)
	}
	// Helm logs its progress at debug and info; a render has nothing to
	// report that the error does not.
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(io.Discard, nil)))
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = r.name()
	install.Namespace = r.namespace()
	install.Replace = true // no release store to check the name against
	install.KubeVersion = kubeVersion()
	vals := r.Values
	if vals == nil {
		vals = map[string]any{}
	}
	rel, err := install.Run(ch, vals)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", chartDir, err)
	}
	rl, ok := rel.(*release.Release)
	if !ok {
		return "", fmt.Errorf("render %s: helm returned a %T, not a v1 release", chartDir, rel)
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rl.Manifest))
	b.WriteString("\n")
	// `helm template` prints hooks after the manifest; the chart has none
	// today, and a hook is still an object to check.
	for _, h := range rl.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String(), nil
}

// DefaultHeader opens deploy/manifests/gpulens.yaml, the chart rendered
// with default values.
const DefaultHeader = "# Rendered from deploy/helm/gpulens with default values by `make manifests`; do not edit.\n"
