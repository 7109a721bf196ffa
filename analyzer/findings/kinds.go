package findings

import (
	"slices"

	"github.com/gpulens/gpulens/vocab"
)

// Kinds are every kind a finding may have, sorted: vocab's, which have
// alerts, and HAMi's, which do not. recommend -l kind=... is checked
// against them.
func Kinds() []vocab.Kind {
	out := append(vocab.Kinds(), KindHAMiGPUMemOversized, KindHAMiGPUMemOOMRisk, KindHAMiGPUCoresIdle,
		KindHAMiGPUCoresPinned, KindHAMiOvercommit)
	slices.Sort(out)
	return out
}
