package metricname

import (
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name   string
		labels []string
		want   string
		// value is what a Prometheus parser must read back for label l.
		value string
	}{
		{name: "no labels", want: "gpulens_x"},
		{name: "plain", labels: []string{"l", "team-a"}, want: `gpulens_x{l="team-a"}`, value: "team-a"},
		{name: "quote and backslash", labels: []string{"l", `a"b\c`}, want: `gpulens_x{l="a\"b\\c"}`, value: `a"b\c`},
		{name: "line feed", labels: []string{"l", "a\nb"}, want: `gpulens_x{l="a\nb"}`, value: "a\nb"},
		{name: "braces, commas and equals", labels: []string{"l", `x{y="1",z}`}, want: `gpulens_x{l="x{y=\"1\",z}"}`, value: `x{y="1",z}`},
		{name: "non-ASCII stays", labels: []string{"l", "équipe-α"}, want: `gpulens_x{l="équipe-α"}`, value: "équipe-α"},
		{name: "invalid UTF-8 replaced", labels: []string{"l", "a\xffb"}, want: "gpulens_x{l=\"a\uFFFDb\"}", value: "a\uFFFDb"},
		{name: "empty values left out", labels: []string{"e", "", "l", "v", "f", ""}, want: `gpulens_x{l="v"}`, value: "v"},
		{name: "only empty values", labels: []string{"e", ""}, want: "gpulens_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of("gpulens_x", tt.labels...)
			if got != tt.want {
				t.Fatalf("Of = %s, want %s", got, tt.want)
			}
			if err := metrics.ValidateMetric(got); err != nil {
				t.Fatalf("the metrics library refuses %s: %v", got, err)
			}
			// Through the library and a Prometheus parser, the value is
			// the one given.
			s := metrics.NewSet()
			s.NewGauge(got, func() float64 { return 1 })
			var b strings.Builder
			s.WritePrometheus(&b)
			p := expfmt.NewTextParser(model.UTF8Validation)
			mfs, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
			if err != nil {
				t.Fatalf("exposition does not parse: %v\n%s", err, b.String())
			}
			m := mfs["gpulens_x"].GetMetric()[0]
			var v string
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "l" {
					v = lp.GetValue()
				}
			}
			if v != tt.value {
				t.Errorf("label l read back as %q, want %q", v, tt.value)
			}
		})
	}
}
