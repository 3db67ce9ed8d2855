package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestResolveManualRefusalNamesResolvedBy: a resolution's resolvedBy is the
// person a manual determination quotes; when the determination refuses it
// (longer than vat.MaxManualDecidedByLength, though within what a
// resolution accepts), the offending field is the request's /resolvedBy,
// not /determination/decidedBy, which a resolution has no such field for.
func TestResolveManualRefusalNamesResolvedBy(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(3, "100.00", "FI", "2026-04-10T14:30:00Z")
	req.SupplyKind = vat.KindStreaming
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	standard, _, err := vat.Rates().Standard("FI", time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Resolve(ctx, res.Record.ID, fiscal.Resolution{
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "FI", RatePercent: standard.String(), Reason: "the standard rate applies"},
		ResolvedBy:    strings.Repeat("a", vat.MaxManualDecidedByLength+1),
	}, "")
	var fe *fiscal.Error
	if !asError(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/resolvedBy" {
		t.Fatalf("long resolvedBy: %v (field %q), want BAD_REQUEST at /resolvedBy", err, fieldOf(fe))
	}
}

func fieldOf(fe *fiscal.Error) string {
	if fe == nil {
		return ""
	}
	return fe.Field
}
