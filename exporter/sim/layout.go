package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpulens/gpulens/vocab"
)

// gpuLayout is how one GPU of a node is shared.
type gpuLayout struct {
	mode      vocab.Sharing
	replicas  int
	rename    bool
	instances []placedInstance // MIG geometry, in scenario order
	hami      bool             // shared by HAMi, seen as time-slicing
}

// reporter receives layout problems; nil discards them (NewNode works on
// validated scenarios).
type reporter func(path, format string, args ...any)

func (r reporter) errorf(path, format string, args ...any) {
	if r != nil {
		r(path, format, args...)
	}
}

// buildLayout resolves n.Sharing into one gpuLayout per GPU.
func buildLayout(n *Node, sys *system, count int, path string, report reporter) []gpuLayout {
	layout := make([]gpuLayout, count)
	for i := range layout {
		layout[i].mode = ModeNone
	}
	owner := make(map[int]string, count)
	for si, sh := range n.Sharing {
		sp := fmt.Sprintf("%s.sharing[%d]", path, si)
		var geometry []placedInstance
		valid := true
		mode, replicas := sh.Mode, sh.Replicas
		switch sh.Mode {
		case ModeHAMi:
			// The node's exporter sees HAMi's splits as time-slicing's
			// replicas; HAMi's own series are fleet.HAMiSink's.
			mode = ModeTimeSlicing
			if replicas == 0 {
				replicas = DefaultHAMiSplit
			}
			if replicas < 2 || replicas > 48 {
				report.errorf(sp+".replicas", "replicas %d out of range (want 2..48 for hami's deviceSplitCount)", replicas)
				valid = false
			}
		case ModeNone:
			if sh.Replicas != 0 {
				report.errorf(sp+".replicas", "replicas only apply to time-slicing and mps")
			}
		case ModeTimeSlicing, ModeMPS:
			if sh.Replicas < 2 || sh.Replicas > 48 {
				report.errorf(sp+".replicas", "replicas %d out of range (want 2..48 for %s)", sh.Replicas, sh.Mode)
				valid = false
			}
		case ModeMIG:
			if sh.Replicas != 0 {
				report.errorf(sp+".replicas", "replicas only apply to time-slicing and mps")
			}
			geometry, valid = migGeometry(sh.MIG, sys, sp, report)
		default:
			report.errorf(sp+".mode", "%s", errUnknown("sharing mode", string(sh.Mode), "none, time-slicing, mps, mig, hami"))
			valid = false
		}
		if sh.MemoryScaling != 0 && (sh.Mode != ModeHAMi || sh.MemoryScaling < 0) {
			report.errorf(sp+".deviceMemoryScaling", "%v: only a positive scaling of mode hami (HAMi's deviceMemoryScaling)", sh.MemoryScaling)
		}
		if sh.Mode != ModeMIG && len(sh.MIG) > 0 {
			report.errorf(sp+".mig", "a MIG geometry needs mode mig, not %q", sh.Mode)
		}
		if sh.Rename && sh.Mode != ModeTimeSlicing && sh.Mode != ModeMPS {
			report.errorf(sp+".rename", "rename only applies to time-slicing and mps")
		}
		if len(sh.GPUs) == 0 {
			report.errorf(sp+".gpus", "no GPUs listed")
		}
		for gi, g := range sh.GPUs {
			gp := fmt.Sprintf("%s.gpus[%d]", sp, gi)
			if g < 0 || g >= count {
				report.errorf(gp, "GPU index %d out of range (node has %d GPUs: 0..%d)", g, count, count-1)
				continue
			}
			if prev, dup := owner[g]; dup {
				report.errorf(gp, "GPU %d is already shared by %s", g, prev)
				continue
			}
			owner[g] = sp
			if valid {
				layout[g] = gpuLayout{mode: mode, replicas: replicas, rename: sh.Rename, instances: geometry, hami: sh.Mode == ModeHAMi}
			}
		}
	}
	return layout
}

