package manifest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Doc is one document of the advice: what it is in words, and the object
// or patch, if there is one to apply.
type Doc struct {
	// Cluster is the cluster it is for, in advice of several clusters.
	Cluster string
	// Comments are said above the object, one line each; they are
	// escaped when written.
	Comments []string
	// Object is the object to create, or the patch of an existing object
	// (Patch set): apiVersion, kind, metadata and the fields changed.
	// Nil for words alone (a bare pod to delete, a claim to change by
	// hand), which are written as comments.
	Object map[string]any
	// Patch says Object is a strategic-merge patch of Target, or, with
	// JSONPatch, that the change is those RFC 6902 operations on Target
	// (a Kueue ClusterQueue, whose lists a merge would replace).
	Patch     bool
	JSONPatch []map[string]any
	Target    Target
	// ManifestOnly is, for a pod or a Job, whose pod spec the API server
	// will not change, the patch for the manifest that creates it: a
	// kustomize patch, said in comments in the YAML stream.
	ManifestOnly map[string]any
}

// Target names the object a patch changes, as kustomize's patch targets
// do; its fields are names, written as the patterns that match exactly
// them (MarshalJSON).
type Target struct {
	Group, Version, Kind string
	Namespace, Name      string
}

// APIVersion is group/version, or the version alone for the core group.
func (t Target) APIVersion() string {
	if t.Group == "" {
		return t.Version
	}
	return t.Group + "/" + t.Version
}

func (t Target) key(cluster string) string {
	return strings.Join([]string{cluster, t.Group, t.Kind, t.Namespace, t.Name}, "\x00")
}

// targetOf is the Target of an object built here.
func targetOf(obj map[string]any) Target {
	av, _ := obj["apiVersion"].(string)
	group, version, ok := strings.Cut(av, "/")
	if !ok {
		group, version = "", av
	}
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return Target{Group: group, Version: version, Kind: kind, Namespace: ns, Name: name}
}

// toMap is a typed object as the JSON-shaped map it marshals to, without
// the empty fields a typed object cannot leave out (selector: null,
// creationTimestamp, status: {}): an apply or a patch names only what it
// changes.
func toMap(obj any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("manifest: %v", err)) // k8s.io/api types always marshal
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("manifest: %v", err))
	}
	pruned, _ := prune(m).(map[string]any)
	return pruned
}

// prune drops nulls, empty strings, maps and lists, bottom up. Zeros and
// false stay: replicas: 0 is the change.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p := prune(e); p == nil {
				delete(x, k)
			} else {
				x[k] = p
			}
		}
		if len(x) == 0 {
			return nil
		}
		return x
	case []any:
		var out []any
		for _, e := range x {
			if p := prune(e); p != nil {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case string:
		if x == "" {
			return nil
		}
	}
	return v
}

// Merged is docs with the changes of one object made one document: applied
// one after the other by one field manager, a second apply of the same
// object would take back the fields of the first. Words alone stay where
// they are; a merged document keeps every comment.
func Merged(docs []Doc) []Doc {
	var out []Doc
	at := map[string]int{}
	for _, d := range docs {
		if d.Object == nil && d.JSONPatch == nil && d.ManifestOnly == nil {
			out = append(out, d)
			continue
		}
		t := d.Target
		if d.Object != nil {
			t = targetOf(d.Object)
		}
		k := t.key(d.Cluster)
		if d.Object == nil {
			k = "manifest\x00" + k
		}
		i, seen := at[k]
		if !seen || d.JSONPatch != nil || out[i].JSONPatch != nil {
			at[k] = len(out)
			out = append(out, d)
			continue
		}
		m := &out[i]
		m.Comments = append(m.Comments, d.Comments...)
		if d.Object != nil {
			m.Object = mergeValue(m.Object, d.Object).(map[string]any)
			m.Patch = m.Patch && d.Patch
		} else {
			m.ManifestOnly = mergeValue(m.ManifestOnly, d.ManifestOnly).(map[string]any)
		}
	}
	return out
}

// mergeValue merges b into a as a strategic merge would for the fields
// built here: maps key by key, lists of named entries (containers, env,
// resourceClaims) name by name, anything else b's.
func mergeValue(a, b any) any {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return b
		}
		out := map[string]any{}
		for k, v := range x {
			out[k] = v
		}
		for k, v := range y {
			if old, ok := out[k]; ok {
				out[k] = mergeValue(old, v)
			} else {
				out[k] = v
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || !named(x) || !named(y) {
			return b
		}
		out := slices.Clone(x)
		for _, e := range y {
			name := e.(map[string]any)["name"]
			i := slices.IndexFunc(out, func(o any) bool { return o.(map[string]any)["name"] == name })
			if i < 0 {
				out = append(out, e)
			} else {
				out[i] = mergeValue(out[i], e)
			}
		}
		return out
	}
	return b
}

func named(l []any) bool {
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok || m["name"] == nil {
			return false
		}
	}
	return true
}

// clusters are the clusters of docs, in order; one "" for one cluster.
func clusters(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		if !slices.Contains(out, d.Cluster) {
			out = append(out, d.Cluster)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(a, b) })
	return out
}
