package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// GPM signals, in the order of gpmMetricIDs.
const (
	gpmSM = iota
	gpmOccupancy
	gpmTensor
	gpmDRAM
	gpmSignals
)

type gpmVector [gpmSignals]float64

// noInstance is NVML's GpuInstanceId/ComputeInstanceId outside MIG (~0).
const noInstance = math.MaxUint32

// device is one simulated physical GPU. It embeds go-nvml's mock device,
// which answers every call not simulated here (architecture, CUDA
// capability, MIG profile info, ...). Fields below mu-guarded are only
// touched with NodeSim.mu held.
type device struct {
	nvml.Device
	sim    *NodeSim
	index  int
	uuid   string
	busID  string // NVML form, 00000000:1B:00.0
	pci    nvml.PciInfo
	layout gpuLayout
	mig    []*migDevice
	pods   []*simPod

	lostAt, hangAt time.Duration
	xids           []xidFault
	nextXID        int
	lost, hung     bool

	tempOffset     float64
	energyMJ       float64
	gpmCum         gpmVector // ∫ signal dt, in ratio·seconds
	eccCorrected   uint64
	eccUncorrected uint64
	remapUnc       int
	remapPending   bool

	st deviceState
}

// deviceState is the device at the current simulated time.
type deviceState struct {
	util, memUtil float64
	gpm           gpmVector
	memUsed       uint64 // by processes and their contexts; excludes reserved
	power         float64
	temp          float64
	smClock       uint32
	throttle      uint64
	procs         []nvml.ProcessInfo
	procUtil      []nvml.ProcessUtilizationSample
}

type xidFault struct {
	at   time.Duration
	code uint64
}

func newDevice(s *NodeSim, i int, nodeKey uint64) *device {
	mockDev := s.lib.srv.Devices[i].(*server.Device)
	fillUnsupported(&mockDev.Device)
	bus := s.sys.busID(i)
	d := &device{
		Device: mockDev,
		sim:    s,
		index:  i,
		uuid:   "GPU-" + uuidOf(hash3(hash2(s.seed, domainGPU), nodeKey, uint64(i))),
		busID:  fmt.Sprintf("%08X:%02X:00.0", 0, bus),
		layout: s.layout[i],
		lostAt: never,
		hangAt: never,
	}
	d.pci = nvml.PciInfo{
		Domain:         0,
		Bus:            bus,
		Device:         0,
		PciDeviceId:    s.sys.config.PciDeviceId,
		PciSubSystemId: 0x16a110de,
	}
	putCString(d.pci.BusId[:], d.busID)
	putCString(d.pci.BusIdLegacy[:], fmt.Sprintf("%04X:%02X:00.0", 0, bus))
	// Keep go-nvml's own view consistent for calls it answers.
	mockDev.UUID = d.uuid
	mockDev.PciBusID = d.busID
	if d.layout.mode == ModeMIG {
		mockDev.MigMode = nvml.DEVICE_MIG_ENABLE
	}

	gh := hash3(s.seed, nodeKey, uint64(i)+domainECC<<32)
	d.tempOffset = 4*unit(gh) - 2
	if unit(mix(gh)) < 0.2 { // most GPUs have never corrected an error
		d.eccCorrected = 1 + mix(gh^1)%40
	}
	// Energy counts from driver load: a few days of uptime at idle.
	uptime := (1 + 29*unit(hash3(s.seed, nodeKey, uint64(i)+domainEnergy<<32))) * 86400
	d.energyMJ = math.Floor(s.sys.idleWatts * uptime * 1000)

	for k, inst := range d.layout.instances {
		d.mig = append(d.mig, newMIGDevice(d, k, inst))
	}
	return d
}

// putCString writes s NUL-terminated into a C char array.
func putCString(dst []int8, s string) {
	n := min(len(s), len(dst)-1)
	for i := range n {
		dst[i] = int8(s[i])
	}
	dst[n] = 0
}

