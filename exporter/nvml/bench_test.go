package nvml

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
)

// BenchmarkSample measures one Sample of an 8-GPU DGX H200 with GPM. The
// mock records every call it answers, which accounts for part of the
// allocations reported.
func BenchmarkSample(b *testing.B) {
	r := newRig(b, dgxh200.New())
	enableGPM(b, r, 10)
	be := r.open(b, 5*time.Second)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
