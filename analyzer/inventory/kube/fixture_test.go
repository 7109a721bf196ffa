package kube

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

// loadObjects decodes a multi-document YAML fixture with client-go's
// scheme, so that fixtures are real API objects, as kubectl would send them.
func loadObjects(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, doc)
		}
		objs = append(objs, obj)
	}
	return objs
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// fakeCluster is the GPU Operator cluster of testdata/cluster.yaml.
func fakeCluster(t *testing.T, extra ...string) *fake.Clientset {
	t.Helper()
	objs := loadObjects(t, "testdata/cluster.yaml")
	for _, f := range extra {
		objs = append(objs, loadObjects(t, f)...)
	}
	return fake.NewClientset(objs...)
}

func testOptions(t *testing.T) Options {
	return Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

// testWriter sends log lines to t.Log so they show only for failing tests.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