// refresh recomputes the state from the pods' current samples and, when
// time moved by dt seconds, integrates energy and GPM counters over the
// step with the trapezoid rule.
func (d *device) refresh(dt float64) {
	oldPower, oldGPM := d.st.power, d.st.gpm
	st := &d.st
	st.procs = st.procs[:0]
	st.procUtil = st.procUtil[:0]
	if d.layout.mode == ModeMIG {
		st.util, st.memUtil, st.gpm, st.memUsed = 0, 0, gpmVector{}, 0
		for _, m := range d.mig {
			m.refresh(dt)
			w := float64(m.placed.profile.slices) / float64(m.placed.profile.gpuSlices)
			st.util += w * m.gpm[gpmSM]
			st.memUtil += w * m.memCtl
			for k := range st.gpm {
				st.gpm[k] += w * m.gpm[k]
			}
			st.memUsed += m.memUsed
			st.procs = append(st.procs, m.procs...)
		}
	} else {
		d.refreshShared()
	}
	d.physics()
	if dt > 0 {
		d.energyMJ += (oldPower + st.power) / 2 * dt * 1000
		for k := range d.gpmCum {
			d.gpmCum[k] += (oldGPM[k] + st.gpm[k]) / 2 * dt
		}
	}
}

// refreshShared aggregates the pods of a whole or shared GPU: tenants'
// loads add up to at most 1 (time-slicing and MPS interleave them) and
// each process's measured share shrinks accordingly.
func (d *device) refreshShared() {
	st := &d.st
	var sum Sample
	var smSum, memCtlSum float64
	for _, p := range d.pods {
		if !p.running {
			continue
		}
		smSum += p.sample.SM
		memCtlSum += p.sample.MemoryController
		sum.SMOccupancy += p.sample.SMOccupancy
		sum.Tensor += p.sample.Tensor
		sum.DRAM += p.sample.DRAM
	}
	smScale, memScale := max(1, smSum), max(1, memCtlSum)
	ts := uint64(d.sim.now.UnixMicro())
	var used uint64
	for _, p := range d.pods {
		if !p.running {
			continue
		}
		used += appendProcesses(&st.procs, p, noInstance, noInstance)
		k := float64(len(p.pids))
		for _, pid := range p.pids {
			sm := percent(p.sample.SM / k / smScale)
			mem := percent(p.sample.MemoryController / k / memScale)
			if sm > 0 || mem > 0 {
				st.procUtil = append(st.procUtil, nvml.ProcessUtilizationSample{Pid: pid, TimeStamp: ts, SmUtil: sm, MemUtil: mem})
			}
		}
	}
	if len(st.procs) > 0 {
		used += driverOverheadBytes
	}
	st.memUsed = min(used, d.sim.sys.totalBytes()-d.sim.sys.reservedBytes())
	st.util = min(smSum, 1)
	st.memUtil = min(memCtlSum, 1)
	st.gpm = gpmVector{st.util, min(sum.SMOccupancy, 1), min(sum.Tensor, 1), min(sum.DRAM, 1)}
}

// appendProcesses adds a running pod's processes, splitting its memory
// evenly, and returns the memory added.
func appendProcesses(dst *[]nvml.ProcessInfo, p *simPod, gi, ci uint32) uint64 {
	k := uint64(len(p.pids))
	per := p.sample.Memory / k
	for j, pid := range p.pids {
		mem := per
		if j == 0 {
			mem += p.sample.Memory - per*k
		}
		*dst = append(*dst, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: mem, GpuInstanceId: gi, ComputeInstanceId: ci})
	}
	return p.sample.Memory
}

func percent(r float64) uint32 { return uint32(math.Round(clamp01(r) * 100)) }

// Clock and throttle thresholds: below idleUtil the GPU drops to idle
// clocks; above capUtil it runs into its power limit.
const (
	idleUtil = 0.05
	capUtil  = 0.9
)

// physics derives power, temperature, clocks and throttle reasons from
// utilization: power is linear between idle and TDP, heavy load hits the
// software power cap and loses up to 8% of its clock.
func (d *device) physics() {
	sys, st := d.sim.sys, &d.st
	u := st.util
	st.power = sys.idleWatts + (sys.tdpWatts-sys.idleWatts)*u
	st.temp = sys.idleTempC + (sys.maxTempC-sys.idleTempC)*u + d.tempOffset
	switch {
	case u < idleUtil:
		st.smClock = sys.idleSMClockMHz
		st.throttle = nvml.ClocksEventReasonGpuIdle
	case u > capUtil:
		clock := float64(sys.maxSMClockMHz) * (1 - 0.08*(u-capUtil)/(1-capUtil))
		st.smClock = uint32(math.Round(clock/15) * 15)
		st.throttle = nvml.ClocksEventReasonSwPowerCap
	default:
		st.smClock = sys.maxSMClockMHz
		st.throttle = nvml.ClocksEventReasonNone
	}
}

