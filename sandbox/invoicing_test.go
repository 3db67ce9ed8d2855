package sandbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/sandbox"
)

// TestSimulationFollowsInvoicingMode: a simulation for an account predicts
// what recording the same payment would do under the account's invoicing
// mode (per payment, summary_monthly, none_b2c): the same invoicing
// decision as the production record, and a UBL exactly when the
// production record has an invoice of its own. The production books
// record a twin payment of each (another tx hash) as the reference.
func TestSimulationFollowsInvoicingMode(t *testing.T) {
	modes := []string{fiscal.InvoicingPerPayment, fiscal.InvoicingSummaryMonthly, fiscal.InvoicingNoneB2C}
	var sellers []fiscal.Seller
	for _, m := range modes {
		s := fiscaltest.IrishSeller
		s.Invoicing = m
		sellers = append(sellers, s)
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), sellers...))
	sb := sandbox.New(e, sandbox.Options{QuotaPerDay: -1})
	ctx := context.Background()
	for i, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			acct := fiscaltest.AccountID(i)
			prod, err := fiscaltest.Books(t, e, i).Settle(ctx, fiscaltest.Request(10+i, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			sim, err := sb.Simulate(ctx, acct, sandbox.AccountAgent(acct), sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(20+i, "11.90", "DE", "2026-04-10T14:30:00Z")})
			if err != nil {
				t.Fatal(err)
			}
			var rec fiscal.Record
			if err := json.Unmarshal(sim.Record, &rec); err != nil {
				t.Fatal(err)
			}
			want, got := prod.Record.Invoicing, rec.Invoicing
			if (want == nil) != (got == nil) || want != nil && (got.Mode != want.Mode || got.Invoice != want.Invoice || got.Period != want.Period ||
				got.TaxCountry != want.TaxCountry || got.Basis != want.Basis) {
				t.Errorf("simulated invoicing %+v, recording decides %+v", got, want)
			}
			if (prod.Record.Invoice != nil) != (sim.UBL != "") || (prod.Record.Invoice != nil) != (rec.Invoice != nil) {
				t.Errorf("recording gives an invoice: %v; the simulation a UBL: %v, an invoice ref: %v", prod.Record.Invoice != nil, sim.UBL != "", rec.Invoice != nil)
			}
			if rec.Invoice == nil {
				// GET /sandbox/v1/settlements/{id}/ubl: 404 saying what covers it.
				_, _, err := sb.Invoice(ctx, rec.ID)
				if fiscaltest.Code(err) != fiscal.CodeNotFound || !strings.Contains(err.Error(), rec.Invoicing.Basis) {
					t.Errorf("the UBL of a simulation without an invoice of its own: %v, want NOT_FOUND with the basis %q", err, rec.Invoicing.Basis)
				}
			}
		})
	}
}
