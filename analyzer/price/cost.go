package price

import (
	"math"

	"github.com/gpulens/gpulens/analyzer/criteria"

	"github.com/gpulens/gpulens/vocab"
)

// ProfileShare is MIG profile p's share of a GPU under m.
func ProfileShare(m criteria.ShareMode, p MIGProfile) float64 {
	if m == criteria.ShareMemory {
		return p.MemoryShare()
	}
	return p.ComputeShare()
}

// Share is the part of a physical GPU an allocation is billed for: 1 for
// a whole GPU, 1/replicas for time-slicing and MPS, and for MIG the
// profile's share under mode. measured is the share the exporter reported;
// it is used when the profile is not in the catalog.
func Share(model string, sharing vocab.Sharing, migProfile string, measured float64, mode criteria.ShareMode) float64 {
	if sharing == vocab.SharingMIG {
		if m, ok := LookupModel(model); ok {
			if p, ok := m.Profile(migProfile); ok {
				return ProfileShare(mode, p)
			}
		}
	}
	if measured > 0 && measured <= 1 {
		return measured
	}
	return 1
}

// MonthlyCost is share × price × 730 h.
func MonthlyCost(share, pricePerHour float64) float64 {
	return round2(share * pricePerHour * vocab.HoursPerMonth)
}

// MonthlySavings is (current − recommended share) × price × 730 h;
// negative when the recommendation costs more.
func MonthlySavings(current, recommended, pricePerHour float64) float64 {
	return round2((current - recommended) * pricePerHour * vocab.HoursPerMonth)
}

// round2 rounds to cents so reports and goldens do not carry float noise.
func round2(v float64) float64 { return math.Round(v*100) / 100 }
