package plan

import "math/bits"

// exact finds the fewest GPUs for a small pool by dynamic programming
// over subsets of lanes: best[S] = 1 + min best[S \ G] over the groups G
// that contain S's lowest lane and fit one GPU. A group fits when it is a
// single lane (a whole GPU), or it can share one GPU by time-slicing, or
// its lanes' smallest MIG slices form a geometry the GPU can hold, or its
// lanes never run at the same step (a whole GPU, one after another).
// O(2^n · n · steps) to check the groups, O(3^n) for the recursion; n is
// at most Policy.ExactMaxLanes.
//
// The answer is exact for these rules, with each lane free to take either
// kind of place; the caller keeps it only when every workload's lanes
// ended up in one kind, which one pod template requires.
func (p *packer) exact() []*bin {
	n := len(p.pool.Lanes)
	if n == 0 || n > p.pol.ExactMaxLanes || n > 20 {
		return nil
	}
	opts := make([]options, n)
	for i, l := range p.pool.Lanes {
		opts[i] = p.laneOptions(l)
	}
	full := uint32(1)<<n - 1
	mode := make([]Mode, full+1)
	for s := uint32(1); s <= full; s++ {
		mode[s] = p.groupMode(s, opts)
	}
	const inf = 1 << 30
	best := make([]int, full+1)
	choice := make([]uint32, full+1)
	for s := uint32(1); s <= full; s++ {
		best[s] = inf
		low := s & -s
		rest := s &^ low
		// Every subset of rest, with low added: the groups holding low.
		for sub := rest; ; sub = (sub - 1) & rest {
			g := sub | low
			if mode[g] != "" && best[s&^g]+1 < best[s] {
				best[s], choice[s] = best[s&^g]+1, g
			}
			if sub == 0 {
				break
			}
		}
	}
	var bins []*bin
	for s := full; s != 0; s &^= choice[s] {
		g := choice[s]
		b := p.newBin(mode[g])
		for rest := g; rest != 0; rest &= rest - 1 {
			i := bits.TrailingZeros32(rest)
			p.add(b, i, opts[i].mig)
		}
		bins = append(bins, b)
	}
	return bins
}

// groupMode is the mode in which the lanes of set s share one GPU, or ""
// when they cannot. A single lane always has a whole GPU, and so do lanes
// that take turns.
func (p *packer) groupMode(s uint32, opts []options) Mode {
	whole := p.newBin(ModeWhole)
	for rest := s; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros32(rest)
		if !p.fits(whole, i, -1) {
			whole = nil
			break
		}
		p.add(whole, i, -1)
	}
	if whole != nil {
		return ModeWhole
	}
	ts, mig := true, true
	for rest := s; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros32(rest)
		ts = ts && opts[i].ts
		mig = mig && opts[i].mig >= 0
	}
	if ts {
		b := p.newBin(ModeTimeSlicing)
		for rest := s; rest != 0 && ts; rest &= rest - 1 {
			i := bits.TrailingZeros32(rest)
			if ts = p.fits(b, i, -1); ts {
				p.add(b, i, -1)
			}
		}
		if ts {
			return ModeTimeSlicing
		}
	}
	if mig {
		b := p.newBin(ModeMIG)
		for rest := s; rest != 0; rest &= rest - 1 {
			i := bits.TrailingZeros32(rest)
			if !p.fits(b, i, opts[i].mig) {
				return ""
			}
			p.add(b, i, opts[i].mig)
		}
		return ModeMIG
	}
	return ""
}
