package fiscal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
)

// TestDocumentDraft: an entry that is not a settlement, its invoice built
// on Books.InvoiceFrame of a settled record, takes the next number of the
// account's series when committed (the sandbox's series in the sandbox),
// is stored with its UBL and is its own document.
func TestDocumentDraft(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	for _, env := range []string{receipt.EnvProduction, receipt.EnvSandbox} {
		t.Run(env, func(t *testing.T) {
			cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
			cfg.Environment = env
			b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
			ctx := context.Background()
			sale, err := b.Settle(ctx, fiscaltest.Request(1, "1.19", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			r := sale.Record
			prefix := "F402-2026-"
			if env == receipt.EnvSandbox {
				prefix = "SANDBOX-2026-"
			}
			if r.Invoice == nil || r.Invoice.ID != prefix+"000001" {
				t.Fatalf("the sale's invoice: %+v", r.Invoice)
			}

			inv, ref, missing := b.InvoiceFrame(r, now)
			if len(missing) > 0 || inv.TaxCountry != r.Invoice.TaxCountry || ref.TaxBasis != r.Invoice.TaxBasis || ref.IssueDate != "2026-04-13" || string(inv.Profile) != r.Invoice.Profile {
				t.Fatalf("frame: %+v, %+v, missing %v; want the sale's law %s (%s)", inv, ref, missing, r.Invoice.TaxCountry, r.Invoice.TaxBasis)
			}
			const id = "doc-1"
			net := decimal.RequireFromString(r.FX.NetEUR)
			rate := r.Classification.RatePercent.Decimal()
			inv.Currency, inv.BuyerReference, inv.PaidInFull, inv.SupplyDate = "EUR", id, true, r.Classification.SupplyDate
			inv.PaymentMeans = ubl.StablecoinPaymentMeans(inv.Seller.Country, inv.Buyer.Country, id)
			inv.Lines = []ubl.Line{{ID: "1", Name: "a document's supply", Quantity: decimal.NewFromInt(1), PriceAmount: net, NetAmount: net,
				Category: r.Classification.Category, RatePercent: rate}}
			inv.Subtotals = []ubl.TaxSubtotal{{Category: r.Classification.Category, RatePercent: rate, TaxableAmount: net,
				TaxAmount: decimal.RequireFromString(r.FX.VATEUR)}}
			u, err := ubl.DraftInvoice(inv)
			if err != nil {
				t.Fatal(err)
			}
			ref.URL = "/documents/" + id
			d := b.DocumentDraft(fiscal.Record{ID: id, Object: "test_document", Invoice: ref}, "test.issued", u, now)
			d.Document = func(sealed *fiscal.Record) ([]byte, error) {
				return json.Marshal(map[string]any{"id": id, "account": sealed.Account, "invoice": sealed.Invoice, "ledger": sealed.Ledger})
			}
			stored, _, err := b.Engine().Commit(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Account string            `json:"account"`
				Invoice fiscal.InvoiceRef `json:"invoice"`
			}
			if err := json.Unmarshal(stored, &got); err != nil {
				t.Fatal(err)
			}
			if got.Account != b.Account().ID || got.Invoice.ID != prefix+"000002" || got.Invoice.URL != ref.URL {
				t.Fatalf("stored %s; want account %s, invoice %s000002", stored, b.Account().ID, prefix)
			}
			doc, err := b.Engine().Document(id)
			if err != nil || !bytes.Equal(doc, stored) {
				t.Fatalf("Document(%s) = %s, %v; want what Commit stored", id, doc, err)
			}
			x, _, err := b.Engine().StoredInvoice(id, got.Invoice.UBLSHA256)
			if err != nil || !bytes.Contains(x, []byte("<cbc:ID>"+prefix+"000002</cbc:ID>")) {
				t.Fatalf("the stored UBL (%v) lacks its number %s000002", err, prefix)
			}
		})
	}
}
