package fiscalevent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
)

// euMemberStates are the EU-27 as their VAT prefixes write them (EL for
// Greece), which is what callers send.
var euMemberStates = []string{"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "EL", "ES", "FI", "FR", "HR", "HU", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK"}

// request is fiscal event n: the payment of fiscaltest.Request n, a B2C
// buyer in buyerCountry and a digital service.
func request(n int, amount, sellerName, sellerCountry, buyerCountry string) fiscalevent.Request {
	r := fiscaltest.Request(n, amount, "", "2026-04-10T14:30:00Z")
	return fiscalevent.Request{
		Payment: fiscalevent.Payment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp,
			PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
		Seller: parties.Seller{LegalName: sellerName, Country: sellerCountry},
		Buyer:  parties.Buyer{Country: buyerCountry, BusinessStatus: "B2C"},
		Supply: parties.Supply{Kind: "digital_service"},
	}
}

// TestProductionArtifactsPassValidator: the invoices of fiscal events that
// meet the production invariants pass the UBL validator like settlement
// invoices do (the sandbox's watermarked invoices are checked in package
// sandbox).
func TestProductionArtifactsPassValidator(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	dir := t.TempDir()
	var files []string
	for i, cc := range euMemberStates {
		res, err := events.Record(ctx, fiscaltest.AccountID(0), request(i, "11.90", fiscaltest.IrishSeller.LegalName, "IE", cc), "")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Event.Production.Receipt || res.Event.Invoice == nil || res.Event.Receipt == nil {
			t.Fatalf("%s: production invariants %+v", cc, res.Event.Production)
		}
		ubl, sum, err := events.Invoice(ctx, fiscaltest.AccountID(0), res.Event.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sum != res.Event.Invoice.UBLSHA256 {
			t.Fatalf("%s: invoice sha256 %s, the event says %s", cc, sum, res.Event.Invoice.UBLSHA256)
		}
		p := filepath.Join(dir, res.Event.ID+".xml")
		if err := os.WriteFile(p, ubl, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	fiscaltest.ValidateUBL(t, files, false) // B2C: plain EN 16931, not Peppol
}

// BenchmarkRecordFiscalEvent measures durable fiscal events with a
// production receipt, one caller at a time (each waits for its fsync).
func BenchmarkRecordFiscalEvent(b *testing.B) {
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC),
		fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}))
	events := fiscalevent.New(e)
	countries := []string{"DE", "FR", "IT", "ES"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ev, err := events.Record(context.Background(), fiscaltest.AccountID(0), request(i, "11.90", "Bench Ltd", "IE", countries[i%4]), "")
		if err != nil || !ev.Event.Production.Receipt {
			b.Fatal(err)
		}
	}
}
