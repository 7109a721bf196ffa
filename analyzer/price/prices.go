package price

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/internal/suggest"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/internal/yamlfile"
)

//go:embed prices.yaml
var defaultPrices []byte

// Prices is a table of on-demand prices per GPU-hour.
type Prices struct {
	// Date and Sources say how current and where from the table is; with
	// an override, they are the override's when it sets them.
	Date     string
	Currency string
	Sources  []string
	// Files lists where the table came from, the embedded default first.
	Files []string
	// perHour is keyed by lower-cased catalog key or product name, and
	// from says which file set each price.
	perHour map[string]float64
	from    map[string]string
	// discount is the part taken off a pool's price (committed use, spot),
	// by the same keys, and discountFrom which file set it.
	discount     map[string]float64
	discountFrom map[string]string
	// dates is each file's date: a price keeps the date of the file that
	// set it.
	dates map[string]string
	// perNode is a node's price by its instance type, lower-cased
	// (node.kubernetes.io/instance-type), and nodeFrom which file set it.
	perNode  map[string]float64
	nodeFrom map[string]string
}

// DefaultPrices is the embedded table (prices.yaml).
func DefaultPrices() *Prices {
	p, err := parsePrices(&Prices{perHour: map[string]float64{}, from: map[string]string{}, discount: map[string]float64{},
		discountFrom: map[string]string{}, dates: map[string]string{}, perNode: map[string]float64{}, nodeFrom: map[string]string{}},
		defaultPrices, "embedded prices.yaml")
	if err != nil {
		panic(err) // a broken embedded file is a build defect; a test guards it
	}
	return p
}

