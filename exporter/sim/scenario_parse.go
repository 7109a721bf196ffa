package sim

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/internal/yamlfile"
)

//go:embed testdata/default.yaml
var defaultScenario []byte

// DefaultFile is the name Default reports in errors and the one the
// default scenario has under testdata/.
const DefaultFile = "default.yaml"

// Default returns a fresh copy of the embedded default scenario: six nodes,
// 38 GPUs, every sharing mode and load profile, one node of DRA and one of
// HAMi.
func Default() *Scenario {
	sc, err := Parse(defaultScenario, DefaultFile)
	if err != nil {
		// The embedded file is tested; reaching this is a build defect.
		panic("sim: embedded default scenario is invalid: " + err.Error())
	}
	return sc
}

// Load reads and parses the scenario file at path.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a YAML scenario. Every problem is reported,
// joined, each as "file:line: field.path: message". Defaults are filled in
// on success: Node.GPUs, Pod.Container and Pod.Processes.
func Parse(data []byte, filename string) (*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty scenario", filename)
	}
	if err := yamlfile.Recognize(filename, "scenario", &doc, func(k string) bool { return k == "seed" || k == "nodes" }, "seed, nodes"); err != nil {
		return nil, err
	}
	d := &decoder{file: filename, lines: map[string]int{}, budget: maxNodes}
	var sc Scenario
	d.decode(doc.Content[0], reflect.ValueOf(&sc).Elem(), "")
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	v := &validator{at: d}
	v.scenario(&sc)
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	applyDefaults(&sc)
	return &sc, nil
}

func applyDefaults(sc *Scenario) {
	for i := range sc.Nodes {
		n := &sc.Nodes[i]
		if n.GPUs == 0 {
			n.GPUs = defaultGPUsPerNode
		}
		for j := range n.Pods {
			p := &n.Pods[j]
			if p.Container == "" {
				p.Container = "main"
			}
			if p.Processes == 0 {
				p.Processes = 1
			}
		}
	}
}

// maxNodes bounds the YAML nodes a scenario may expand to, so that aliases
// referring to aliases (a "billion laughs" file) cannot exhaust memory.
const maxNodes = 1 << 20

// decoder turns a yaml.Node tree into the scenario types by reflection,
// strictly (unknown keys, wrong kinds and duplicates are errors) and
// remembering the line of every field path for the validator.
type decoder struct {
	file   string
	lines  map[string]int
	errs   []error
	budget int
}

func (d *decoder) errorf(line int, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	where := d.file
	if line > 0 {
		where = fmt.Sprintf("%s:%d", d.file, line)
	}
	if path == "" {
		d.errs = append(d.errs, fmt.Errorf("%s: %s", where, msg))
		return
	}
	d.errs = append(d.errs, fmt.Errorf("%s: %s: %s", where, path, msg))
}

// line is the line of path, or of its nearest recorded parent.
func (d *decoder) line(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return d.lines[""]
		}
		path = path[:i]
	}
}

// errAt reports a validation error on a field path.
func (d *decoder) errAt(path, format string, args ...any) {
	d.errorf(d.line(path), path, format, args...)
}

var (
	byteSizeType = reflect.TypeOf(ByteSize(0))
	durationType = reflect.TypeOf(Duration(0))
)

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.errorf(n.Line, path, "dangling alias")
			return
		}
		n = n.Alias
	}
	if d.budget--; d.budget < 0 {
		if d.budget == -1 {
			d.errorf(n.Line, path, "scenario too large (more than %d YAML nodes after alias expansion)", maxNodes)
		}
		return
	}
	d.lines[path] = n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // an empty value keeps the zero value
	}
	switch v.Type() {
	case byteSizeType:
		if s, ok := d.scalar(n, path, "a byte size like 20GiB"); ok {
			b, err := ParseByteSize(s)
			if err != nil {
				d.errorf(n.Line, path, "%v", err)
				return
			}
			v.SetUint(uint64(b))
		}
		return
	case durationType:
		if s, ok := d.scalar(n, path, "a duration like 90m or 2d"); ok {
			dur, err := ParseDuration(s)
			if err != nil {
				d.errorf(n.Line, path, "%v", err)
				return
			}
			v.SetInt(int64(dur))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n.Line, path, "want a list, got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Int:
		if s, ok := d.scalar(n, path, "an integer"); ok {
			i, err := strconv.ParseInt(s, 10, 0)
			if err != nil {
				d.errorf(n.Line, path, "want an integer, got %q", s)
				return
			}
			v.SetInt(i)
		}
	case reflect.Uint64:
		if s, ok := d.scalar(n, path, "a non-negative integer"); ok {
			u, err := strconv.ParseUint(s, 0, 64)
			if err != nil {
				d.errorf(n.Line, path, "want a non-negative integer, got %q", s)
				return
			}
			v.SetUint(u)
		}
	case reflect.Float64:
		if s, ok := d.scalar(n, path, "a number"); ok {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				d.errorf(n.Line, path, "want a number, got %q", s)
				return
			}
			v.SetFloat(f)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, path, "true or false"); ok {
			switch s {
			case "true":
				v.SetBool(true)
			case "false":
				v.SetBool(false)
			default:
				d.errorf(n.Line, path, "want true or false, got %q", s)
			}
		}
	default:
		// Only reachable if a field of an unsupported type is added to the
		// scenario types without teaching the decoder.
		d.errorf(n.Line, path, "internal: cannot decode into %s", v.Type())
	}
}

