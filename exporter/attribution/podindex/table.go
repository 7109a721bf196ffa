package podindex

import "sync"

// table holds the pods of the node under both keys attribution uses. It is
// safe for concurrent use; the informer writes it, attribution reads it.
type table struct {
	mu     sync.RWMutex
	byName map[nameKey]*Pod
	// byUID also holds each static pod's config hash as an alias.
	byUID map[string]*Pod
}

type nameKey struct{ namespace, name string }

func newTable() *table {
	return &table{byName: map[nameKey]*Pod{}, byUID: map[string]*Pod{}}
}

func (t *table) ByUID(uid string) (Pod, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	p, ok := t.byUID[uid]
	if !ok {
		return Pod{}, false
	}
	return *p, true
}

func (t *table) ByName(namespace, name string) (Pod, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	p, ok := t.byName[nameKey{namespace, name}]
	if !ok {
		return Pod{}, false
	}
	return *p, true
}

func (t *table) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.byName)
}

// put adds or replaces a pod. A pod recreated under the same name (a
// StatefulSet replica) replaces its predecessor and the old UID stops
// resolving, so processes left from the old pod are not attributed to it.
func (t *table) put(p Pod) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := nameKey{p.Namespace, p.Name}
	if old, ok := t.byName[key]; ok {
		t.unlinkUIDs(old)
	}
	stored := &p
	t.byName[key] = stored
	t.byUID[p.UID] = stored
	if p.ConfigHash != "" {
		t.byUID[p.ConfigHash] = stored
	}
}

// remove deletes namespace/name if it is still the pod with uid; a late
// tombstone for a predecessor must not delete its successor.
func (t *table) remove(namespace, name, uid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := nameKey{namespace, name}
	old, ok := t.byName[key]
	if !ok || (uid != "" && old.UID != uid) {
		return
	}
	delete(t.byName, key)
	t.unlinkUIDs(old)
}

func (t *table) unlinkUIDs(p *Pod) {
	for _, k := range []string{p.UID, p.ConfigHash} {
		if k != "" && t.byUID[k] == p {
			delete(t.byUID, k)
		}
	}
}
