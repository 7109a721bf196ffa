package safetext

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestComment(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"team-a/web", "team-a/web"},
		{"tab\there", "tab\there"},
		{"x\nkind: ClusterRoleBinding", `x\nkind: ClusterRoleBinding`},
		{"x\r\n---\n", `x\r\n---\n`},
		{"nel\u0085ls\u2028ps\u2029", `nel\u0085ls\u2028ps\u2029`},
		{"esc\x1b[31m", `esc\x1b[31m`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"ünïcode ✓", "ünïcode ✓"},
	} {
		if got := Comment(tt.in); got != tt.want {
			t.Errorf("Comment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCommentStaysAComment proves, with a YAML parser, that no value
// written after "# " adds a key or a document.
func TestCommentStaysAComment(t *testing.T) {
	for _, v := range []string{"a\nkind: ClusterRoleBinding", "a\u0085kind: x", "a\u2028b: c", "a\r---\nb: c", "a\x00b"} {
		doc := "# " + Comment(v) + "\nkey: value\n"
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if len(m) != 1 || m["key"] != "value" {
			t.Errorf("%q read as %v", doc, m)
		}
		if strings.Count(doc, "\n") != 2 {
			t.Errorf("%q is not two lines", doc)
		}
	}
}

func TestMarkdownCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"team-a", "team-a"},
		{"a|b", `a\|b`},
		{`a\|b`, `a\\\|b`},
		{"[x](javascript:alert(1))", `\[x\](javascript:alert(1))`},
		{"<script>", "&lt;script&gt;"},
		{"two\nlines\r\n", "two lines "},
		{"**b** _i_ `c`", `\*\*b\*\* \_i\_ \` + "`c\\`"},
	} {
		if got := MarkdownCell(tt.in); got != tt.want {
			t.Errorf("MarkdownCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
