// Command render writes the chart's manifests as `helm template` would,
// through Helm's Go packages: `make manifests` runs it to regenerate
// deploy/manifests/gpulens.yaml, so no helm binary is needed.
//
//	go -C tools/chart run ./cmd/render -chart ../../deploy/helm/gpulens -o ../../deploy/manifests/gpulens.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpulens/gpulens/tools/chart"
)

func main() {
	chartDir := flag.String("chart", "deploy/helm/gpulens", "chart directory")
	out := flag.String("o", "-", "output file (- for standard output)")
	valuesFile := flag.String("f", "", "values file overriding the chart's values.yaml")
	namespace := flag.String("namespace", "gpulens", "release namespace")
	name := flag.String("name", "gpulens", "release name")
	flag.Parse()
	if err := run(*chartDir, *out, *valuesFile, chart.Release{Name: *name, Namespace: *namespace}); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(chartDir, out, valuesFile string, r chart.Release) error {
	if valuesFile != "" {
		b, err := os.ReadFile(valuesFile)
		if err != nil {
			return err
		}
		if r.Values, err = chart.ParseValues(string(b)); err != nil {
			return fmt.Errorf("%s: %w", valuesFile, err)
		}
	}
	manifest, err := chart.Render(chartDir, r)
	if err != nil {
		return err
	}
	if valuesFile == "" {
		manifest = chart.DefaultHeader + manifest
	}
	if out == "-" {
		_, err = os.Stdout.WriteString(manifest)
		return err
	}
	return os.WriteFile(out, []byte(manifest), 0o644)
}
