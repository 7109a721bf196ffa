package ledger

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCents(t *testing.T) {
	for _, tt := range []struct {
		parts []float64
		want  []int64
		total int64
	}{
		{parts: []float64{0.005, 0.005, 0.005}, want: []int64{1, 1, 0}, total: 2}, // each alone rounds to 1¢: 3¢ for 2¢
		{parts: []float64{10.004, 20.004, 30.004}, want: []int64{1000, 2001, 3000}, total: 6001},
		{parts: []float64{1234.5678, 0, 99.991}, want: []int64{123457, 0, 9999}, total: 133456},
		{parts: nil, want: []int64{}, total: 0},
	} {
		got, total := Cents(tt.parts...)
		if !slices.Equal(got, tt.want) || total != tt.total {
			t.Errorf("Cents(%v) = %v, %d; want %v, %d", tt.parts, got, total, tt.want, tt.total)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		parts := make([]float64, 1+rng.IntN(5))
		for i := range parts {
			parts[i] = rng.Float64() * 1e6
		}
		got, total := Cents(parts...)
		var sum int64
		for i, c := range got {
			sum += c
			if d := float64(c) - parts[i]*100; d < -1 || d > 1 {
				t.Fatalf("Cents(%v): part %d is %d¢, more than a cent off", parts, i, c)
			}
		}
		if sum != total {
			t.Fatalf("Cents(%v) = %v: sums to %d, total %d", parts, got, sum, total)
		}
	}
}
