package pipeline

import (
	"context"
	"fmt"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// addHAMi reads the HAMi tenants of the store src reads within sc (one
// cluster's, where the store holds several) into res, for
// the report's ledger, and adds their findings to found. HAMi's tenants
// are read from HAMi's own series, beside the exporter's: one query finds
// none where HAMi is not installed.
func addHAMi(ctx context.Context, src source.Source, sc query.Scope, o Options, sch signals.Schema, cur fleet.Window, res *fleet.Result, found *findings.Result) error {
	w, err := cur.WithDefaults()
	if err != nil {
		return err
	}
	tenants, err := query.ReadHAMi(ctx, src, sc, sch, w.Start, w.End, w.Step)
	if err != nil {
		return fmt.Errorf("HAMi tenants: %w", err)
	}
	found.Findings = append(found.Findings, findings.DetectHAMi(tenants, o.Prices)...)
	res.HAMi = tenants
	res.ApplyHAMi() // one share per tenant, in the report and the ledger alike
	return nil
}
