package metricname

import "strings"

// Of writes a series name with its labels, the one string the metrics
// library takes, escaping the values as the text exposition format
// requires. labels alternate name and value. An empty value is left out,
// as Prometheus treats an empty label as no label.
func Of(family string, labels ...string) string {
	if len(labels) == 0 {
		return family
	}
	var b strings.Builder
	b.WriteString(family)
	n := 0
	for i := 0; i+1 < len(labels); i += 2 {
		if labels[i+1] == "" {
			continue
		}
		if n == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		n++
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(escape(labels[i+1]))
		b.WriteByte('"')
	}
	if n > 0 {
		b.WriteByte('}')
	}
	return b.String()
}

var escaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escape makes a label value safe in the text format: backslash, double
// quote and line feed are the only characters it escapes. Invalid UTF-8
// (which no parser accepts) becomes U+FFFD.
func escape(v string) string {
	return escaper.Replace(strings.ToValidUTF8(v, "\uFFFD"))
}
