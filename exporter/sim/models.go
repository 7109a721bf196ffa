package sim

import (
	"math"
	"time"
)

// Sample is what a pod's workload demands at one instant. Ratios are of
// the GPU or MIG instance the pod runs on, 0..1.
type Sample struct {
	SM               float64 // SM active: NVML utilization.gpu, GPM SM_UTIL
	SMOccupancy      float64 // resident warps over the maximum
	Tensor           float64 // tensor pipes active
	DRAM             float64 // DRAM bandwidth in use
	MemoryController float64 // NVML utilization.memory
	Memory           uint64  // bytes allocated
}

// Evaluate is the workload model of pod p at absolute time t, age after
// the pod started. It is a pure function: the same arguments always give
// the same Sample. A leak's memory grows without bound here; the node
// simulator bounds it by what the pod's GPU has left.
func Evaluate(seed uint64, p *Pod, t time.Time, age time.Duration) Sample {
	return evaluate(seed, podKey(p), p, t, age, 0)
}

// podKey identifies a pod in hashes: pod names are unique per namespace
// across the cluster.
func podKey(p *Pod) uint64 { return strHash(p.Namespace + "/" + p.Name) }

// Noise channels, so each signal of a pod gets its own curve.
const (
	chLoad uint64 = iota + 1
	chMemory
	chPhase
	chSlot
)

// profile shapes the secondary signals from SM activity: the ratios of
// tensor, DRAM, memory-controller activity and occupancy to SM activity
// typical of the workload class.
type profile struct {
	defaultUtil                     float64
	tensor, dram, memCtl, occupancy float64
	eval                            func(m *modelInput) (sm, mem float64)
}

var profiles = map[string]*profile{
	LoadTraining:  {defaultUtil: 0.9, tensor: 0.75, dram: 0.55, memCtl: 0.45, occupancy: 0.7, eval: training},
	LoadInference: {defaultUtil: 0.6, tensor: 0.5, dram: 0.7, memCtl: 0.6, occupancy: 0.45, eval: inference},
	LoadNotebook:  {defaultUtil: 0.6, tensor: 0.4, dram: 0.3, memCtl: 0.3, occupancy: 0.35, eval: notebook},
	LoadBatch:     {defaultUtil: 0.9, tensor: 0.2, dram: 0.6, memCtl: 0.5, occupancy: 0.5, eval: batch},
	LoadLeak:      {defaultUtil: 0.4, tensor: 0.4, dram: 0.4, memCtl: 0.35, occupancy: 0.4, eval: leak},
}

// modelInput is everything a profile function may look at.
type modelInput struct {
	key      uint64 // hash of (seed, pod)
	pod      *Pod
	util     float64 // Pod.Utilization or the profile default
	now      float64 // absolute seconds since the Unix epoch
	hourUTC  float64 // hour of day, UTC, fractional
	weekday  time.Weekday
	age      float64 // seconds since the pod started
	memLimit uint64  // memory the pod can reach before OOM; 0 = unbounded
}

func (m *modelInput) noise(ch uint64, bucket float64) float64 {
	return valueNoise(hash2(m.key, ch), m.now, bucket)
}

