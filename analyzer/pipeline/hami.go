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

// previousHAMi gives the previous window's allocations HAMi's shares too,
// so that the week-over-week change compares one reading of a HAMi
// tenant with the same reading, not HAMi's limits with the exporter's
// replica. It reads that window's HAMi series (one query where HAMi is
// not installed) and detects nothing: findings are the current window's.
func previousHAMi(ctx context.Context, src source.Source, sc query.Scope, sch signals.Schema, prevW fleet.Window, prev *fleet.Result) error {
	w, err := prevW.WithDefaults()
	if err != nil {
		return err
	}
	tenants, err := query.ReadHAMi(ctx, src, sc, sch, w.Start, w.End, w.Step)
	if err != nil {
		return fmt.Errorf("previous window: HAMi tenants: %w", err)
	}
	prev.HAMi = tenants
	prev.ApplyHAMi()
	return nil
}
