package report

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// moneyFlags says, for a flag that tells whether an object's money is
// known, which of the object's fields it covers. A script that sums a
// field must not read an unknown as $0, nor a priced part as the whole:
// where the flag is false the field is null, and where part of it was
// priced (the unpriced object's "partial") that part is beside it as
// FIELD_priced.
var moneyFlags = []struct {
	flag     string
	inverted bool // the flag is an object present when money is missing
	unpriced string
	fields   []string
}{
	{flag: "cost_known", unpriced: "unpriced",
		fields: []string{"cost", "waste", "monthly_savings", "monthly_cost", "allocation_cost", "usage_cost", "estimated_waste"}},
	{flag: "capacity_cost_known", unpriced: "capacity_unpriced",
		fields: []string{"capacity_cost", "unallocated_cost", "unattributed_cost", "estimated_waste"}},
	{flag: "savings_unpriced", inverted: true, unpriced: "savings_unpriced", fields: []string{"monthly_savings"}},
}

// reportValue is r's JSON form with every unknown money figure null
// (moneyFlags), its fields in the struct's order, for -o json and -o
// yaml alike. The top-level cost_known says every figure is known;
// price_table says a price table was given (what cost_known alone used to
// mean).
func reportValue(r *Report) (*value, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	root, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	root.set("price_table", jsonBool(r.CostKnown), "cost_known")
	root.set("cost_known", jsonBool(r.CostKnown && len(r.UnpricedModels) == 0), "")
	nullUnknown(root)
	// The headline leads, as it does in every other format: a reader of
	// the JSON finds the month's money first.
	root.keys = append([]string{"headline"}, root.keys...)
	root.vals = append([]*value{r.headlineValue()}, root.vals...)
	return root, nil
}

// reportJSON is reportValue written as encoding/json's indented form.
func reportJSON(r *Report) ([]byte, error) {
	root, err := reportValue(r)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	root.write(&out, "")
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// value is a JSON value that keeps its object's key order: an object
// (keys and vals), an array (vals) or a scalar (raw).
type value struct {
	object bool
	array  bool
	keys   []string
	vals   []*value
	raw    string
}

func jsonBool(b bool) *value { return &value{raw: fmt.Sprint(b)} }

func readValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		v := &value{object: t == '{', array: t == '['}
		for dec.More() {
			if v.object {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, k.(string))
			}
			c, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, c)
		}
		_, err := dec.Token()
		return v, err
	case string:
		b, _ := json.Marshal(t)
		return &value{raw: string(b)}, nil
	case json.Number:
		return &value{raw: t.String()}, nil
	case nil:
		return &value{raw: "null"}, nil
	default:
		return &value{raw: fmt.Sprint(t)}, nil
	}
}

func (v *value) get(k string) *value {
	for i, key := range v.keys {
		if key == k {
			return v.vals[i]
		}
	}
	return nil
}

// set replaces k's value, or adds k after the key after (at the end when
// after is absent).
func (v *value) set(k string, val *value, after string) {
	for i, key := range v.keys {
		if key == k {
			v.vals[i] = val
			return
		}
	}
	at := len(v.keys)
	for i, key := range v.keys {
		if key == after {
			at = i + 1
		}
	}
	v.keys = append(v.keys[:at], append([]string{k}, v.keys[at:]...)...)
	v.vals = append(v.vals[:at], append([]*value{val}, v.vals[at:]...)...)
}

func (v *value) isNull() bool { return v == nil || (!v.object && !v.array && v.raw == "null") }

// nullUnknown applies moneyFlags to v and everything under it.
func nullUnknown(v *value) {
	for _, c := range v.vals {
		nullUnknown(c)
	}
	if !v.object {
		return
	}
	for _, rule := range moneyFlags {
		flag := v.get(rule.flag)
		if flag == nil {
			continue
		}
		unknown := flag.raw == "false"
		if rule.inverted {
			unknown = !flag.isNull()
		}
		if !unknown {
			continue
		}
		partial := false
		if u := v.get(rule.unpriced); u != nil && u.object {
			partial = u.get("partial") != nil && u.get("partial").raw == "true"
		}
		for _, f := range rule.fields {
			cur := v.get(f)
			if cur.isNull() {
				continue
			}
			if partial {
				v.set(f+"_priced", cur, f)
			}
			v.set(f, &value{raw: "null"}, "")
		}
	}
}

// write is encoding/json's two-space indented form.
func (v *value) write(b *bytes.Buffer, indent string) {
	switch {
	case v.object || v.array:
		open, closing := byte('['), byte(']')
		if v.object {
			open, closing = '{', '}'
		}
		b.WriteByte(open)
		if len(v.vals) == 0 {
			b.WriteByte(closing)
			return
		}
		inner := indent + "  "
		for i, c := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + inner)
			if v.object {
				k, _ := json.Marshal(v.keys[i])
				b.Write(k)
				b.WriteString(": ")
			}
			c.write(b, inner)
		}
		b.WriteString("\n" + indent)
		b.WriteByte(closing)
	default:
		b.WriteString(v.raw)
	}
}
