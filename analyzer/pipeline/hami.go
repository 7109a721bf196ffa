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

// readHAMi reads the HAMi tenants of the store src reads within sc (one
// cluster's, where the store holds several) into res.HAMi, before the
// findings: a GPU the exporter maps no pod to is held all the same where
// HAMi's series name its tenants (findings' unallocated rule reads them).
// HAMi's tenants are read from HAMi's own series, beside the exporter's:
// one query finds none where HAMi is not installed.
func readHAMi(ctx context.Context, src source.Source, sc query.Scope, sch signals.Schema, cur fleet.Window, res *fleet.Result) error {
	w, err := cur.WithDefaults()
	if err != nil {
		return err
	}
	tenants, err := query.ReadHAMi(ctx, src, sc, sch, w.Start, w.End, w.Step)
	if err != nil {
		return fmt.Errorf("HAMi tenants: %w", err)
	}
	res.HAMi = tenants
	return nil
}

// addHAMi adds res's HAMi tenants' findings to found and gives their
// allocations HAMi's shares, for the report's ledger: after the
// exporter's findings, which read the exporter's view.
func addHAMi(o Options, res *fleet.Result, found *findings.Result) {
	found.Findings = append(found.Findings, findings.DetectHAMi(res.HAMi, o.Prices)...)
	res.ApplyHAMi() // one share per tenant, in the report and the ledger alike
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
