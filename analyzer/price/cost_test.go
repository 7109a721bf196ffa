package price

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/vocab"
)

func TestShareAndSavings(t *testing.T) {
	tests := []struct {
		name                         string
		model                        string
		sharing                      vocab.Sharing
		profile                      string
		measured                     float64
		mode                         criteria.ShareMode
		wantShare                    float64
		price, recommended, wantSave float64
	}{
		{"whole GPU to 1g.10gb", "NVIDIA H100 80GB HBM3", "none", "", 1, criteria.ShareCompute, 1, 6.88, 1.0 / 7, 4304.91},
		{"time-sliced 1/4 to 1/8", "NVIDIA L4", "time-slicing", "", 0.25, criteria.ShareCompute, 0.25, 0.80, 0.125, 73},
		{"3g.40gb counted in sevenths", "NVIDIA A100-SXM4-80GB", "mig", "3g.40gb", 3.0 / 7, criteria.ShareCompute, 3.0 / 7, 3.43, 1.0 / 7, 715.4},
		{"3g.40gb counted in eighths", "NVIDIA A100-SXM4-80GB", "mig", "3g.40gb", 3.0 / 7, criteria.ShareMemory, 0.5, 3.43, 0.25, 625.98},
		{"unknown profile uses the measured share", "NVIDIA A100-SXM4-80GB", "mig", "9g.99gb", 2.0 / 7, criteria.ShareMemory, 2.0 / 7, 3.43, 2.0 / 7, 0},
		{"shared to dedicated costs money", "NVIDIA A100-SXM4-80GB", "time-slicing", "", 0.25, criteria.ShareCompute, 0.25, 3.43, 1, -1877.93},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share := Share(tt.model, tt.sharing, tt.profile, tt.measured, tt.mode)
			if diff := share - tt.wantShare; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("share = %v, want %v", share, tt.wantShare)
			}
			if got := MonthlySavings(share, tt.recommended, tt.price); got != tt.wantSave {
				t.Errorf("savings = %v, want %v", got, tt.wantSave)
			}
		})
	}
	if got := MonthlyCost(0.5, 2); got != 730 {
		t.Errorf("MonthlyCost(0.5, 2) = %v, want 730", got)
	}
}
