package sim

import (
	"math"
	"testing"
	"time"
)

// fixedStart is a Monday at midnight UTC.
var fixedStart = time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)

func pod(load string, util float64, mem ByteSize) *Pod {
	return &Pod{Namespace: "ns", Name: "p-" + load, Load: load, Utilization: util, Memory: mem}
}

// series samples p once a minute over d from fixedStart (pod age = time
// since fixedStart).
func series(seed uint64, p *Pod, d time.Duration) []Sample {
	var out []Sample
	for off := time.Duration(0); off < d; off += time.Minute {
		out = append(out, Evaluate(seed, p, fixedStart.Add(off), off))
	}
	return out
}

func meanSM(s []Sample) float64 {
	sum := 0.0
	for _, x := range s {
		sum += x.SM
	}
	return sum / float64(len(s))
}

func TestTrainingPlateauWithCheckpointDips(t *testing.T) {
	p := pod(LoadTraining, 0.9, 40<<30)
	s := series(1, p, 24*time.Hour)[10:] // past the warm-up
	if m := meanSM(s); m <= 0.8*p.Utilization {
		t.Errorf("training mean SM = %.3f, want > %.3f", m, 0.8*p.Utilization)
	}
	dips := 0
	for i, x := range s {
		if x.SM < 0.2 && (i == 0 || s[i-1].SM >= 0.2) {
			dips++
		}
		if x.Memory > uint64(p.Memory) {
			t.Fatalf("memory %d above the declared %d", x.Memory, p.Memory)
		}
	}
	if dips < 8 || dips > 24 {
		t.Errorf("%d checkpoint dips in a day, want one every 1-3h", dips)
	}
}

func TestNotebookMostlyIdleWithBursts(t *testing.T) {
	p := pod(LoadNotebook, 0, 10<<30)
	s := series(1, p, 7*24*time.Hour)
	if m := meanSM(s); m >= 0.05 {
		t.Errorf("notebook mean SM = %.3f, want < 0.05", m)
	}
	peak := 0.0
	for _, x := range s {
		peak = math.Max(peak, x.SM)
	}
	if peak < 0.3 {
		t.Errorf("notebook peak SM = %.3f over a week, want bursts", peak)
	}
}

func TestInferenceIsDiurnal(t *testing.T) {
	p := pod(LoadInference, 0.8, 10<<30)
	window := func(from, to time.Duration) float64 {
		var s []Sample
		for off := from; off < to; off += time.Minute {
			s = append(s, Evaluate(1, p, fixedStart.Add(off), off))
		}
		return meanSM(s)
	}
	day, night := window(13*time.Hour, 15*time.Hour), window(1*time.Hour, 3*time.Hour)
	if day < 3*night {
		t.Errorf("inference day mean %.3f, night mean %.3f: want the day at least 3x the night", day, night)
	}
	if day < 0.6 || day > 0.9 {
		t.Errorf("inference peak mean %.3f, want near utilization 0.8", day)
	}
	weekend := window(5*24*time.Hour+13*time.Hour, 5*24*time.Hour+15*time.Hour) // Saturday
	if weekend >= day {
		t.Errorf("weekend peak %.3f not below weekday peak %.3f", weekend, day)
	}
}

func TestBatchHasOnAndOffPeriods(t *testing.T) {
	p := pod(LoadBatch, 0.9, 20<<30)
	s := series(1, p, 24*time.Hour)
	on, longestOn, longestOff, run := 0, 0, 0, 0
	for i, x := range s {
		busy := x.SM > 0.5
		if busy {
			on++
		}
		if i > 0 && busy == (s[i-1].SM > 0.5) {
			run++
		} else {
			run = 1
		}
		if busy {
			longestOn = max(longestOn, run)
		} else {
			longestOff = max(longestOff, run)
			if x.Memory > batchIdleBytes {
				t.Fatalf("idle batch worker holds %d bytes", x.Memory)
			}
		}
	}
	if frac := float64(on) / float64(len(s)); frac < 0.2 || frac > 0.8 {
		t.Errorf("batch busy %.0f%% of the day, want on/off", frac*100)
	}
	if longestOn < 20 || longestOff < 20 {
		t.Errorf("longest on %d min, off %d min: want jobs of tens of minutes", longestOn, longestOff)
	}
}

