package nvml

import (
	"fmt"
	"log/slog"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// call identifies one NVML function, so failures are counted in a fixed array
// on the hot path and turned into a map only when a snapshot has errors.
type call uint8

const (
	callDeviceGetCount call = iota
	callDeviceGetHandleByIndex
	callSystemGetDriverVersion
	callSystemGetCudaDriverVersion
	callSystemGetNVMLVersion
	callGetUUID
	callGetIndex
	callGetName
	callGetPciInfo
	callGetMigMode
	callGetMemoryInfo
	callGetMemoryInfoV2
	callGetUtilizationRates
	callGetPowerUsage
	callGetTotalEnergyConsumption
	callGetTemperature
	callGetClockInfo
	callGetCurrentClocksEventReasons
	callGetCurrentClocksThrottleReasons
	callGetTotalEccErrors
	callGetRemappedRows
	callGetComputeRunningProcesses
	callGetProcessUtilization
	callGetMaxMigDeviceCount
	callGetMigDeviceHandleByIndex
	callGetGpuInstanceID
	callGetComputeInstanceID
	callGetAttributes
	callGpmQueryDeviceSupport
	callGpmSampleAlloc
	callGpmSampleGet
	callGpmMigSampleGet
	callGpmMetricsGet
	callGpmSampleFree
	callEventSetCreate
	callRegisterEvents
	callEventSetWait
	callEventSetFree
	numCalls
)

var callNames = [numCalls]string{
	callDeviceGetCount:                  "nvmlDeviceGetCount",
	callDeviceGetHandleByIndex:          "nvmlDeviceGetHandleByIndex",
	callSystemGetDriverVersion:          "nvmlSystemGetDriverVersion",
	callSystemGetCudaDriverVersion:      "nvmlSystemGetCudaDriverVersion",
	callSystemGetNVMLVersion:            "nvmlSystemGetNVMLVersion",
	callGetUUID:                         "nvmlDeviceGetUUID",
	callGetIndex:                        "nvmlDeviceGetIndex",
	callGetName:                         "nvmlDeviceGetName",
	callGetPciInfo:                      "nvmlDeviceGetPciInfo",
	callGetMigMode:                      "nvmlDeviceGetMigMode",
	callGetMemoryInfo:                   "nvmlDeviceGetMemoryInfo",
	callGetMemoryInfoV2:                 "nvmlDeviceGetMemoryInfo_v2",
	callGetUtilizationRates:             "nvmlDeviceGetUtilizationRates",
	callGetPowerUsage:                   "nvmlDeviceGetPowerUsage",
	callGetTotalEnergyConsumption:       "nvmlDeviceGetTotalEnergyConsumption",
	callGetTemperature:                  "nvmlDeviceGetTemperature",
	callGetClockInfo:                    "nvmlDeviceGetClockInfo",
	callGetCurrentClocksEventReasons:    "nvmlDeviceGetCurrentClocksEventReasons",
	callGetCurrentClocksThrottleReasons: "nvmlDeviceGetCurrentClocksThrottleReasons",
	callGetTotalEccErrors:               "nvmlDeviceGetTotalEccErrors",
	callGetRemappedRows:                 "nvmlDeviceGetRemappedRows",
	callGetComputeRunningProcesses:      "nvmlDeviceGetComputeRunningProcesses",
	callGetProcessUtilization:           "nvmlDeviceGetProcessUtilization",
	callGetMaxMigDeviceCount:            "nvmlDeviceGetMaxMigDeviceCount",
	callGetMigDeviceHandleByIndex:       "nvmlDeviceGetMigDeviceHandleByIndex",
	callGetGpuInstanceID:                "nvmlDeviceGetGpuInstanceId",
	callGetComputeInstanceID:            "nvmlDeviceGetComputeInstanceId",
	callGetAttributes:                   "nvmlDeviceGetAttributes",
	callGpmQueryDeviceSupport:           "nvmlGpmQueryDeviceSupport",
	callGpmSampleAlloc:                  "nvmlGpmSampleAlloc",
	callGpmSampleGet:                    "nvmlGpmSampleGet",
	callGpmMigSampleGet:                 "nvmlGpmMigSampleGet",
	callGpmMetricsGet:                   "nvmlGpmMetricsGet",
	callGpmSampleFree:                   "nvmlGpmSampleFree",
	callEventSetCreate:                  "nvmlEventSetCreate",
	callRegisterEvents:                  "nvmlDeviceRegisterEvents",
	callEventSetWait:                    "nvmlEventSetWait",
	callEventSetFree:                    "nvmlEventSetFree",
}

func (c call) String() string { return callNames[c] }

// retPanicked stands for a call that panicked instead of returning. It is
// outside NVML's Return range so it is never mistaken for a lost GPU.
const retPanicked gonvml.Return = -1

// describeFailure describes a failed call for Device.Err.
func describeFailure(fn call, ret gonvml.Return) string {
	if ret == retPanicked {
		return callNames[fn] + ": panicked"
	}
	return callNames[fn] + ": " + ret.Error()
}

// errorCounts counts failed calls by function.
type errorCounts [numCalls]uint32

// addTo merges the counts into m, allocating m on the first error only.
func (e *errorCounts) addTo(m map[string]int) map[string]int {
	for c, n := range e {
		if n == 0 {
			continue
		}
		if m == nil {
			m = make(map[string]int)
		}
		m[callNames[c]] += int(n)
	}
	return m
}

// unsupported reports whether ret means the device or driver simply lacks
// the feature, which the snapshot expresses as NA rather than as an error.
func unsupported(ret gonvml.Return) bool {
	return ret == gonvml.ERROR_NOT_SUPPORTED || ret == gonvml.ERROR_FUNCTION_NOT_FOUND
}

// caller runs the NVML calls of one read: it classifies results, counts
// failures and turns panics into failures. Once the GPU is known to be gone
// every further call is skipped, so a lost GPU costs one failed call per
// sample instead of twenty.
type caller struct {
	log  *slog.Logger
	gpu  int // enumeration index, for logs
	errs errorCounts
	// last is the Return of the most recent call, for the few callers that
	// must tell NOT_SUPPORTED from a failure.
	last gonvml.Return
	// gone records that the GPU is lost; goneCall and goneRet say how.
	gone     bool
	goneCall call
	goneRet  gonvml.Return
}

func (c *caller) reset() {
	c.errs = errorCounts{}
	c.last = gonvml.SUCCESS
	c.gone = false
}

// check records the outcome of fn and reports whether the value is usable.
// quiet, when not nil, names further Returns that are expected answers
// rather than failures (e.g. NOT_FOUND for "no samples since then").
func (c *caller) check(fn call, ret gonvml.Return, quiet func(gonvml.Return) bool) bool {
	c.last = ret
	if ret == gonvml.SUCCESS {
		return true
	}
	if unsupported(ret) || (quiet != nil && quiet(ret)) {
		return false
	}
	c.errs[fn]++
	if ret == gonvml.ERROR_GPU_IS_LOST {
		c.markGone(fn, ret)
	}
	c.log.Debug("NVML call failed", "call", callNames[fn], "gpu", c.gpu, "error", ret.Error())
	return false
}

func (c *caller) markGone(fn call, ret gonvml.Return) {
	if !c.gone {
		c.gone, c.goneCall, c.goneRet = true, fn, ret
	}
}

// recoverCall is deferred by the call helpers: a panicking call (a mock
// method left unset, an odd value tripping go-nvml) counts as a failure.
func (c *caller) recoverCall(fn call, ok *bool) {
	p := recover()
	if p == nil {
		return
	}
	*ok = false
	c.last = retPanicked
	c.errs[fn]++
	c.log.Debug("NVML call panicked", "call", callNames[fn], "gpu", c.gpu, "panic", fmt.Sprint(p))
}

// get runs one NVML call returning a value.
func get[T any](c *caller, fn call, f func() (T, gonvml.Return)) (T, bool) {
	return getQuiet(c, fn, nil, f)
}

// getQuiet is get with extra Returns that are answers, not failures.
func getQuiet[T any](c *caller, fn call, quiet func(gonvml.Return) bool, f func() (T, gonvml.Return)) (v T, ok bool) {
	if c.gone {
		return v, false
	}
	defer c.recoverCall(fn, &ok)
	v, ret := f()
	return v, c.check(fn, ret, quiet)
}

// do runs one NVML call returning only a Return.
func do(c *caller, fn call, f func() gonvml.Return) (ok bool) {
	return doQuiet(c, fn, nil, f)
}

// doQuiet is do with extra Returns that are answers, not failures.
func doQuiet(c *caller, fn call, quiet func(gonvml.Return) bool, f func() gonvml.Return) (ok bool) {
	if c.gone {
		return false
	}
	defer c.recoverCall(fn, &ok)
	return c.check(fn, f(), quiet)
}
