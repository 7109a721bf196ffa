package recommend

import (
	"maps"
	"slices"
)

func sortedKeys[K ~string, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }
