package nvml

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// identity is what names a GPU. It survives a lost or hung device so that
// its up=0 series still carries the right labels.
type identity struct {
	index   int
	uuid    string
	model   string
	busID   string
	migMode bool
	// migSlices is the GPU's MIG compute slices; read once in MIG mode.
	migSlices int
	indexed   bool // index came from nvmlDeviceGetIndex, not enumeration
}

// readState is where a device's read currently stands, as seen by Sample.
type readState uint8

const (
	readLaunched readState = iota // a read was started by this Sample
	readFinished                  // it returned in time; out is valid
	readTimedOut                  // it did not return in time
	readBlocked                   // an earlier read is still running
)

// device is one GPU and everything kept about it between samples.
//
// At most one goroutine runs per device: a new one is started only once
// the previous one has signalled done, so a read that blocks inside NVML
// keeps later samples from starting another. The fields under "device
// goroutine" belong to the running goroutine, or to Sample once it has
// received done.
type device struct {
	pos int // enumeration index
	lib gonvml.Interface

	// done (capacity 1) is signalled by the device goroutine as its very
	// last write.
	done chan struct{}

	// Owned by New, Sample and Close (serialised by Backend.sampleMu).
	inflight bool // a goroutine was started and its done not yet received
	state    readState
	started  time.Time

	mu   sync.Mutex // guards id and xids against Sample and the XID listener
	id   identity
	xids map[uint64]uint64

	// xidHandle is the handle registered for XID events, set before the
	// listener starts and read only by it.
	xidHandle gonvml.Device

	// Written by setUp, read by New once setUp has returned in time.
	registered bool // setUp registered the GPU for XID events

	// Device goroutine.
	handle  gonvml.Device
	c       caller
	out     gpu.Device
	procs   []gpu.Process
	insts   []gpu.Instance
	util    utilTracker
	gpmMode gpmSupport
	gpm     gpmPair
	mig     map[string]*migInstance
	gen     uint32 // read counter, marks the MIG instances seen by a read
}

func newDevice(pos int, lib gonvml.Interface, log *slog.Logger) *device {
	return &device{
		pos:  pos,
		lib:  lib,
		done: make(chan struct{}, 1),
		id:   identity{index: pos},
		c:    caller{log: log, gpu: pos},
	}
}

// op is the work of one device goroutine.
type op uint8

const (
	opSetUp op = iota // once, from New
	opRead            // every Sample
)

// run is the device goroutine. Signalling done publishes its writes.
func (d *device) run(o op, set gonvml.EventSet) {
	defer func() {
		// A bug here must cost one GPU's sample, not the exporter.
		if p := recover(); p != nil {
			d.c.log.Error("reading GPU panicked", "gpu", d.pos, "panic", fmt.Sprint(p))
			d.out = blankDevice(d.identity())
			d.out.Err = fmt.Sprintf("internal error: %v", p)
			d.procs = d.procs[:0]
			d.insts = d.insts[:0]
		}
		d.done <- struct{}{}
	}()
	switch o {
	case opSetUp:
		d.setUp(set)
	case opRead:
		d.read()
	}
}

// setUp gets the handle, learns the UUID before the first read (for XID
// events and for a GPU that hangs from then on) and registers the GPU for
// XID critical errors on set, if any. A missing handle is retried by read.
func (d *device) setUp(set gonvml.EventSet) {
	c := &d.c
	c.reset()
	h, ok := get(c, callDeviceGetHandleByIndex, func() (gonvml.Device, gonvml.Return) {
		return d.lib.DeviceGetHandleByIndex(d.pos)
	})
	if !ok || h == nil {
		return
	}
	d.handle = h
	if uuid, ok := get(c, callGetUUID, h.GetUUID); ok {
		d.mu.Lock()
		d.id.uuid = uuid
		d.mu.Unlock()
	}
	c.gone = false
	if set != nil {
		d.registered = do(c, callRegisterEvents, func() gonvml.Return {
			return h.RegisterEvents(gonvml.EventTypeXidCriticalError, set)
		})
	}
}

// read samples the device into out, procs and insts.
func (d *device) read() {
	c := &d.c
	c.reset()
	d.gen++
	d.procs = d.procs[:0]
	d.insts = d.insts[:0]

	if d.handle == nil {
		h, ok := get(c, callDeviceGetHandleByIndex, func() (gonvml.Device, gonvml.Return) {
			return d.lib.DeviceGetHandleByIndex(d.pos)
		})
		if !ok || h == nil {
			d.out = blankDevice(d.identity())
			d.out.Err = describeFailure(callDeviceGetHandleByIndex, c.last)
			return
		}
		d.handle = h
	}
	h := d.handle

	id := d.readIdentity(h)
	d.out = blankDevice(id)
	out := &d.out
	if c.gone {
		d.markDown()
		return
	}

	d.readGauges(h, out)
	d.queryGPM(h)
	if id.migMode {
		d.readMIG(h, out.MemoryTotalBytes)
	} else {
		d.forgetMIG(c)
		d.readProcesses(h)
	}
	d.util.read(c, h)
	d.util.apply(d.procs)
	d.readGPM(h, out, id.migMode)

	if c.gone {
		d.markDown()
		return
	}
	out.Up = true
}

