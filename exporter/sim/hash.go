package sim

import (
	"encoding/hex"
	"math"
)

// The simulator derives every "random" value by hashing what identifies it
// (seed, pod or device, time bucket) instead of drawing from a stateful
// RNG: a value at time t is then the same however often, in whatever order
// and from however many goroutines the simulator is sampled.

// mix is SplitMix64's finalizer: a cheap, allocation-free bijection with
// good avalanche, enough for noise and identifiers (not cryptography).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hash2 and hash3 combine values order-sensitively.
func hash2(a, b uint64) uint64    { return mix(mix(a) ^ b) }
func hash3(a, b, c uint64) uint64 { return mix(hash2(a, b) ^ c) }

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// strHash is FNV-1a over s, for turning names into hash inputs once.
func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Domains keep identifiers of different kinds from colliding.
const (
	domainGPU uint64 = iota + 1
	domainMIG
	domainPodUID
	domainContainer
	domainPID
	domainNoise
	domainECC
	domainEnergy
)

// uuidFrom formats 128 hashed bits as an RFC 4122 version 4 UUID, as NVML
// and Kubernetes UUIDs look.
func uuidFrom(hi, lo uint64) string {
	var b [16]byte
	for i := range 8 {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

func uuidOf(key uint64) string { return uuidFrom(mix(key), mix(key^0x5bd1e995)) }

// hex64 is 64 hex digits, the form of a CRI container ID.
func hex64(key uint64) string {
	var b [32]byte
	for i := range 4 {
		h := hash2(key, uint64(i))
		for j := range 8 {
			b[8*i+j] = byte(h >> (56 - 8*j))
		}
	}
	return hex.EncodeToString(b[:])
}

// valueNoise is smooth deterministic noise in [0, 1): hashed values at
// bucket boundaries, blended with a smoothstep. Sampling at any rate traces
// the same curve.
func valueNoise(key uint64, t, bucket float64) float64 {
	x := t / bucket
	f := math.Floor(x)
	b := uint64(int64(f))
	a, c := unit(hash2(key, b)), unit(hash2(key, b+1))
	w := x - f
	w = w * w * (3 - 2*w)
	return a + (c-a)*w
}