// LoadPrices returns the default table overridden by the file at path, or
// the default table when path is empty.
func LoadPrices(path string) (*Prices, error) {
	p := DefaultPrices()
	if path == "" {
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	return parsePrices(p, data, path)
}

// Override returns a copy of p with the entries of a YAML price file
// (named filename in errors) on top.
func (p *Prices) Override(data []byte, filename string) (*Prices, error) {
	return parsePrices(p, data, filename)
}

// ErrNoPrice is wrapped by PerHour's error for a model without a price.
var ErrNoPrice = errors.New("no price")

// PerHour is the price of one whole GPU of model for an hour, less its
// pool's discount. A product name priced by its exact name wins over its
// catalog key, so an override can tell apart variants the catalog lumps
// together. A vGPU (ParseVGPU) not priced by its own name is its share of
// its board's price (VGPU.Share): "GRID A100-10C" is 10/40 of an
// A100-40GB's; where the board or its price is not known, the vGPU's
// price is unknown, never the whole board's.
func (p *Prices) PerHour(model string) (float64, error) {
	v, _, err := p.priceOf(model)
	return v, err
}

// priceOf is PerHour with the price's source in words.
func (p *Prices) priceOf(model string) (float64, string, error) {
	if p == nil {
		return 0, "", fmt.Errorf("%w: no price table", ErrNoPrice)
	}
	if key, ok := tableKey(model, p.perHour); ok {
		v, discount := p.discounted(model, p.perHour[key])
		return v, p.fileSource(p.from[key]) + discount, nil
	}
	if g, ok := ParseVGPU(model); ok {
		b, share, ok := g.Share()
		if !ok {
			return 0, "", fmt.Errorf("%w for vGPU %q: the framebuffer of its board (%s) is not known, so its share of the board cannot be priced: add %q to a --prices file",
				ErrNoPrice, model, g.Board, model)
		}
		key := strings.ToLower(b.Key)
		if _, priced := p.perHour[key]; b.Key == "" || !priced {
			return 0, "", fmt.Errorf("%w for vGPU %q: its board, the %s, has no price: add %q (or the board, %s) to a --prices file",
				ErrNoPrice, model, b.Product, model, cmp.Or(b.Key, "by its catalog key"))
		}
		v, discount := p.discounted(model, share*p.perHour[key])
		return v, fmt.Sprintf("%d/%d of the %s's price (vGPU %s's framebuffer over the board's) in %s%s",
			g.FramebufferGB, b.FramebufferGB, b.Key, g.Type(), p.fileSource(p.from[key]), discount), nil
	}
	if model == "" {
		return 0, "", fmt.Errorf("%w for a GPU of unknown model", ErrNoPrice)
	}
	return 0, "", fmt.Errorf("%w for model %q: add it to a --prices file", ErrNoPrice, model)
}

// Source says where model's price comes from: the file and its date, a
// vGPU's share of its board, and the discount taken off it and where that
// was set; empty without a price.
func (p *Prices) Source(model string) string {
	_, src, err := p.priceOf(model)
	if err != nil {
		return ""
	}
	return src
}

// PerNodeHour is the price of a node of instance type instance for an
// hour, less the discount of model's pool, and where the price and the
// discount come from; false when the table has no such instance type.
func (p *Prices) PerNodeHour(instance, model string) (price float64, source string, ok bool) {
	if p == nil || instance == "" {
		return 0, "", false
	}
	k := strings.ToLower(strings.TrimSpace(instance))
	v, ok := p.perNode[k]
	if !ok {
		return 0, "", false
	}
	v, discount := p.discounted(model, v)
	return v, "instance " + instance + " in " + p.fileSource(p.nodeFrom[k]) + discount, true
}

// discounted is v less the discount of model's pool, and the discount in
// words (", less 30% from FILE"); v and "" without one.
func (p *Prices) discounted(model string, v float64) (float64, string) {
	dk, ok := tableKey(model, p.discount)
	if g, vgpu := ParseVGPU(model); !ok && vgpu {
		// A vGPU not discounted by its own name takes its board's
		// discount: it is part of the board.
		if b, known := LookupVGPUBoard(g.Board); known && b.Key != "" {
			dk, ok = tableKey(b.Key, p.discount)
		}
	}
	if !ok {
		return v, ""
	}
	d := p.discount[dk]
	return v * (1 - d), fmt.Sprintf(", less %s%% from %s", strconv.FormatFloat(100*d, 'f', -1, 64), p.discountFrom[dk])
}

// fileSource is a price file with its date.
func (p *Prices) fileSource(file string) string {
	if d := p.dates[file]; d != "" {
		return file + " (" + d + ")"
	}
	return file
}

// tableKey is the key model is found by in table: its exact product name, else
// its catalog key.
func tableKey(model string, table map[string]float64) (string, bool) {
	if k := strings.ToLower(strings.TrimSpace(model)); hasKey(table, k) {
		return k, true
	}
	if m, ok := LookupModel(model); ok && hasKey(table, strings.ToLower(m.Key)) {
		return strings.ToLower(m.Key), true
	}
	return "", false
}

func hasKey(table map[string]float64, k string) bool { _, ok := table[k]; return ok }

// Unmatched says, for each price a user's file set (not the embedded
// table's) that prices none of models, the GPU models of the data, which
// key it is, in which file, and the model seen nearest to it: a product
// name written a little wrong ("NVIDIA H100 80GB HBM" for "... HBM3")
// would otherwise be ignored while the GPU keeps the table's price.
func (p *Prices) Unmatched(models []string) []string {
	if p == nil || len(models) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, m := range models {
		if k, ok := tableKey(m, p.perHour); ok {
			used[k] = true
		}
		if g, ok := ParseVGPU(m); ok {
			if b, known := LookupVGPUBoard(g.Board); known && b.Key != "" {
				used[strings.ToLower(b.Key)] = true
			}
		}
	}
	var out []string
	for _, k := range p.Models() {
		file := p.from[k]
		if used[k] || len(p.Files) == 0 || file == p.Files[0] {
			continue
		}
		msg := fmt.Sprintf("%s: the price of %q matches no GPU of the data, whose models are %s", file, k, strings.Join(models, ", "))
		if near, ok := suggest.Nearest(k, models); ok {
			msg = fmt.Sprintf("%s: the price of %q matches no GPU of the data: did you mean %q?", file, k, near)
		}
		out = append(out, msg)
	}
	return out
}

// Models lists the priced keys, sorted.
func (p *Prices) Models() []string {
	return slices.Sorted(maps.Keys(p.perHour))
}

func parsePrices(base *Prices, data []byte, file string) (*Prices, error) {
	out := &Prices{Date: base.Date, Currency: base.Currency, Sources: base.Sources,
		Files: append(slices.Clone(base.Files), file), perHour: maps.Clone(base.perHour), from: maps.Clone(base.from),
		discount: maps.Clone(base.discount), discountFrom: maps.Clone(base.discountFrom), dates: maps.Clone(base.dates),
		perNode: maps.Clone(base.perNode), nodeFrom: maps.Clone(base.nodeFrom)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dated := false
	defer func() {
		if dated {
			out.dates[file] = out.Date
			return
		}
		// A file without a date leaves the table's date to the prices
		// it did not set: said so, not shown under the embedded
		// table's date as if as current.
		if len(doc.Content) > 0 && base.Date != "" {
			out.Date = base.Date + ", " + file + " undated"
		}
	}()
	priceKeys := []string{"date", "currency", "sources", "prices", "instances", "discounts"}
	if err := yamlfile.Recognize(file, "price table", &doc, func(k string) bool { return slices.Contains(priceKeys, k) }, strings.Join(priceKeys, ", ")); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return out, nil // an empty override changes nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &criteria.FileError{File: file, Line: root.Line, Key: "", Msg: "want a mapping with date, currency, sources, prices, instances and discounts"}
	}
	var sourcesSet bool
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "date", "currency":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, &criteria.FileError{File: file, Line: v.Line, Key: k.Value, Msg: "want a string"}
			}
			if k.Value == "date" {
				out.Date, dated = v.Value, true
			} else if v.Value != "USD" {
				// Every figure downstream is in dollars; converting is the
				// user's job, silently mixing currencies is not.
				return nil, &criteria.FileError{File: file, Line: v.Line, Key: k.Value, Msg: fmt.Sprintf("only USD is supported, got %q", v.Value)}
			} else {
				out.Currency = v.Value
			}
		case "sources":
			if v.Kind != yaml.SequenceNode {
				return nil, &criteria.FileError{File: file, Line: v.Line, Key: k.Value, Msg: "want a list of strings"}
			}
			if !sourcesSet {
				out.Sources, sourcesSet = nil, true
			}
			for _, s := range v.Content {
				if s.Kind != yaml.ScalarNode {
					return nil, &criteria.FileError{File: file, Line: s.Line, Key: k.Value, Msg: "want a list of strings"}
				}
				out.Sources = append(out.Sources, s.Value)
			}
		case "prices":
			// Zero is refused too: a $0 GPU would make every saving
			// vanish; leave a model out to mark its cost unknown.
			err := modelValues(v, file, k.Value, "USD per GPU-hour", func(f float64) bool { return f > 0 && f <= 1e4 },
				"want a positive number of USD per GPU-hour", unknownModel, out.perHour, out.from)
			if err != nil {
				return nil, err
			}
		case "instances":
			err := modelValues(v, file, k.Value, "USD per node-hour", func(f float64) bool { return f > 0 && f <= 1e5 },
				"want a positive number of USD per node-hour", nil, out.perNode, out.nodeFrom)
			if err != nil {
				return nil, err
			}
		case "discounts":
			// 1 or more would make the pool free, and every saving on it
			// vanish: a price of its own says that better.
			err := modelValues(v, file, k.Value, "the part taken off its price, e.g. 0.3 for 30%", func(f float64) bool { return f >= 0 && f < 1 },
				"want the part taken off the price, at least 0 and under 1 (0.3 for 30%)", unknownModel, out.discount, out.discountFrom)
			if err != nil {
				return nil, err
			}
		default:
			return nil, &criteria.FileError{File: file, Line: k.Line, Key: k.Value, Msg: "unknown key (want date, currency, sources, prices, instances or discounts)"}
		}
	}
	return out, nil
}