// fireXID queues an XID event on every event set registered for it.
func (d *device) fireXID(code uint64) {
	switch code {
	case XIDFallenOffBus:
		d.lost = true
	case 48: // double-bit ECC error: the row is retired on next reset
		d.eccUncorrected++
		d.remapUnc++
		d.remapPending = true
	}
	ev := nvml.EventData{
		Device:            d,
		EventType:         nvml.EventTypeXidCriticalError,
		EventData:         code,
		GpuInstanceId:     noInstance,
		ComputeInstanceId: noInstance,
	}
	for _, set := range d.sim.lib.sets {
		set.deliver(d, ev)
	}
}

// enter guards a device call: it takes the read lock, or returns why the
// call fails. A hung device blocks the caller until the simulator closes.
func (d *device) enter() nvml.Return {
	s := d.sim
	s.mu.RLock()
	switch {
	case s.isClosed:
		s.mu.RUnlock()
		return nvml.ERROR_UNINITIALIZED
	case d.hung:
		s.mu.RUnlock()
		<-s.closed
		return nvml.ERROR_UNINITIALIZED
	case d.lost:
		s.mu.RUnlock()
		return nvml.ERROR_GPU_IS_LOST
	}
	return nvml.SUCCESS
}

func (d *device) leave() { d.sim.mu.RUnlock() }

func (d *device) GetUUID() (string, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return "", r
	}
	defer d.leave()
	return d.uuid, nvml.SUCCESS
}

func (d *device) GetIndex() (int, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return d.index, nvml.SUCCESS
}

func (d *device) GetMinorNumber() (int, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return d.index, nvml.SUCCESS
}

func (d *device) GetName() (string, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return "", r
	}
	defer d.leave()
	return d.sim.sys.config.Name, nvml.SUCCESS
}

func (d *device) GetPciInfo() (nvml.PciInfo, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nvml.PciInfo{}, r
	}
	defer d.leave()
	return d.pci, nvml.SUCCESS
}

func (d *device) GetMigMode() (int, int, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, 0, r
	}
	defer d.leave()
	if !d.sim.sys.migCapable() {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	mode := nvml.DEVICE_MIG_DISABLE
	if d.layout.mode == ModeMIG {
		mode = nvml.DEVICE_MIG_ENABLE
	}
	return mode, mode, nvml.SUCCESS
}

func (d *device) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nvml.Memory{}, r
	}
	defer d.leave()
	// The v1 call counts the driver's reservation as used.
	total := d.sim.sys.totalBytes()
	used := d.st.memUsed + d.sim.sys.reservedBytes()
	return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
}

func (d *device) GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nvml.Memory_v2{}, r
	}
	defer d.leave()
	m := nvml.Memory_v2{
		Total:    d.sim.sys.totalBytes(),
		Reserved: d.sim.sys.reservedBytes(),
		Used:     d.st.memUsed,
	}
	m.Version = nvml.STRUCT_VERSION(m, 2)
	m.Free = m.Total - m.Reserved - m.Used
	return m, nvml.SUCCESS
}

func (d *device) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nvml.Utilization{}, r
	}
	defer d.leave()
	if d.layout.mode == ModeMIG {
		return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.Utilization{Gpu: percent(d.st.util), Memory: percent(d.st.memUtil)}, nvml.SUCCESS
}

func (d *device) GetPowerUsage() (uint32, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return uint32(math.Round(d.st.power * 1000)), nvml.SUCCESS
}

func (d *device) GetEnforcedPowerLimit() (uint32, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return uint32(d.sim.sys.tdpWatts * 1000), nvml.SUCCESS
}

func (d *device) GetTotalEnergyConsumption() (uint64, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return uint64(d.energyMJ), nvml.SUCCESS
}

