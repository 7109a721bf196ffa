package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"gopkg.in/yaml.v3"
	k8syaml "sigs.k8s.io/yaml"
)

// renderChart renders the chart's templates with values overridden by
// sets (dotted keys). With helm on PATH it runs `helm template`; without
// it (CI installs no helm) it executes the templates with Go's
// text/template and the handful of Sprig functions these templates use,
// with Helm's semantics, which is enough to catch a template that does
// not parse, indents wrongly or reads a missing file.
func renderChart(t *testing.T, templates []string, sets map[string]any) []map[string]any {
	t.Helper()
	var out []byte
	if helm, err := exec.LookPath("helm"); err == nil {
		args := []string{"template", "gpulens", chart, "--namespace", "gpulens"}
		for k, v := range sets {
			args = append(args, "--set", fmt.Sprintf("%s=%v", k, v))
		}
		for _, tpl := range templates {
			args = append(args, "--show-only", "templates/"+tpl)
		}
		if out, err = exec.Command(helm, args...).Output(); err != nil {
			t.Fatalf("helm template: %v", err)
		}
	} else {
		out = emulateHelm(t, templates, sets)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, out)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

type chartFiles map[string][]byte

func (f chartFiles) Get(name string) string { return string(f[name]) }

func (f chartFiles) Glob(pattern string) map[string][]byte {
	m := map[string][]byte{}
	for name, b := range f {
		if ok, _ := path.Match(pattern, name); ok {
			m[name] = b
		}
	}
	return m
}

func emulateHelm(t *testing.T, templates []string, sets map[string]any) []byte {
	t.Helper()
	var values map[string]any
	b, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	for k, v := range sets {
		m := values
		keys := strings.Split(k, ".")
		for _, key := range keys[:len(keys)-1] {
			m = m[key].(map[string]any)
		}
		m[keys[len(keys)-1]] = v
	}
	files := chartFiles{}
	err = filepath.WalkDir(filepath.Join(chart, "files"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chart, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	indent := func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	root := template.New("chart").Option("missingkey=zero")
	root.Funcs(template.FuncMap{
		"include": func(name string, data any) (string, error) {
			var buf bytes.Buffer
			err := root.ExecuteTemplate(&buf, name, data)
			return buf.String(), err
		},
		"toYaml": func(v any) string {
			b, err := k8syaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(b), "\n")
		},
		"indent":  indent,
		"nindent": func(n int, s string) string { return "\n" + indent(n, s) },
		"ternary": func(a, b any, cond bool) any {
			if cond {
				return a
			}
			return b
		},
		"trunc":      func(n int, s string) string { return s[:min(n, len(s))] },
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"base":       path.Base,
		"quote":      func(s any) string { return fmt.Sprintf("%q", fmt.Sprint(s)) },
		"default": func(d, v any) any {
			if v == nil || v == "" || v == false {
				return d
			}
			return v
		},
	})
	for _, name := range append([]string{"_helpers.tpl"}, templates...) {
		b, err := os.ReadFile(filepath.Join(chart, "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := root.New(name).Parse(string(b)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	data := map[string]any{
		"Values":  values,
		"Files":   files,
		"Release": map[string]any{"Name": "gpulens", "Namespace": "gpulens", "Service": "Helm"},
		"Chart":   map[string]any{"Name": "gpulens", "Version": "0.1.0", "AppVersion": "0.1.0"},
	}
	var out bytes.Buffer
	for _, name := range templates {
		out.WriteString("---\n")
		if err := root.ExecuteTemplate(&out, name, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out.WriteString("\n")
	}
	return out.Bytes()
}
