package nvml

import (
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// xidWaitMillis bounds one nvmlEventSetWait, and so how long Close waits
// for the listener to notice it should stop.
const xidWaitMillis = 1000

// createEventSet returns the set GPUs register XID events on, or nil when
// NVML refuses one (as some virtualised setups do): XIDs are then not counted.
func (b *Backend) createEventSet() gonvml.EventSet {
	c := &caller{log: b.log, gpu: -1}
	defer b.addBackgroundErrors(&c.errs)
	set, ok := get(c, callEventSetCreate, b.lib.EventSetCreate)
	if !ok || set == nil {
		b.log.Info("XID events unavailable: no NVML event set", "error", c.last.Error())
		return nil
	}
	return set
}

// startXIDListener starts the goroutine counting XID events on set, unless
// no GPU registered on it or may still do so from a late setup.
func (b *Backend) startXIDListener(set gonvml.EventSet) {
	if set == nil {
		close(b.xidDone)
		return
	}
	for _, d := range b.devs {
		if d.xidHandle != nil || d.state == readTimedOut {
			go b.listenXID(set)
			return
		}
	}
	freeEventSet(&caller{log: b.log, gpu: -1}, set)
	close(b.xidDone)
}

func (b *Backend) listenXID(set gonvml.EventSet) {
	c := &caller{log: b.log, gpu: -1}
	defer close(b.xidDone)
	defer freeEventSet(c, set)
	retry := time.NewTimer(time.Hour)
	retry.Stop()

	for {
		select {
		case <-b.stop:
			return
		default:
		}
		var data gonvml.EventData
		c.gone = false
		ok := doQuiet(c, callEventSetWait, waitTimedOut, func() (ret gonvml.Return) {
			data, ret = set.Wait(xidWaitMillis)
			return ret
		})
		if ok {
			if data.EventType&gonvml.EventTypeXidCriticalError != 0 {
				b.countXID(c, data)
			}
			continue
		}
		if waitTimedOut(c.last) {
			continue
		}
		// A failing Wait returns at once: report it and pace the retries.
		b.addBackgroundErrors(&c.errs)
		c.errs = errorCounts{}
		retry.Reset(xidWaitMillis * time.Millisecond)
		select {
		case <-b.stop:
			retry.Stop()
			return
		case <-retry.C:
		}
	}
}

func waitTimedOut(ret gonvml.Return) bool { return ret == gonvml.ERROR_TIMEOUT }

// countXID attributes an event to its GPU, by handle or else by UUID (a
// library may hand back an equal device under another handle value), and
// counts its XID code.
func (b *Backend) countXID(c *caller, data gonvml.EventData) {
	if data.Device == nil {
		return
	}
	for _, d := range b.devs {
		if sameHandle(d.xidHandle, data.Device) {
			d.countXID(data.EventData)
			return
		}
	}
	uuid, ok := get(c, callGetUUID, data.Device.GetUUID)
	if !ok {
		b.addBackgroundErrors(&c.errs)
		c.errs = errorCounts{}
		return
	}
	for _, d := range b.devs {
		if id := d.identity(); id.uuid != "" && id.uuid == uuid {
			d.countXID(data.EventData)
			return
		}
	}
	b.log.Debug("XID event for an unknown GPU", "uuid", uuid, "xid", data.EventData)
}

// sameHandle compares handles without panicking on a handle type that is
// not comparable (possible with hand-written mocks).
func sameHandle(a, b gonvml.Device) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

func freeEventSet(c *caller, set gonvml.EventSet) {
	c.gone = false
	do(c, callEventSetFree, set.Free)
}
