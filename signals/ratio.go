package signals

import "fmt"

// LabelPart names, in a vector that packs several quantities (Pack), which
// one a series is. No exporter writes it.
const LabelPart = "gpulens_part"

// Pack is the series of each expression of parts, labelled
// LabelPart=name, in one vector: a form that both sides of a ratio need
// (signals/hami Rescale, 3 KiB) is then applied once to both
// (RatioOfParts), where a query may be 16 KiB.
func Pack(parts ...[2]string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += " or "
		}
		out += fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, p[1], LabelPart, p[0])
	}
	return "(" + out + ")"
}

// RatioOfParts is, per group of by, the series of packed (a Pack, summed
// by by and LabelPart) that is part num over the one that is part den:
// exp(ln num - ln den), packed read once. As num / den: 0 where num is 0
// and den is not, NaN where both are 0; a group with only one of the two
// has the other's ln as 0 (so pack a 0 beside a part that may be absent).
func RatioOfParts(by []string, num, den, packed string) string {
	signs := fmt.Sprintf(`(label_replace(vector(1), %q, %q, "", "") or label_replace(vector(-1), %q, %q, "", ""))`, LabelPart, num, LabelPart, den)
	return "exp(" + SumBy(by, "ln("+packed+") * on ("+LabelPart+") group_left () "+signs) + ")"
}
