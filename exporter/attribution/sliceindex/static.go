package sliceindex

import "github.com/gpulens/gpulens/exporter/podresources"

// Static is an index of fixed slices, for callers that know them without
// an API server (the fast-forwarded demo asks the simulator directly).
func Static(slices ...*APIResourceSlice) Index {
	t := newTable()
	for _, s := range slices {
		t.put(s)
	}
	return staticIndex{t}
}

type staticIndex struct{ t *table }

func (s staticIndex) Lookup(k podresources.DRADevice) (Device, bool) { return s.t.lookup(k) }