func evaluate(seed, key uint64, p *Pod, t time.Time, age time.Duration, memLimit uint64) Sample {
	pr, ok := profiles[p.Load]
	if !ok {
		return Sample{}
	}
	u := p.Utilization
	if u == 0 {
		u = pr.defaultUtil
	}
	utc := t.UTC()
	m := modelInput{
		key:      hash3(seed, key, domainNoise),
		pod:      p,
		util:     u,
		now:      float64(t.UnixNano()) / 1e9,
		hourUTC:  float64(utc.Hour()) + float64(utc.Minute())/60 + float64(utc.Second())/3600,
		weekday:  utc.Weekday(),
		age:      max(age.Seconds(), 0),
		memLimit: memLimit,
	}
	sm, mem := pr.eval(&m)
	sm = clamp01(sm)
	return Sample{
		SM:               sm,
		SMOccupancy:      clamp01(sm * pr.occupancy),
		Tensor:           clamp01(sm * pr.tensor),
		DRAM:             clamp01(sm * pr.dram),
		MemoryController: clamp01(sm * pr.memCtl),
		Memory:           uint64(max(mem, 0)),
	}
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

const (
	minute = 60.0
	hour   = 3600.0
)

// training is a plateau at util with ±3% noise, a short ramp while the
// job loads data, and a checkpoint every 1-3 hours (fixed per pod) during
// which the GPU mostly waits on storage.
func training(m *modelInput) (float64, float64) {
	mem := float64(m.pod.Memory) * (0.96 + 0.04*m.noise(chMemory, 30*minute))
	period := (60 + 5*math.Floor(24*unit(hash2(m.key, chPhase)))) * minute
	const checkpoint = 4 * minute
	switch {
	case m.age < 3*minute:
		return m.util * m.age / (3 * minute), mem * max(m.age/(3*minute), 0.2)
	case math.Mod(m.age, period) >= period-checkpoint:
		return 0.03 + 0.05*m.noise(chLoad, minute), mem
	}
	return m.util * (1 + 0.06*(m.noise(chLoad, minute)-0.5)), mem
}

// inference follows the users: a cosine over the UTC hour of day peaking
// at 14:00 and bottoming out at 02:00 (10% of the peak), quieter on
// weekends, with ±15% minute-scale noise. The KV cache grows with traffic.
func inference(m *modelInput) (float64, float64) {
	day := 0.5 * (1 + math.Cos(2*math.Pi*(m.hourUTC-14)/24))
	traffic := 0.1 + 0.9*day
	if m.weekday == time.Saturday || m.weekday == time.Sunday {
		traffic *= 0.6
	}
	sm := m.util * traffic * (1 + 0.3*(m.noise(chLoad, minute)-0.5))
	mem := float64(m.pod.Memory) * (0.8 + 0.2*day)
	return sm, mem
}

// notebook idles at 0-1.5% holding its memory; in about one half-hour
// slot in twenty someone runs cells for eight minutes.
func notebook(m *modelInput) (float64, float64) {
	mem := float64(m.pod.Memory) * (0.9 + 0.1*m.noise(chMemory, 2*hour))
	const slot = 30 * minute
	const burst = 8 * minute
	n := math.Floor(m.age / slot)
	h := hash2(hash2(m.key, chSlot), uint64(n))
	if unit(h) < 0.05 {
		start := unit(mix(h)) * (slot - burst)
		if off := m.age - n*slot; off >= start && off < start+burst {
			return m.util * (0.6 + 0.4*m.noise(chLoad, minute)), mem
		}
	}
	return 0.015 * m.noise(chLoad, minute), mem
}

// batch runs jobs back to back in slots of 20-60 minutes (fixed per pod);
// each slot is busy or idle with even odds. An idle worker keeps only its
// CUDA context.
func batch(m *modelInput) (float64, float64) {
	slot := (20 + 5*math.Floor(9*unit(hash2(m.key, chPhase)))) * minute
	n := math.Floor(m.age / slot)
	if unit(hash2(hash2(m.key, chSlot), uint64(n))) < 0.5 {
		return m.util * (0.85 + 0.15*m.noise(chLoad, minute)),
			float64(m.pod.Memory) * (0.9 + 0.1*m.noise(chMemory, 10*minute))
	}
	return 0.005 * m.noise(chLoad, minute), math.Min(float64(m.pod.Memory), float64(batchIdleBytes))
}

const batchIdleBytes = 300 << 20

// leak holds a moderate load while its memory grows by Growth per hour
// from Memory. With a limit, the process dies of OOM when it reaches it and
// starts over (see leakPeriod).
func leak(m *modelInput) (float64, float64) {
	age := m.age
	if period := leakPeriod(m.pod, m.memLimit); period > 0 {
		age = math.Mod(age, period.Seconds())
	}
	mem := float64(m.pod.Memory) + float64(m.pod.Growth)*age/hour
	return m.util * (0.75 + 0.5*m.noise(chLoad, 5*minute)), mem
}

// leakPeriod is how long a leaking process lives before it runs out of
// limit bytes; 0 when it never does (no limit, or no room to grow).
func leakPeriod(p *Pod, limit uint64) time.Duration {
	if p.Load != LoadLeak || limit <= uint64(p.Memory) || p.Growth == 0 {
		return 0
	}
	hours := float64(limit-uint64(p.Memory)) / float64(p.Growth)
	return time.Duration(hours * float64(time.Hour))
}