func TestLeakGrowsLinearly(t *testing.T) {
	p := pod(LoadLeak, 0.4, 8<<30)
	p.Growth = 1 << 30
	at := func(h float64) uint64 {
		age := time.Duration(h * float64(time.Hour))
		return Evaluate(1, p, fixedStart.Add(age), age).Memory
	}
	for _, h := range []float64{0, 1, 2.5, 10, 100} {
		want := uint64(p.Memory) + uint64(h*float64(p.Growth))
		if got := at(h); got != want {
			t.Errorf("leak memory at %gh = %d, want %d", h, got, want)
		}
	}
	if m := meanSM(series(1, p, 6*time.Hour)); m < 0.2 || m > 0.6 {
		t.Errorf("leak mean SM %.3f, want moderate around 0.4", m)
	}
}

func TestLeakRestartsAtItsLimit(t *testing.T) {
	p := pod(LoadLeak, 0.4, 8<<30)
	p.Growth = 1 << 30
	limit := uint64(12 << 30)
	if got := leakPeriod(p, limit); got != 4*time.Hour {
		t.Fatalf("leakPeriod = %v, want 4h", got)
	}
	mem := func(h float64) uint64 {
		age := time.Duration(h * float64(time.Hour))
		return evaluate(1, podKey(p), p, fixedStart.Add(age), age, limit).Memory
	}
	if got := mem(3.5); got != uint64(11.5*float64(1<<30)) {
		t.Errorf("memory before OOM = %d", got)
	}
	if got := mem(4.5); got != uint64(8.5*float64(1<<30)) {
		t.Errorf("memory after OOM restart = %d, want it to start over", got)
	}
	for h := 0.0; h < 24; h += 0.1 {
		if m := mem(h); m > limit {
			t.Fatalf("memory %d above limit %d at %.1fh", m, limit, h)
		}
	}
	if leakPeriod(pod(LoadTraining, 0, 1), 100) != 0 || leakPeriod(p, uint64(p.Memory)) != 0 {
		t.Error("leakPeriod nonzero for a non-leak or a leak without room")
	}
}

func TestModelsAreDeterministicAndInRange(t *testing.T) {
	for _, load := range []string{LoadTraining, LoadInference, LoadNotebook, LoadBatch, LoadLeak} {
		p := pod(load, 0, 10<<30)
		p.Growth = 1 << 20
		a, b := series(7, p, 6*time.Hour), series(7, p, 6*time.Hour)
		c := series(8, p, 6*time.Hour)
		differs := false
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: sample %d differs between identical calls", load, i)
			}
			if a[i] != c[i] {
				differs = true
			}
			for _, r := range []float64{a[i].SM, a[i].SMOccupancy, a[i].Tensor, a[i].DRAM, a[i].MemoryController} {
				if r < 0 || r > 1 || math.IsNaN(r) {
					t.Fatalf("%s: ratio %v out of [0,1] at %d", load, r, i)
				}
			}
		}
		if !differs {
			t.Errorf("%s: seeds 7 and 8 give the same series", load)
		}
	}
}

// The value at a time must not depend on sampling rate: a coarse series is
// a subsequence of a fine one.
func TestModelsIndependentOfSamplingRate(t *testing.T) {
	p := pod(LoadInference, 0.5, 1<<30)
	for off := time.Duration(0); off < 2*time.Hour; off += 7 * time.Minute {
		fine := Evaluate(3, p, fixedStart.Add(off), off)
		for i := 0; i < 3; i++ {
			Evaluate(3, p, fixedStart.Add(off+time.Duration(i)*time.Second), off)
		}
		if again := Evaluate(3, p, fixedStart.Add(off), off); again != fine {
			t.Fatalf("value at %v changed after other samples", off)
		}
	}
	if (Evaluate(1, &Pod{Load: "unknown"}, fixedStart, 0) != Sample{}) {
		t.Error("unknown load gives a nonzero sample")
	}
}
