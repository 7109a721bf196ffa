package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
)

// Session is one open analyzer session. It is not safe for concurrent use:
// a server opens one per cycle.
type Session struct {
	cfg        Config
	obs        Observer
	src        source.Source
	close      func() error
	window     query.Window
	schema     schema.Schema // nil until named or detected
	thresholds criteria.Config
	prices     *recommend.Prices
	inv        *inventory.Inventory
}

// openEmbedded is source.OpenEmbedded; a test counts the opens through it.
var openEmbedded = source.OpenEmbedded

// Open checks cfg, opens its source and reads the cluster. Close releases
// the source.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	s, err := settle(cfg)
	if err != nil {
		return nil, err
	}
	src, err := s.openSource()
	if err != nil {
		return nil, err
	}
	s.close = src.Close
	s.start(ctx, src)
	return s, nil
}

// New is Open over a source the caller opened and will close, such as the
// demo's TSDB it has just written; the Config's source fields are ignored.
func New(ctx context.Context, src source.Source, cfg Config) (*Session, error) {
	s, err := settle(cfg)
	if err != nil {
		return nil, err
	}
	s.close = func() error { return nil }
	s.start(ctx, src)
	return s, nil
}

// Close releases the source Open opened.
func (s *Session) Close() error { return s.close() }

// settle checks and loads everything that does not need the source.
func settle(cfg Config) (*Session, error) {
	s := &Session{cfg: cfg, obs: cfg.Observer}
	if s.obs == nil {
		s.obs = noObserver{}
	}
	if s.cfg.Logger == nil {
		s.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := query.Window{Start: cfg.Start, End: cfg.End, Step: cfg.Step}.WithDefaults()
	if err != nil {
		return nil, &InputError{Input: InputWindow, Err: err}
	}
	s.window = w
	if cfg.Schema != "" && cfg.Schema != SchemaAuto {
		if s.schema, err = schema.ByName(cfg.Schema); err != nil {
			return nil, &InputError{Input: InputSchema, Err: err}
		}
	}
	if s.thresholds, err = criteria.LoadConfig(cfg.ConfigFile); err != nil {
		return nil, &InputError{Input: InputConfig, Err: err}
	}
	if s.prices, err = recommend.LoadPrices(cfg.PricesFile); err != nil {
		return nil, &InputError{Input: InputPrices, Err: err}
	}
	return s, nil
}

// openSource opens the one source the config names. A remote source logs
// its retries and the server's PromQL warnings: a slow or flapping server,
// and a query the server only half answered, should be visible.
func (s *Session) openSource() (source.Source, error) {
	cfg := s.cfg
	switch {
	case cfg.PrometheusURL != "" && cfg.DataDir != "":
		return nil, &InputError{Input: InputSource, Err: ErrTwoSources}
	case cfg.DataDir != "":
		// An absent or empty directory is refused here: opening it would
		// create an empty TSDB and report "no data" about a typo.
		if entries, err := os.ReadDir(cfg.DataDir); err != nil {
			return nil, &DataDirError{Err: err}
		} else if len(entries) == 0 {
			return nil, &DataDirError{Err: fmt.Errorf("%s is empty, not a Prometheus TSDB", cfg.DataDir)}
		}
		// Read-only: the directory may be a copy of a Prometheus data
		// directory, which a read-write open would compact, truncate and
		// apply retention to.
		src, err := openEmbedded(cfg.DataDir, source.EmbeddedOptions{MaxSamples: cfg.MaxSamples, ReadOnly: true})
		if err != nil {
			return nil, &DataDirError{Err: err}
		}
		return src, nil
	case cfg.PrometheusURL != "":
		o := cfg.Remote
		o.URL = cfg.PrometheusURL
		o.Logger = cfg.Logger
		src, err := source.NewRemote(o)
		if err != nil {
			return nil, &InputError{Input: InputURL, Err: err}
		}
		return src, nil
	default:
		return nil, &InputError{Input: InputSource, Err: ErrNoSource}
	}
}

// start wraps the source so that the observer sees each query, and reads
// the cluster. The inventory never fails the session: without the cluster,
// teams are namespaces and the findings that need it are skipped, which
// the report says.
func (s *Session) start(ctx context.Context, src source.Source) {
	s.src = observed(src, s.obs)
	if s.cfg.NoKubernetes != "" {
		s.inv = inventory.Unavailable(s.cfg.NoKubernetes)
		return
	}
	o := s.cfg.Kubernetes
	o.Logger = s.cfg.Logger
	c, err := inventory.NewClient(o)
	if err != nil {
		s.inv = inventory.Unavailable(err.Error())
		return
	}
	s.inv = inventory.Read(ctx, c, o)
}

// resolveSchema names the schema, detecting it once when the config left
// it to the data.
func (s *Session) resolveSchema(ctx context.Context) (schema.Schema, error) {
	if s.schema != nil {
		return s.schema, nil
	}
	sch, err := schema.Detect(ctx, s.src, s.window.Start, s.window.End)
	if err != nil {
		return nil, err
	}
	s.schema = sch
	return sch, nil
}
