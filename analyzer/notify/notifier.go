package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/vocab"
)

// Options configure a Notifier. Zero values take the defaults.
type Options struct {
	// URLs are the Alertmanagers, each of an HA set (not a load balancer
	// in front of them: Alertmanagers gossip notifications, not alerts).
	URLs []string
	// ResendInterval is how often every pending alert is sent again
	// (default 1m).
	ResendInterval time.Duration
	// QueueCapacity bounds each Alertmanager's queue in alerts (default
	// 10000); BatchSize is the most alerts in one POST (default 64).
	QueueCapacity, BatchSize int
	// Timeout bounds one POST (default 10s); Retries is how many times a
	// failed one is repeated (default 3), after Backoff, doubling each time
	// up to 30s (default 500ms).
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	Client  *http.Client
	// Metrics receives the notifier's counters; nil keeps them private.
	Metrics *metrics.Set
	Logger  *slog.Logger
	Now     func() time.Time
	// StateFile, when set, keeps the alerts being sent across restarts:
	// written after every analysis, read back by New, so that the alerts
	// of before the restart are sent again at once, with their startsAt,
	// and the first analysis neither resolves nor re-fires them. Without
	// it, a restart longer than the alerts' validity (four resend
	// intervals), first analysis included, resolves every alert in
	// Alertmanager and fires it again.
	StateFile string
}

func (o Options) withDefaults() Options {
	if o.ResendInterval <= 0 {
		o.ResendInterval = time.Minute
	}
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = 10000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewSet()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// maxBackoff caps the wait between retries of one batch.
const maxBackoff = 30 * time.Second

// Notifier keeps the alerts' lifecycle and delivers them to every
// Alertmanager.
type Notifier struct {
	o             Options
	tracker       *Tracker
	senders       []*sender
	stateFailures *metrics.Counter // nil without a state file
}

// New checks the URLs and sets up one queue per Alertmanager.
func New(o Options) (*Notifier, error) {
	o = o.withDefaults()
	if len(o.URLs) == 0 {
		return nil, errors.New("notify: no Alertmanager URL")
	}
	n := &Notifier{o: o, tracker: NewTracker(o.ResendInterval)}
	for _, raw := range o.URLs {
		ep, err := newEndpoint(raw, o.Client)
		if err != nil {
			return nil, err
		}
		s := &sender{ep: ep, q: newQueue(o.QueueCapacity), o: &n.o,
			sent:    o.Metrics.NewCounter(metricname.Of(vocab.SeriesServeNotificationsSent, "alertmanager", ep.name)),
			failed:  o.Metrics.NewCounter(metricname.Of(vocab.SeriesServeNotificationsFailed, "alertmanager", ep.name)),
			dropped: o.Metrics.NewCounter(metricname.Of(vocab.SeriesServeNotificationsDropped, "alertmanager", ep.name)),
		}
		o.Metrics.NewGauge(metricname.Of(vocab.SeriesServeNotificationQueue, "alertmanager", ep.name),
			func() float64 { return float64(s.q.len()) })
		n.senders = append(n.senders, s)
	}
	if o.StateFile != "" {
		n.stateFailures = o.Metrics.NewCounter(vocab.SeriesServeStateWriteFailures)
		st, ok, err := loadState(o.StateFile)
		switch {
		case err != nil:
			return nil, fmt.Errorf("--state.file: %w; remove it to start without state", err)
		case ok && o.Now().Sub(st.SavedAt) > StateMaxAge:
			o.Logger.Info("state file too old to restore; the first analysis sets the alerts", "file", o.StateFile, "saved_at", st.SavedAt, "max_age", StateMaxAge)
		case ok:
			restored := n.tracker.restore(st)
			o.Logger.Info("alerts restored from the state file", "file", o.StateFile, "alerts", restored, "saved_at", st.SavedAt)
			// Queued now, sent as soon as Run starts: Alertmanager keeps
			// them active while the first analysis runs.
			n.enqueue(n.tracker.Pending(o.Now()))
		}
	}
	o.Metrics.NewGauge(metricname.Of(vocab.SeriesServeAlerts, "state", "active"), func() float64 {
		a, _ := n.tracker.Counts()
		return float64(a)
	})
	o.Metrics.NewGauge(metricname.Of(vocab.SeriesServeAlerts, "state", "resolved"), func() float64 {
		_, r := n.tracker.Counts()
		return float64(r)
	})
	return n, nil
}

// Update records the alerts active after an analysis and sends every
// pending alert at once, so new and resolved findings do not wait for
// the next resend.
func (n *Notifier) Update(current []Alert) {
	now := n.o.Now()
	n.tracker.Update(now, current)
	n.enqueue(n.tracker.Pending(now))
	n.saveState(now)
}

// saveState writes the state file, when there is one. A failure is
// counted and logged, and alerting goes on: the state only matters at
// the next restart.
func (n *Notifier) saveState(now time.Time) {
	if n.o.StateFile == "" {
		return
	}
	if err := saveState(n.o.StateFile, n.tracker.snapshot(now)); err != nil {
		n.stateFailures.Inc()
		n.o.Logger.Warn("could not write the state file", "file", n.o.StateFile, "err", err)
	}
}

func (n *Notifier) enqueue(alerts []Alert) {
	if len(alerts) == 0 {
		return
	}
	for _, s := range n.senders {
		if d := s.q.push(alerts); d > 0 {
			s.dropped.Add(d)
			n.o.Logger.Warn("alert queue full: dropped the oldest alerts", "alertmanager", s.ep.name, "dropped", d)
		}
	}
}

// Run delivers queued alerts and re-sends pending ones every resend
// interval until ctx ends, then makes one last attempt to deliver what is
// queued, within one timeout.
func (n *Notifier) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range n.senders {
		wg.Go(func() { s.run(ctx) })
	}
	t := time.NewTicker(n.o.ResendInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
			n.enqueue(n.tracker.Pending(n.o.Now()))
		}
	}
}

// sender drains one Alertmanager's queue.
type sender struct {
	ep                    *endpoint
	q                     *queue
	o                     *Options
	sent, failed, dropped *metrics.Counter
}

func (s *sender) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.flush()
			return
		case <-s.q.ready:
		}
		for {
			batch := s.q.pop(s.o.BatchSize)
			if len(batch) == 0 {
				break
			}
			s.deliver(ctx, batch)
			if ctx.Err() != nil {
				break
			}
		}
	}
}

// deliver posts a batch, retrying transient failures with backoff.
func (s *sender) deliver(ctx context.Context, batch []Alert) {
	wait := s.o.Backoff
	var err error
	for attempt := 0; attempt <= s.o.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				s.fail(batch, err)
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, maxBackoff)
		}
		actx, cancel := context.WithTimeout(ctx, s.o.Timeout)
		err = s.ep.post(actx, batch)
		cancel()
		if err == nil {
			s.sent.Add(len(batch))
			return
		}
		if isPermanent(err) {
			break
		}
	}
	s.fail(batch, err)
}

func (s *sender) fail(batch []Alert, err error) {
	s.failed.Add(len(batch))
	s.o.Logger.Warn("alerts not delivered", "alertmanager", s.ep.name, "alerts", len(batch), "err", err)
}

// flush is the shutdown's single attempt: the alerts stay valid in
// Alertmanager until their endsAt anyway.
func (s *sender) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	for {
		batch := s.q.pop(s.o.BatchSize)
		if len(batch) == 0 {
			return
		}
		if err := s.ep.post(ctx, batch); err != nil {
			s.fail(batch, err)
			continue
		}
		s.sent.Add(len(batch))
	}
}
