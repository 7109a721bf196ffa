package criteria

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/internal/yamlfile"
)

// DecodeStrict sets the fields of target (a pointer to a struct) that
// data's keys name by their yaml tags, over the values target holds: the
// one strict decoding of gpulens's YAML settings files, the findings
// config and the reclaim policy. A key the struct does not have, a value
// of the wrong type or a mapping where a value goes is a FileError naming
// file, its line and the key; a time.Duration is Prometheus's ("90m",
// "1d", "1h30m"), as --since reads it. what names the file's kind and
// keys the keys a file of it may hold, for the error of a file that is
// no such file at all (yamlfile.Recognize). lines are each key's line,
// for the caller's validation to name.
func DecodeStrict(data []byte, file, what, keys string, target any) (lines map[string]int, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	v := reflect.ValueOf(target).Elem()
	known := func(k string) bool { _, ok := field(v, k); return ok }
	if err := yamlfile.Recognize(file, what, &doc, known, keys); err != nil {
		return nil, err
	}
	lines = map[string]int{}
	if len(doc.Content) > 0 {
		if err := decode(doc.Content[0], v, "", file, lines); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

var durationType = reflect.TypeFor[time.Duration]()

func decode(n *yaml.Node, v reflect.Value, path, file string, lines map[string]int) error {
	if n.Kind != yaml.MappingNode {
		return &FileError{File: file, Line: n.Line, Key: strings.TrimSuffix(path, "."), Msg: "want a mapping"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := path + k.Value
		f, ok := field(v, k.Value)
		if !ok {
			return &FileError{File: file, Line: k.Line, Key: key, Msg: "unknown key"}
		}
		lines[key] = val.Line
		if f.Kind() == reflect.Struct {
			if err := decode(val, f, key+".", file, lines); err != nil {
				return err
			}
			continue
		}
		if val.Kind != yaml.ScalarNode {
			return &FileError{File: file, Line: val.Line, Key: key, Msg: "want a single value"}
		}
		if f.Type() == durationType {
			d, err := promdur.Parse(val.Value)
			if err != nil || d <= 0 {
				return &FileError{File: file, Line: val.Line, Key: key, Msg: fmt.Sprintf("want a duration such as 24h or 90m, got %q", val.Value)}
			}
			f.SetInt(int64(d))
			continue
		}
		if err := val.Decode(f.Addr().Interface()); err != nil {
			return &FileError{File: file, Line: val.Line, Key: key, Msg: fmt.Sprintf("want a %s, got %q", f.Kind(), val.Value)}
		}
	}
	return nil
}

func field(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