func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n.Line, path, "want %s, got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	default:
		return "nothing"
	}
}

// fieldIndex maps a struct's YAML keys to field indexes.
func fieldIndex(t reflect.Type) (map[string]int, []string) {
	idx := make(map[string]int, t.NumField())
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		idx[tag] = i
		keys = append(keys, tag)
	}
	return idx, keys
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, path, "want a mapping, got %s", describe(n))
		return
	}
	idx, keys := fieldIndex(v.Type())
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		child := key
		if path != "" {
			child = path + "." + key
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k.Line, path, "want a field name, got %s", describe(k))
			continue
		}
		fi, ok := idx[key]
		if !ok {
			d.errorf(k.Line, child, "unknown field (want one of %s)", strings.Join(keys, ", "))
			continue
		}
		if seen[key] {
			d.errorf(k.Line, child, "duplicate field")
			continue
		}
		seen[key] = true
		d.decode(val, v.Field(fi), child)
		// A key line is where a reader looks for a field, even when the
		// value (a list) starts below it.
		d.lines[child] = k.Line
	}
}

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20,
	"gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseByteSize parses 512MiB, 20GiB, 1.5GiB, 20GB (decimal), 20Gi
// (Kubernetes quantity style) or a plain byte count.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if u, err := strconv.ParseUint(t, 10, 64); err == nil {
		return ByteSize(u), nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("invalid byte size %q (want e.g. 512MiB, 20GiB, 20GB)", s)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("invalid byte size %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, t[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	b := math.Round(f * mult)
	if b >= math.MaxUint64 {
		return 0, fmt.Errorf("byte size %q is too large", s)
	}
	return ByteSize(b), nil
}

// String formats the size in the largest binary unit that keeps it short.
func (b ByteSize) String() string {
	units := []struct {
		name string
		size uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	for _, u := range units {
		if uint64(b) >= u.size {
			v := math.Round(float64(b)/float64(u.size)*100) / 100
			return strconv.FormatFloat(v, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatUint(uint64(b), 10) + "B"
}

// ParseDuration parses a Go duration with an optional leading day count:
// 90s, 30m, 6h, 2d, 1.5d, 1d12h. A bare 0 is zero.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	var days float64
	if i := strings.IndexByte(t, 'd'); i >= 0 {
		f, err := strconv.ParseFloat(t[:i], 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > maxDays {
			return 0, fmt.Errorf("invalid duration %q (want e.g. 90s, 30m, 6h, 2d)", s)
		}
		days, t = f, t[i+1:]
		if days < 0 {
			return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
		}
		if t == "" {
			return Duration(time.Duration(days * float64(24*time.Hour))), nil
		}
	}
	rest, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 90s, 30m, 6h, 2d)", s)
	}
	if days < 0 || rest < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	return Duration(time.Duration(days*float64(24*time.Hour)) + rest), nil
}

// maxDays keeps day counts far from time.Duration's ~292-year range.
const maxDays = 10000

// String formats the duration as Go does, with whole days split off.
func (d Duration) String() string {
	td := time.Duration(d)
	if td >= 24*time.Hour {
		days := td / (24 * time.Hour)
		rest := td - days*24*time.Hour
		if rest == 0 {
			return strconv.FormatInt(int64(days), 10) + "d"
		}
		return strconv.FormatInt(int64(days), 10) + "d" + rest.String()
	}
	return td.String()
}
