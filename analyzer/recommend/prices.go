package recommend

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
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
	// perHour is keyed by lower-cased catalog key or product name.
	perHour map[string]float64
}

// DefaultPrices is the embedded table (prices.yaml).
func DefaultPrices() *Prices {
	p, err := parsePrices(&Prices{perHour: map[string]float64{}}, defaultPrices, "embedded prices.yaml")
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

// PerHour is the price of one whole GPU of model for an hour. A product
// name priced by its exact name wins over its catalog key, so an override
// can tell apart variants the catalog lumps together.
func (p *Prices) PerHour(model string) (float64, error) {
	if p != nil {
		if v, ok := p.perHour[strings.ToLower(strings.TrimSpace(model))]; ok {
			return v, nil
		}
		if m, ok := LookupModel(model); ok {
			if v, ok := p.perHour[strings.ToLower(m.Key)]; ok {
				return v, nil
			}
		}
	}
	if model == "" {
		return 0, fmt.Errorf("%w for a GPU of unknown model", ErrNoPrice)
	}
	return 0, fmt.Errorf("%w for model %q: add it to a --prices file", ErrNoPrice, model)
}

// Models lists the priced keys, sorted.
func (p *Prices) Models() []string {
	return slices.Sorted(maps.Keys(p.perHour))
}

func parsePrices(base *Prices, data []byte, file string) (*Prices, error) {
	out := &Prices{Date: base.Date, Currency: base.Currency, Sources: base.Sources,
		Files: append(slices.Clone(base.Files), file), perHour: maps.Clone(base.perHour)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return out, nil // an empty override changes nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &FileError{file, root.Line, "", "want a mapping with date, currency, sources and prices"}
	}
	var sourcesSet bool
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "date", "currency":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, &FileError{file, v.Line, k.Value, "want a string"}
			}
			if k.Value == "date" {
				out.Date = v.Value
			} else if v.Value != "USD" {
				// Every figure downstream is in dollars; converting is the
				// user's job, silently mixing currencies is not.
				return nil, &FileError{file, v.Line, k.Value, fmt.Sprintf("only USD is supported, got %q", v.Value)}
			} else {
				out.Currency = v.Value
			}
		case "sources":
			if v.Kind != yaml.SequenceNode {
				return nil, &FileError{file, v.Line, k.Value, "want a list of strings"}
			}
			if !sourcesSet {
				out.Sources, sourcesSet = nil, true
			}
			for _, s := range v.Content {
				if s.Kind != yaml.ScalarNode {
					return nil, &FileError{file, s.Line, k.Value, "want a list of strings"}
				}
				out.Sources = append(out.Sources, s.Value)
			}
		case "prices":
			if v.Kind != yaml.MappingNode {
				return nil, &FileError{file, v.Line, k.Value, "want a mapping of model to USD per GPU-hour"}
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				mk, mv := v.Content[j], v.Content[j+1]
				key := "prices." + mk.Value
				// An empty name (a bare anchor, a list as key) would price
				// every GPU whose model NVML did not report.
				if mk.Kind != yaml.ScalarNode || strings.TrimSpace(mk.Value) == "" {
					return nil, &FileError{file, mk.Line, "prices", "want a GPU model or catalog key, got an empty or non-scalar key"}
				}
				f, err := strconv.ParseFloat(mv.Value, 64)
				// Zero is refused too: a $0 GPU would make every saving
				// vanish; leave a model out to mark its cost unknown.
				if mv.Kind != yaml.ScalarNode || err != nil || !(f > 0) || f > 1e4 {
					return nil, &FileError{file, mv.Line, key, fmt.Sprintf("want a positive number of USD per GPU-hour, got %q", mv.Value)}
				}
				out.perHour[strings.ToLower(strings.TrimSpace(mk.Value))] = f
			}
		default:
			return nil, &FileError{file, k.Line, k.Value, "unknown key (want date, currency, sources or prices)"}
		}
	}
	return out, nil
}
