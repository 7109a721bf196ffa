package nvml

import (
	"math"
	"strconv"
)

// Unit conversions from NVML's units to the snapshot's base units.
const (
	bytesPerMiB = 1 << 20
	hzPerMHz    = 1e6
	wattsPerMW  = 1e-3
	joulesPerMJ = 1e-3
)

// percent converts an NVML percentage (0–100) to a ratio.
func percent(p float64) float64 { return p / 100 }

// cudaVersion formats nvmlSystemGetCudaDriverVersion's integer (1000*major +
// 10*minor, e.g. 12040) as "12.4".
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}

// cString converts a NUL-terminated C char array, as NVML fills PciInfo.BusId,
// to a string. An array without NUL is taken whole.
func cString(b []int8) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(b[i])
	}
	return string(buf)
}

// memorySlices is how many eighths of the parent GPU's memory a MIG instance
// holds, the unit NVIDIA profiles are cut in. It is 0 when either size is
// unknown.
func memorySlices(instanceBytes, parentBytes float64) int {
	if !(instanceBytes > 0) || !(parentBytes > 0) {
		return 0
	}
	s := int(math.Round(instanceBytes / parentBytes * 8))
	return min(max(s, 1), 8)
}
