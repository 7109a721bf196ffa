package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// Options configure a Sampler.
type Options struct {
	Backend gpu.Backend
	// Node is the Kubernetes node name put on every series.
	Node string
	// Interval between two samples (--collect.interval).
	Interval time.Duration
	// Timeout bounds one whole sample; the backend bounds each GPU itself.
	Timeout time.Duration
	Logger  *slog.Logger
	// Now is the clock; the demo fast-forwards it. Defaults to time.Now.
	Now func() time.Time
	// Attribution, when set, attributes every sample to pods.
	Attribution *Attribution
	// SkipExposition leaves out the pre-encoded exposition: for callers that
	// read the series through Series (the demo writes them to a TSDB) and
	// never serve Handler.
	SkipExposition bool
}

// Sampler samples the backend in the background and serves the latest
// sample's series. It implements prometheus.Collector.
type Sampler struct {
	opts     Options
	builders []builder
	self     *selfMetrics

	latest atomic.Pointer[result]
	mu     sync.Mutex // serialises SampleOnce

	// Reused by every collection (under mu).
	samples []sample
	cache   *seriesCache
}

// result is one sample's outcome: what the next scrapes serve.
type result struct {
	state   *State
	metrics []prometheus.Metric
	encoded *encoded  // metrics in exposition format, for Handler
	at      time.Time // when the sample finished
	err     error     // non-nil when the backend could read nothing
}

// New returns a Sampler; call Run (or SampleOnce) to fill it.
func New(opts Options) *Sampler {
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.Interval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sampler{
		opts:     opts,
		builders: []builder{deviceBuilder{}, migBuilder{}, containerBuilder{}},
		cache:    newSeriesCache(),
		self:     newSelfMetrics(),
	}
}

// Run samples at once and then on every interval until ctx is done. When
// the attribution's kubelet state changes in between, the latest sample is
// attributed again at once, so that scrapes never serve the attribution of
// a kubelet that stopped answering.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	var changed <-chan struct{}
	if a := s.opts.Attribution; a != nil {
		changed = a.Changed
	}
	for {
		if err := s.SampleOnce(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("collection failed", "backend", s.opts.Backend.Name(), "err", err)
		}
		if !s.wait(ctx, t.C, changed) {
			return
		}
	}
}

// wait blocks until the next tick, attributing the latest sample again at
// each kubelet change meanwhile; it returns false once ctx is done.
func (s *Sampler) wait(ctx context.Context, tick <-chan time.Time, changed <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-changed:
			if err := s.Reattribute(); err != nil {
				s.opts.Logger.Warn("attributing the last collection again", "err", err)
			}
		}
	}
}

// SampleOnce takes one sample and rebuilds the series the scrapes serve.
// When the backend fails entirely the previous device series are dropped:
// serving stale values as if they were current would hide the outage.
func (s *Sampler) SampleOnce(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()

	start := time.Now()
	snap, err := s.opts.Backend.Sample(ctx)
	s.self.observe(time.Since(start), snap, err)
	now := s.opts.Now()
	if err != nil {
		s.latest.Store(&result{at: now, err: err})
		return err
	}
	if snap == nil {
		err = errors.New("backend returned no snapshot")
		s.latest.Store(&result{at: now, err: err})
		return err
	}
	if err := s.publishLocked(snap, now); err != nil {
		return err
	}
	s.self.lastSuccess.Set(float64(now.UnixNano()) / 1e9)
	return nil
}

// Reattribute attributes the latest successful sample again, with what the
// attribution sources hold now, and serves the result; the GPUs are not
// read again. It does nothing before the first successful sample.
func (s *Sampler) Reattribute() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.latest.Load()
	if r == nil || r.state == nil || s.opts.Attribution == nil {
		return nil
	}
	return s.publishLocked(r.state.Snapshot, r.at)
}

// publishLocked attributes snap, builds its series and serves them.
func (s *Sampler) publishLocked(snap *gpu.Snapshot, now time.Time) error {
	st := &State{Node: s.opts.Node, Snapshot: snap}
	if a := s.opts.Attribution; a != nil {
		st.Attribution = a.attribute(s.opts.Node, snap)
	}
	s.samples = s.samples[:0]
	emit := func(m sample) { s.samples = append(s.samples, m) }
	for _, b := range s.builders {
		b.build(st, emit)
	}
	ms, enc, err := s.cache.build(s.samples, s.opts.SkipExposition)
	if err != nil {
		// Only a builder bug (duplicate or inconsistent series) gets here.
		err = fmt.Errorf("encoding series: %w", err)
		s.latest.Store(&result{at: now, err: err})
		return err
	}
	s.latest.Store(&result{state: st, metrics: ms, encoded: enc, at: now})
	return nil
}

// State returns the latest successful sample, or nil.
func (s *Sampler) State() *State {
	if r := s.latest.Load(); r != nil {
		return r.state
	}
	return nil
}

// Healthy says whether the exporter is doing its job (the liveness probe):
// the last collection succeeded, is not older than three intervals, and at
// least one of the node's GPUs answered. A lost GPU is not unhealthy:
// restarting the exporter would not bring it back, and the other GPUs are
// still reported. Every GPU failing is: it is how a library wedged in this
// process looks, which a restart clears.
func (s *Sampler) Healthy() error {
	r := s.latest.Load()
	if r == nil {
		return errors.New("no collection has completed yet")
	}
	if r.err != nil {
		return fmt.Errorf("last collection failed: %w", r.err)
	}
	if age := s.opts.Now().Sub(r.at); age > 3*s.opts.Interval {
		return fmt.Errorf("last collection is stale: %s old (interval %s)", age.Round(time.Second), s.opts.Interval)
	}
	if devs := r.state.Snapshot.Devices; len(devs) > 0 && upCount(devs) == 0 {
		return fmt.Errorf("none of the %d GPUs answered in the last collection (first: GPU %d: %s)", len(devs), devs[0].Index, devs[0].Err)
	}
	return nil
}

// Ready says whether scrapes get the whole picture (the readiness probe):
// Healthy, at least one GPU answered, and, with attribution on, the kubelet
// pod-resources API answered its last refresh.
func (s *Sampler) Ready() error {
	if err := s.Healthy(); err != nil {
		return err
	}
	st := s.latest.Load().state
	if upCount(st.Snapshot.Devices) == 0 {
		return errors.New("no GPU answered in the last collection")
	}
	if st.Attribution != nil && !st.Attribution.KubeletUp {
		return errors.New("the kubelet pod-resources API did not answer its last refresh: GPUs are not attributed to pods")
	}
	return nil
}

func upCount(devs []gpu.Device) int {
	n := 0
	for i := range devs {
		if devs[i].Up {
			n++
		}
	}
	return n
}

// Describe implements prometheus.Collector.
func (s *Sampler) Describe(ch chan<- *prometheus.Desc) {
	for _, b := range s.builders {
		b.describe(ch)
	}
	s.self.Describe(ch)
}

// Collect implements prometheus.Collector. It only sends prebuilt metrics.
func (s *Sampler) Collect(ch chan<- prometheus.Metric) {
	if r := s.latest.Load(); r != nil {
		for _, m := range r.metrics {
			ch <- m
		}
	}
	s.self.Collect(ch)
}
