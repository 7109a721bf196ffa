package nvml

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// DefaultCallTimeout bounds one device's read when Options.CallTimeout is 0.
const DefaultCallTimeout = 5 * time.Second

// Options configures the backend.
type Options struct {
	// CallTimeout bounds one device's sampling; a device that does not
	// answer in time is reported Up=false, Err="timeout ...", while the
	// others carry on. Default 5s.
	CallTimeout time.Duration
	// Logger receives failed calls at debug level and lifecycle events.
	// Default slog.Default().
	Logger *slog.Logger
}

// Backend reads GPUs through NVML. It implements gpu.Backend.
type Backend struct {
	lib     gonvml.Interface
	log     *slog.Logger
	timeout time.Duration

	driverVersion string
	cudaVersion   string
	nvmlVersion   string

	devs []*device

	sampleMu sync.Mutex // serialises Sample and Close
	timer    *time.Timer
	closed   bool

	// Failures of calls made outside Sample (New, the XID listener),
	// reported with the next snapshot.
	bgMu   sync.Mutex
	bgErrs errorCounts

	stop      chan struct{} // closed by Close
	xidDone   chan struct{} // closed when the XID listener has exited
	closeOnce sync.Once
	closeErr  error
}

var _ gpu.Backend = (*Backend)(nil)

// ErrClosed is returned by Sample after Close.
var ErrClosed = errors.New("nvml: backend closed")

// Open loads the system's libnvidia-ml and returns a backend over it.
func Open(opts Options) (*Backend, error) {
	return New(gonvml.New(), opts)
}

// New initialises lib and returns a backend reading every GPU it reports.
// It starts the XID event listener, which runs until Close.
func New(lib gonvml.Interface, opts Options) (*Backend, error) {
	if lib == nil {
		return nil, errors.New("nvml: nil library")
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := initLibrary(lib); err != nil {
		return nil, err
	}

	b := &Backend{
		lib:     lib,
		log:     opts.Logger,
		timeout: opts.CallTimeout,
		stop:    make(chan struct{}),
		xidDone: make(chan struct{}),
	}
	c := &caller{log: b.log, gpu: -1}

	if v, ok := get(c, callSystemGetDriverVersion, lib.SystemGetDriverVersion); ok {
		b.driverVersion = v
	}
	if v, ok := get(c, callSystemGetCudaDriverVersion, lib.SystemGetCudaDriverVersion); ok {
		b.cudaVersion = cudaVersion(v)
	}
	if v, ok := get(c, callSystemGetNVMLVersion, lib.SystemGetNVMLVersion); ok {
		b.nvmlVersion = v
	}

	n, ok := get(c, callDeviceGetCount, lib.DeviceGetCount)
	if !ok {
		ret := c.last
		_ = b.shutdown()
		return nil, fmt.Errorf("nvml: counting GPUs: %w", ret)
	}
	b.addBackgroundErrors(&c.errs)
	b.timer = time.NewTimer(time.Hour)
	b.timer.Stop()

	b.devs = make([]*device, n)
	for i := range b.devs {
		b.devs[i] = newDevice(i, lib, b.log)
	}
	set := b.createEventSet()
	b.setUp(set)
	b.startXIDListener(set)
	b.log.Info("NVML initialised", "gpus", n, "driver", b.driverVersion, "cuda", b.cudaVersion, "nvml", b.nvmlVersion)
	return b, nil
}

// setUp gets every GPU's handle and UUID and registers it for XID events,
// each GPU in its own goroutine under CallTimeout like a read, so that a GPU
// hung from the start cannot hang New: it is reported down by Sample until
// its setup returns.
func (b *Backend) setUp(set gonvml.EventSet) {
	now := time.Now()
	for _, d := range b.devs {
		d.launch(opSetUp, set, now)
	}
	if reason := b.wait(context.Background()); reason != "" {
		for _, d := range b.devs {
			if d.state == readTimedOut {
				b.log.Warn("GPU did not answer during setup", "gpu", d.pos, "reason", reason)
			}
		}
	}
	for _, d := range b.devs {
		if d.state != readFinished {
			continue
		}
		b.addBackgroundErrors(&d.c.errs)
		if d.registered {
			d.xidHandle = d.handle
		}
	}
}

// initLibrary runs lib.Init, turning every way it can fail, including a
// panic, into an error that tells the operator what to check.
func initLibrary(lib gonvml.Interface) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = loadError(fmt.Errorf("%v", p))
		}
	}()
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		return loadError(ret)
	}
	return nil
}

// loadError explains an NVML initialisation failure. cause is the NVML
// Return (an error) or a recovered panic, and stays reachable with errors.Is.
func loadError(cause error) error {
	return fmt.Errorf("NVML could not be loaded (%w): is the NVIDIA driver installed, "+
		"and does the container runtime expose it to this container (NVIDIA Container Toolkit, "+
		"runtimeClassName: nvidia)? Use --backend=sim to try gpulens without a GPU", cause)
}

// Name implements gpu.Backend.
func (b *Backend) Name() string { return "nvml" }

// Close stops the XID listener, frees GPM samples and shuts NVML down. A
// device whose read is still blocked keeps its samples: freeing memory a
// running call may use would be worse than leaking it.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.sampleMu.Lock()
		defer b.sampleMu.Unlock()
		b.closed = true
		close(b.stop)

		// The listener waits at most a second in nvmlEventSetWait.
		select {
		case <-b.xidDone:
		case <-time.After(b.timeout + time.Second):
			b.log.Warn("XID event listener did not stop; shutting NVML down under it")
		}

		c := &caller{log: b.log, gpu: -1}
		for _, d := range b.devs {
			if d.inflight && !d.collect() {
				b.log.Warn("GPU read still blocked at close; its GPM samples are not freed", "gpu", d.pos)
				continue
			}
			d.release(c)
		}
		b.closeErr = b.shutdown()
	})
	return b.closeErr
}

func (b *Backend) shutdown() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("nvml: shutdown panicked: %v", p)
		}
	}()
	if ret := b.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %w", ret)
	}
	return nil
}

func (b *Backend) addBackgroundErrors(e *errorCounts) {
	b.bgMu.Lock()
	for i, n := range e {
		b.bgErrs[i] += n
	}
	b.bgMu.Unlock()
}

// takeBackgroundErrors merges the pending background failures into m.
func (b *Backend) takeBackgroundErrors(m map[string]int) map[string]int {
	b.bgMu.Lock()
	defer b.bgMu.Unlock()
	m = b.bgErrs.addTo(m)
	b.bgErrs = errorCounts{}
	return m
}