func migGeometry(names []string, sys *system, path string, report reporter) ([]placedInstance, bool) {
	if sys == nil {
		return nil, false
	}
	if !sys.migCapable() {
		report.errorf(path+".mode", "%s GPUs (%s) do not support MIG", sys.name, sys.config.Name)
		return nil, false
	}
	if len(names) == 0 {
		report.errorf(path+".mig", "mode mig needs a geometry, e.g. [%s]", sys.migProfiles[0].name)
		return nil, false
	}
	profiles := make([]migProfile, 0, len(names))
	counts := map[string]int{}
	slices, mem := 0, 0
	ok := true
	for i, name := range names {
		p, found := sys.profile(name)
		if !found {
			report.errorf(fmt.Sprintf("%s.mig[%d]", path, i), "%s", errUnknown("MIG profile", name, "one of "+sys.profileNames()+" on "+sys.config.Name))
			ok = false
			continue
		}
		counts[name]++
		if counts[name] == p.maxCount+1 {
			report.errorf(fmt.Sprintf("%s.mig[%d]", path, i), "at most %d × %s fit on a GPU", p.maxCount, name)
			ok = false
		}
		slices += p.slices
		mem += p.memSlices
		profiles = append(profiles, p)
	}
	if !ok {
		return nil, false
	}
	if slices > 7 {
		report.errorf(path+".mig", "geometry uses %d compute slices (at most 7)", slices)
		return nil, false
	}
	if mem > 8 {
		report.errorf(path+".mig", "geometry uses %d memory slices (at most 8)", mem)
		return nil, false
	}
	placed, ok := placeMIG(profiles)
	if !ok {
		report.errorf(path+".mig", "the geometry has no valid MIG placement")
		return nil, false
	}
	return placed, true
}

// interval is a pod's life as offsets from the scenario start; end is
// math.MaxInt64 for pods that never end.
type interval struct{ start, end time.Duration }

func lifetime(p *Pod) interval {
	end := time.Duration(math.MaxInt64)
	if p.End > 0 {
		end = time.Duration(p.End)
	}
	return interval{time.Duration(p.Start), end}
}

func (a interval) overlaps(b interval) bool { return a.start < b.end && b.start < a.end }

func (a interval) contains(t time.Duration) bool { return a.start <= t && t < a.end }

// podUnit is what a pod holds: a GPU, or a MIG instance of it.
type podUnit struct{ gpu, instance int }

func unitOf(p *Pod, l []gpuLayout) podUnit {
	if p.GPU >= 0 && p.GPU < len(l) && l[p.GPU].mode == ModeMIG {
		return podUnit{p.GPU, p.Instance}
	}
	return podUnit{p.GPU, -1}
}

func (u podUnit) String() string {
	if u.instance >= 0 {
		return fmt.Sprintf("MIG instance %d of GPU %d", u.instance, u.gpu)
	}
	return fmt.Sprintf("GPU %d", u.gpu)
}

// assignReplicas gives each pod on a shared GPU the lowest replica index
// free over its whole life, in scenario order, so pods keep one
// device-plugin ID (<uuid>::<n>) for life. Pods not on shared GPUs get -1.
func assignReplicas(pods []Pod, l []gpuLayout) []int {
	out := make([]int, len(pods))
	for j := range pods {
		out[j] = -1
		g := pods[j].GPU
		if g < 0 || g >= len(l) || (l[g].mode != ModeTimeSlicing && l[g].mode != ModeMPS) {
			continue
		}
		lj := lifetime(&pods[j])
		taken := map[int]bool{}
		for i := range j {
			if pods[i].GPU == g && out[i] >= 0 && lifetime(&pods[i]).overlaps(lj) {
				taken[out[i]] = true
			}
		}
		for r := 0; ; r++ {
			if !taken[r] {
				out[j] = r
				break
			}
		}
	}
	return out
}

// isDNSLabel reports whether s is an RFC 1123 label, as Kubernetes wants
// namespace and container names.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is an RFC 1123 subdomain, as Kubernetes
// wants node and pod names.
func isDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !isDNSLabel(label) {
			return false
		}
	}
	return true
}