// markDown turns out into the report of a GPU that answered this read
// with a fatal error.
func (d *device) markDown() {
	d.out = blankDevice(d.identity())
	d.out.Err = describeFailure(d.c.goneCall, d.c.goneRet)
	d.procs = d.procs[:0]
	d.insts = d.insts[:0]
}

// readIdentity refreshes the identity. The UUID is read every time: it is
// cheap and doubles as the liveness probe. Name, bus id and index cannot
// change under a handle, so they are read until they have been read once.
func (d *device) readIdentity(h gonvml.Device) identity {
	c := &d.c
	id := d.identity()
	missing := func(fn call) {
		// On identity calls these mean the handle points at nothing.
		if c.last == gonvml.ERROR_GPU_NOT_FOUND || c.last == gonvml.ERROR_UNKNOWN {
			c.markGone(fn, c.last)
		}
	}

	if uuid, ok := get(c, callGetUUID, h.GetUUID); ok {
		id.uuid = uuid
	} else {
		missing(callGetUUID)
	}
	if id.model == "" {
		if name, ok := get(c, callGetName, h.GetName); ok {
			id.model = name
		} else {
			missing(callGetName)
		}
	}
	if id.busID == "" {
		if pci, ok := get(c, callGetPciInfo, h.GetPciInfo); ok {
			id.busID = cString(pci.BusId[:])
		} else {
			missing(callGetPciInfo)
		}
	}
	if !id.indexed {
		if idx, ok := get(c, callGetIndex, h.GetIndex); ok {
			id.index, id.indexed = idx, true
		}
	}
	var current int
	if do(c, callGetMigMode, func() (ret gonvml.Return) {
		current, _, ret = h.GetMigMode()
		return ret
	}) {
		id.migMode = current == gonvml.DEVICE_MIG_ENABLE
	} else if unsupported(c.last) {
		id.migMode = false
	}
	if id.migMode && id.migSlices == 0 {
		id.migSlices = migComputeSlices(h)
	}

	d.mu.Lock()
	d.id = id
	d.mu.Unlock()
	return id
}

func (d *device) identity() identity {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id
}

// xidCounts returns a copy of the XID counters, nil when there are none, so
// a snapshot never shares a map the listener writes.
func (d *device) xidCounts() map[uint64]uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.xids) == 0 {
		return nil
	}
	m := make(map[uint64]uint64, len(d.xids))
	for k, v := range d.xids {
		m[k] = v
	}
	return m
}

func (d *device) countXID(code uint64) {
	d.mu.Lock()
	if d.xids == nil {
		d.xids = make(map[uint64]uint64)
	}
	d.xids[code]++
	d.mu.Unlock()
}

// launch starts a device goroutine unless one is still running, and
// reports whether it did.
func (d *device) launch(o op, set gonvml.EventSet, now time.Time) bool {
	if d.inflight {
		select {
		case <-d.done: // a read that timed out earlier has finished since
			d.inflight = false
		default:
			d.state = readBlocked
			return false
		}
	}
	d.inflight, d.state, d.started = true, readLaunched, now
	go d.run(o, set)
	return true
}

// collect takes the result of the running goroutine if it has finished.
func (d *device) collect() bool {
	select {
	case <-d.done:
		d.inflight, d.state = false, readFinished
		return true
	default:
		return false
	}
}

// release frees the device's GPM samples. No goroutine may be running.
func (d *device) release(c *caller) {
	d.gpm.free(c)
	d.forgetMIG(c)
}

// forgetMIG drops the MIG instances, once MIG mode is off, with their GPM
// samples.
func (d *device) forgetMIG(c *caller) {
	for uuid, inst := range d.mig {
		inst.gpm.free(c)
		delete(d.mig, uuid)
	}
}

// blankDevice is a device with identity only and every reading NA.
func blankDevice(id identity) gpu.Device {
	return gpu.Device{
		Index:    id.index,
		UUID:     id.uuid,
		Model:    id.model,
		PCIBusID: id.busID,
		MIGMode:  id.migMode,

		MIGComputeSlices: id.migSlices,

		Utilization:       gpu.NA,
		MemoryUtilization: gpu.NA,

		SMActive:     gpu.NA,
		SMOccupancy:  gpu.NA,
		TensorActive: gpu.NA,
		DRAMActive:   gpu.NA,

		MemoryUsedBytes:     gpu.NA,
		MemoryTotalBytes:    gpu.NA,
		MemoryReservedBytes: gpu.NA,

		PowerWatts:   gpu.NA,
		EnergyJoules: gpu.NA,
		TemperatureC: gpu.NA,
		SMClockHz:    gpu.NA,
		MemClockHz:   gpu.NA,

		ECCCorrected:   gpu.NA,
		ECCUncorrected: gpu.NA,

		RemappedRowsCorrectable:   gpu.NA,
		RemappedRowsUncorrectable: gpu.NA,
	}
}
