package main

import "github.com/spf13/pflag"

// registerOutputDir adds --output-dir, the directory of -o kustomize
// (analyzer/manifest checks and writes it).
func registerOutputDir(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "output-dir", "", "With -o kustomize: the directory to write kustomization.yaml, resources/ and patches/ into")
}