// modelValues reads a mapping of model (catalog key or product name) to a
// number into values, recording file as each one's source. An empty name
// (a bare anchor, a list as key) is refused: it would match every GPU
// whose model NVML did not report.
func modelValues(v *yaml.Node, file, section, what string, ok func(float64) bool, bad string, known func(string) string, values map[string]float64, from map[string]string) error {
	if v.Kind != yaml.MappingNode {
		return &criteria.FileError{File: file, Line: v.Line, Key: section, Msg: "want a mapping of model to " + what}
	}
	// seen is each key's line: a key given twice (in any case: keys are
	// matched case-folded) would otherwise let the later win in silence.
	seen := map[string]int{}
	for j := 0; j+1 < len(v.Content); j += 2 {
		mk, mv := v.Content[j], v.Content[j+1]
		if mk.Kind != yaml.ScalarNode || strings.TrimSpace(mk.Value) == "" {
			return &criteria.FileError{File: file, Line: mk.Line, Key: section, Msg: "want a GPU model or catalog key, got an empty or non-scalar key"}
		}
		folded := strings.ToLower(strings.TrimSpace(mk.Value))
		if line, dup := seen[folded]; dup {
			return &criteria.FileError{File: file, Line: mk.Line, Key: section + "." + mk.Value,
				Msg: fmt.Sprintf("given twice, on lines %d and %d: keep one", line, mk.Line)}
		}
		seen[folded] = mk.Line
		f, err := strconv.ParseFloat(mv.Value, 64)
		if mv.Kind != yaml.ScalarNode || err != nil || !ok(f) {
			return &criteria.FileError{File: file, Line: mv.Line, Key: section + "." + mk.Value, Msg: fmt.Sprintf("%s, got %q", bad, mv.Value)}
		}
		if known != nil {
			if msg := known(strings.TrimSpace(mk.Value)); msg != "" {
				return &criteria.FileError{File: file, Line: mk.Line, Key: section + "." + mk.Value, Msg: msg}
			}
		}
		key := strings.ToLower(strings.TrimSpace(mk.Value))
		values[key], from[key] = f, file
	}
	return nil
}

// unknownModel says why key cannot name a GPU model, or "" when it can. A
// key without a space must be a catalog key or a vGPU type: NVML's product
// names all have spaces ("NVIDIA H100 80GB HBM3", "Tesla T4"), so a
// spaceless key that is not one of ours is a typo, which would otherwise
// pass and leave the price it meant to change as it was. A product name
// outside the catalog is taken as written: it prices GPUs that report it.
func unknownModel(key string) string {
	if strings.ContainsAny(key, " \t") {
		return ""
	}
	if _, ok := ParseVGPU(key); ok {
		return ""
	}
	keys := ModelKeys()
	for _, k := range keys {
		if strings.EqualFold(k, key) {
			return ""
		}
	}
	if near, ok := suggest.Nearest(key, keys); ok {
		return fmt.Sprintf("unknown model %q: did you mean %s? (a catalog key, or an NVML product name such as \"NVIDIA H100 80GB HBM3\")", key, near)
	}
	return fmt.Sprintf("unknown model %q: want a catalog key (%s) or an NVML product name such as \"NVIDIA H100 80GB HBM3\"", key, strings.Join(keys, ", "))
}
