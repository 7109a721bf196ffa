package nvml

import (
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

func TestXIDCounting(t *testing.T) {
	r := newRig(t, dgxh100.New())
	r.devs[2].RegisterEventsFunc = func(uint64, gonvml.EventSet) gonvml.Return { return gonvml.ERROR_NOT_SUPPORTED }
	var registered []uint64
	r.devs[0].RegisterEventsFunc = func(types uint64, _ gonvml.EventSet) gonvml.Return {
		registered = append(registered, types)
		return gonvml.SUCCESS
	}
	b := r.open(t, time.Second)
	if len(registered) != 1 || registered[0] != gonvml.EventTypeXidCriticalError {
		t.Errorf("registered event types %v", registered)
	}

	r.events <- gonvml.EventData{Device: r.devs[0], EventType: gonvml.EventTypeXidCriticalError, EventData: 79}
	r.events <- gonvml.EventData{Device: r.devs[0], EventType: gonvml.EventTypeXidCriticalError, EventData: 79}
	r.events <- gonvml.EventData{Device: r.devs[1], EventType: gonvml.EventTypeXidCriticalError, EventData: 48}
	r.events <- gonvml.EventData{Device: r.devs[1], EventType: gonvml.EventTypeSingleBitEccError, EventData: 1}
	r.events <- gonvml.EventData{EventType: gonvml.EventTypeXidCriticalError, EventData: 13} // no device
	// Another handle to GPU 3, matched by UUID.
	other := &mock.Device{GetUUIDFunc: func() (string, gonvml.Return) { return r.devs[3].UUID, gonvml.SUCCESS }}
	r.events <- gonvml.EventData{Device: other, EventType: gonvml.EventTypeXidCriticalError, EventData: 31}

	eventually(t, "XIDs to be counted", func() bool {
		s := sample(t, b)
		return s.Devices[0].XIDErrors[79] == 2 && s.Devices[1].XIDErrors[48] == 1 && s.Devices[3].XIDErrors[31] == 1
	})
	s := sample(t, b)
	if len(s.Errors) != 0 {
		t.Errorf("Errors = %v", s.Errors)
	}
	if len(s.Devices[1].XIDErrors) != 1 {
		t.Errorf("gpu 1 XIDs = %v, want only 48: other event types are not XIDs", s.Devices[1].XIDErrors)
	}
	if s.Devices[2].XIDErrors != nil {
		t.Errorf("gpu 2 XIDs = %v", s.Devices[2].XIDErrors)
	}

	// The caller owns the map it got.
	s.Devices[0].XIDErrors[79] = 1000
	delete(s.Devices[1].XIDErrors, 48)
	s2 := sample(t, b)
	if s2.Devices[0].XIDErrors[79] != 2 || s2.Devices[1].XIDErrors[48] != 1 {
		t.Errorf("a snapshot's XID map is shared with the backend: %v %v", s2.Devices[0].XIDErrors, s2.Devices[1].XIDErrors)
	}
}

func TestXIDKeptWhileGPUIsDown(t *testing.T) {
	r := newRig(t, dgxh100.New())
	b := r.open(t, time.Second)
	r.events <- gonvml.EventData{Device: r.devs[4], EventType: gonvml.EventTypeXidCriticalError, EventData: 79}
	eventually(t, "XID 79", func() bool { return sample(t, b).Devices[4].XIDErrors[79] == 1 })
	r.devs[4].GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
	if d := sample(t, b).Devices[4]; d.Up || d.XIDErrors[79] != 1 {
		t.Errorf("lost GPU: Up=%v XIDs=%v; its XID counter must not reset", d.Up, d.XIDErrors)
	}
}

func TestXIDWithoutEventSet(t *testing.T) {
	r := newRig(t, dgxh100.New())
	r.srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) { return nil, gonvml.ERROR_NO_PERMISSION }
	s := sample(t, r.open(t, time.Second))
	if s.Errors["nvmlEventSetCreate"] != 1 {
		t.Errorf("Errors = %v, want nvmlEventSetCreate: 1", s.Errors)
	}
	if !s.Devices[0].Up {
		t.Errorf("GPUs must be read without XID events")
	}
}

func TestXIDWaitFailuresArePaced(t *testing.T) {
	r := newRig(t, dgxh100.New())
	waits := make(chan struct{}, 100)
	r.srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(uint32) (gonvml.EventData, gonvml.Return) {
				waits <- struct{}{}
				return gonvml.EventData{}, gonvml.ERROR_UNKNOWN
			},
			FreeFunc: func() gonvml.Return { return gonvml.SUCCESS },
		}, gonvml.SUCCESS
	}
	b := r.open(t, time.Second)
	eventually(t, "the failed wait to be reported", func() bool {
		return sample(t, b).Errors["nvmlEventSetWait"] >= 1
	})
	time.Sleep(100 * time.Millisecond)
	if n := len(waits); n > 2 {
		t.Errorf("%d waits in ~100ms after failures: the listener spins", n)
	}
}