func (d *device) GetTemperature(sensor nvml.TemperatureSensors) (uint32, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	if sensor != nvml.TEMPERATURE_GPU {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return uint32(math.Round(d.st.temp)), nvml.SUCCESS
}

func (d *device) GetClockInfo(clock nvml.ClockType) (uint32, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	switch clock {
	case nvml.CLOCK_GRAPHICS, nvml.CLOCK_SM:
		return d.st.smClock, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return d.sim.sys.memClockMHz, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) GetMaxClockInfo(clock nvml.ClockType) (uint32, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	switch clock {
	case nvml.CLOCK_GRAPHICS, nvml.CLOCK_SM:
		return d.sim.sys.maxSMClockMHz, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return d.sim.sys.memClockMHz, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) GetCurrentClocksEventReasons() (uint64, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	return d.st.throttle, nvml.SUCCESS
}

// GetCurrentClocksThrottleReasons is the pre-535 name of the same call.
func (d *device) GetCurrentClocksThrottleReasons() (uint64, nvml.Return) {
	return d.GetCurrentClocksEventReasons()
}

func (d *device) GetTotalEccErrors(kind nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	switch kind {
	case nvml.MEMORY_ERROR_TYPE_CORRECTED:
		return d.eccCorrected, nvml.SUCCESS
	case nvml.MEMORY_ERROR_TYPE_UNCORRECTED:
		return d.eccUncorrected, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) GetRemappedRows() (int, int, bool, bool, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, 0, false, false, r
	}
	defer d.leave()
	return 0, d.remapUnc, d.remapPending, false, nvml.SUCCESS
}

func (d *device) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer d.leave()
	return append([]nvml.ProcessInfo(nil), d.st.procs...), nvml.SUCCESS
}

// GetProcessUtilization returns one sample per process busy at the current
// time, stamped with it (microseconds), when newer than lastSeen. As real
// NVML, it answers ERROR_NOT_FOUND when there is nothing newer and
// ERROR_NOT_SUPPORTED in MIG mode.
func (d *device) GetProcessUtilization(lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer d.leave()
	if d.layout.mode == ModeMIG {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	if len(d.st.procUtil) == 0 || d.st.procUtil[0].TimeStamp <= lastSeen {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return append([]nvml.ProcessUtilizationSample(nil), d.st.procUtil...), nvml.SUCCESS
}

func (d *device) GetMaxMigDeviceCount() (int, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return 0, r
	}
	defer d.leave()
	if !d.sim.sys.migCapable() {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return 7, nvml.SUCCESS
}

// GetMigDeviceHandleByIndex returns the index-th MIG device, in the order
// of the scenario's geometry; ERROR_NOT_FOUND past the last one or when
// MIG is disabled.
func (d *device) GetMigDeviceHandleByIndex(i int) (nvml.Device, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer d.leave()
	if !d.sim.sys.migCapable() {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	if i < 0 || i >= len(d.mig) {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return d.mig[i], nvml.SUCCESS
}

func (d *device) IsMigDeviceHandle() (bool, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return false, r
	}
	defer d.leave()
	return false, nvml.SUCCESS
}

func (d *device) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nil, r
	}
	defer d.leave()
	return nil, nvml.ERROR_INVALID_ARGUMENT
}

// GpmQueryDeviceSupport reports GPM on Hopper and Blackwell. Elsewhere it
// answers ERROR_NOT_SUPPORTED with IsSupportedDevice 0, so a reader that
// checks either learns the same.
func (d *device) GpmQueryDeviceSupport() (nvml.GpmSupport, nvml.Return) {
	if r := d.enter(); r != nvml.SUCCESS {
		return nvml.GpmSupport{}, r
	}
	defer d.leave()
	if !d.sim.sys.gpm {
		return nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION, IsSupportedDevice: 1}, nvml.SUCCESS
}

func (d *device) GpmSampleGet(sample nvml.GpmSample) nvml.Return { return sample.Get(d) }

func (d *device) GpmMigSampleGet(gi int, sample nvml.GpmSample) nvml.Return {
	return sample.MigGet(d, gi)
}

// RegisterEvents adds the device to set. Any mask is accepted; the
// simulator only ever raises XID critical errors.
func (d *device) RegisterEvents(mask uint64, set nvml.EventSet) nvml.Return {
	if r := d.enter(); r != nvml.SUCCESS {
		return r
	}
	defer d.leave()
	es, ok := set.(*eventSet)
	if !ok || es.lib != d.sim.lib {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return es.register(d, mask)
}

// busIDString normalizes a PCI bus id for lookups: NVML accepts both the
// 8-digit and the 4-digit domain and either case.
func busIDString(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) == len("0000:1B:00.0") {
		s = "0000" + s
	}
	return s
}
