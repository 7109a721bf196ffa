package podindex

// Static returns an index of exactly pods, always synced. Later pods replace
// earlier ones with the same namespace and name.
func Static(pods ...Pod) Index {
	t := newTable()
	for _, p := range pods {
		t.put(p)
	}
	return staticIndex{t}
}

// staticIndex hides the table's mutators behind the read-only interface.
type staticIndex struct{ t *table }

func (s staticIndex) ByUID(uid string) (Pod, bool)              { return s.t.ByUID(uid) }
func (s staticIndex) ByName(namespace, name string) (Pod, bool) { return s.t.ByName(namespace, name) }
func (s staticIndex) Synced() bool                              { return true }
