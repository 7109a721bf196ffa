package manifest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kustomization is the kustomization.yaml written (kustomize's
// config.k8s.io/v1beta1 Kustomization, the fields used).
type kustomization struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Resources  []string     `json:"resources,omitempty"`
	Patches    []patchEntry `json:"patches,omitempty"`
}

type patchEntry struct {
	Path   string `json:"path,omitempty"`
	Patch  string `json:"patch,omitempty"`
	Target Target `json:"target"`
}

// WriteKustomize writes docs into dir as one reviewable change: a
// kustomization.yaml listing the objects to create (resources/) and one
// strategic-merge patch per workload (patches/), each with its target,
// JSON patches inline; what is words alone heads the kustomization. Advice
// of several clusters gets a directory per cluster. It returns the files
// written.
func WriteKustomize(dir string, docs []Doc, empty string) ([]string, error) {
	cs := clusters(docs)
	var files []string
	for _, c := range cs {
		sub := dir
		if len(cs) > 1 || c != "" {
			sub = filepath.Join(dir, fileName(c))
		}
		var mine []Doc
		for _, d := range docs {
			if d.Cluster == c {
				mine = append(mine, d)
			}
		}
		f, err := writeKustomization(sub, c, mine, empty)
		files = append(files, f...)
		if err != nil {
			return files, err
		}
	}
	if len(cs) == 0 {
		return writeKustomization(dir, "", nil, empty)
	}
	return files, nil
}

func writeKustomization(dir, cluster string, docs []Doc, empty string) ([]string, error) {
	k := kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization"}
	head := []string{
		"Written by gpulens: the advice as one change. The patches apply to the workloads' manifests: add the",
		"directory or files that hold them to resources below (or copy the patches to the kustomization that",
		"does), review, then: kubectl apply -k <this directory> (server-side: kubectl kustomize <dir> | kubectl apply --server-side -f -)",
	}
	if cluster != "" {
		head = append(head, "cluster: "+cluster)
	}
	var files []string
	used := map[string]bool{}
	write := func(sub string, d Doc, obj map[string]any) (string, error) {
		t := targetOf(obj)
		base := fileName(strings.ToLower(t.Kind) + "-" + t.Namespace + "-" + t.Name)
		name := base
		for i := 2; used[sub+"/"+name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		used[sub+"/"+name] = true
		rel := sub + "/" + name + ".yaml"
		var buf bytes.Buffer
		writeComments(&buf, d.Comments)
		buf.Write(mustYAMLBytes(obj))
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("--output-dir: %w", err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return "", fmt.Errorf("--output-dir: %w", err)
		}
		files = append(files, path)
		return rel, nil
	}
	var words []string
	for _, d := range docs {
		switch {
		case d.JSONPatch != nil:
			k.Patches = append(k.Patches, patchEntry{Target: d.Target, Patch: strings.TrimRight(mustYAML(d.JSONPatch), "\n")})
			words = append(words, d.Comments...)
		case d.Object != nil && !d.Patch:
			rel, err := write("resources", d, d.Object)
			if err != nil {
				return files, err
			}
			k.Resources = append(k.Resources, rel)
		case d.Object != nil || d.ManifestOnly != nil:
			obj := d.Object
			if obj == nil {
				obj = d.ManifestOnly
			}
			rel, err := write("patches", d, obj)
			if err != nil {
				return files, err
			}
			k.Patches = append(k.Patches, patchEntry{Path: rel, Target: d.Target})
		default:
			words = append(words, d.Comments...)
		}
	}
	if len(k.Resources) == 0 && len(k.Patches) == 0 {
		words = append(words, empty)
	}
	var buf bytes.Buffer
	writeComments(&buf, head)
	if len(words) > 0 {
		buf.WriteString("#\n")
		writeComments(&buf, words)
	}
	buf.Write(mustYAMLBytes(k))
	path := filepath.Join(dir, "kustomization.yaml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, fmt.Errorf("--output-dir: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return files, fmt.Errorf("--output-dir: %w", err)
	}
	return append(files, path), nil
}

// fileName is s as a file name: lower-case letters, digits, dots and
// dashes; a name from the store cannot reach another directory.
func fileName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), ".-")
	if out == "" {
		out = "default"
	}
	if len(out) > 200 {
		out = out[:200]
	}
	return out
}
