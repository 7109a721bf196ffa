package fleet

import (
	"fmt"
	"slices"
	"testing"

	dcgmfields "github.com/gpulens/gpulens/signals/dcgm"
)

// TestDCGMXIDCarriesItsHolder: dcgm-exporter's pod mapper labels every
// field of a device with the pod that holds it at that scrape, the XID
// gauge included (internal/pkg/transformation/kubernetes.go, see
// emitRow), so at every step each XID series has the pod labels of a row
// of the same device's FB_USED (the holder), and the device's XID has
// none where its FB_USED has none, in every layout and in both the legacy
// and the stock install (a flapping pod label on the time-sliced GPU).
// The stock install writes the code in err_code; the legacy one does not.
func TestDCGMXIDCarriesItsHolder(t *testing.T) {
	installs := map[string]DCGMInstall{"legacy": LegacyInstall(), "stock": StockInstall()}
	for name, install := range installs {
		for _, layout := range []DCGMLayout{DCGMNoVirtualGPUs, DCGMVirtualGPUs, DCGMVirtualGPUs2025} {
			t.Run(name+"/"+layout.String(), func(t *testing.T) {
				_, out := runDCGMInstall(t, layout, false, install)
				tenant := func(s sample) string {
					return fmt.Sprintf("%s/%s/%s gi=%s", s.labels["namespace"], s.labels["pod"], s.labels["container"], s.labels[dcgmfields.LabelGPUInstance])
				}
				xids := pick(out, dcgmfields.XIDErrors, -1, nil)
				if len(xids) == 0 {
					t.Fatal("no XID series")
				}
				held := 0
				for _, x := range xids {
					if _, code := x.labels[dcgmfields.LabelErrCode]; code != install.XIDLabels {
						t.Errorf("%v: err_code present %v, want %v", x, code, install.XIDLabels)
					}
					fb := pick(out, dcgmfields.FBUsed, x.step, map[string]string{dcgmfields.LabelUUID: x.labels[dcgmfields.LabelUUID]})
					if len(fb) == 0 {
						continue // a lost GPU: only its XID is left
					}
					var tenants []string
					for _, s := range fb {
						tenants = append(tenants, tenant(s))
					}
					if !slices.Contains(tenants, tenant(x)) {
						t.Errorf("step %d: XID %v names %s, FB_USED rows %v", x.step, x.labels, tenant(x), tenants)
					}
					if x.labels["pod"] != "" {
						held++
					}
				}
				if held == 0 {
					t.Error("no XID series carries a pod")
				}
			})
		}
	}
}
