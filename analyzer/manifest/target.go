package manifest

import (
	"encoding/json"
	"regexp"
	"strings"
)

// targetJSON is Target's wire form, the fields of a kustomize patch
// target (types.Selector's ResId) that gpulens writes.
type targetJSON struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// MarshalJSON writes t as a kustomize patch target that selects exactly
// the object t names. Kustomize reads every field of a target as a
// regular expression: sigs.k8s.io/kustomize/api v0.21.2,
// types/selector.go, NewSelectorRegex compiles each with anchorRegex,
// "^(?:" + pattern + ")$", and resmap/reswrangler.go, (*resWrangler).Select,
// matches the resources' names and namespaces with it. Anchored already,
// a field quoted by regexp.QuoteMeta (RE2 syntax, which kustomize
// compiles with Go's regexp) matches that string and nothing else: a
// name from the store such as ".*" would otherwise patch every
// StatefulSet of its namespace, and "llama3.1-serve" "llama3x1-serve"
// too. An empty field, which kustomize reads as "any", stays empty.
// Every document and directory gpulens writes marshals targets through
// here, so no writer can leave one unquoted.
func (t Target) MarshalJSON() ([]byte, error) {
	return json.Marshal(targetJSON{
		Group: regexp.QuoteMeta(t.Group), Version: regexp.QuoteMeta(t.Version), Kind: regexp.QuoteMeta(t.Kind),
		Namespace: regexp.QuoteMeta(t.Namespace), Name: regexp.QuoteMeta(t.Name),
	})
}

// UnmarshalJSON reads back what MarshalJSON writes: the names, not the
// patterns (a reader of the directory, such as e2e/kube, looks the
// target up by name).
func (t *Target) UnmarshalJSON(b []byte) error {
	var w targetJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Target{Group: unquoteMeta(w.Group), Version: unquoteMeta(w.Version), Kind: unquoteMeta(w.Kind),
		Namespace: unquoteMeta(w.Namespace), Name: unquoteMeta(w.Name)}
	return nil
}

// unquoteMeta is regexp.QuoteMeta's inverse: QuoteMeta only puts a
// backslash before a character, so dropping each escaping backslash gives
// the string back.
func unquoteMeta(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
