package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestResolveBusinessNeedsVATNumber: Resolution.Buyer.BusinessStatus "B2B"
// needs a VAT number, given in the resolution or on the record. A person
// who states that the buyer is a business, without a number, is refused
// naming the field; the record is not decided as a consumer's supply.
func TestResolveBusinessNeedsVATNumber(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	_, err = b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE", BusinessStatus: "B2B"}, ResolvedBy: "ops-1"}, "")
	var fe *fiscal.Error
	if fiscaltest.Code(err) != fiscal.CodeBadRequest || !asError(err, &fe) || fe.Field != "/buyer/consumerVatNumber" {
		r, _, _ := b.Record(ctx, res.Record.ID)
		t.Fatalf("B2B without a VAT number: %v; record %s %s %s", err, r.ReviewStatus, r.Classification.Regime, r.Buyer.VATNumber)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("a refused resolution wrote %d entries", e.Ledger().Size()-size)
	}
}
