package fiscal_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// BenchmarkPrepareIssue measures a record's work before the ledger
// (determination, conversion, the invoicing law, the invoice, the receipt
// claims) for a sale whose invoice is in euro only (an Irish seller's OSS
// sale to a German consumer), one with the VAT in PLN too (a Polish
// seller's domestic sale) and a reverse charge with the customer's address
// from VIES (Peppol): what the invoicing law adds per settlement.
func BenchmarkPrepareIssue(b *testing.B) {
	e := lawEngine(b)
	for _, c := range []struct {
		name, seller, buyer string
		b2b                 bool
	}{
		{"euro", "ie-full", "DE", false},
		{"PLN", "pl-full", "PL", false},
		{"reverse-charge", "ie-full", "AT", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			books, err := e.Books(c.seller)
			if err != nil {
				b.Fatal(err)
			}
			var buyer fiscaltest.LawBuyer
			for _, x := range fiscaltest.LawBuyers() {
				if x.Country == c.buyer {
					buyer = x
				}
			}
			p, err := fiscaltest.LawRequest(1, buyer, c.b2b, false).Payment(lawNow)
			if err != nil {
				b.Fatal(err)
			}
			seller := books.Account().Seller
			p.Buyer.SupplyKind, p.Buyer.Description = seller.SupplyKind, seller.ItemName
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				d, err := e.Prepare(context.Background(), c.seller, fiscal.Supply{Payment: p, Seller: seller}, lawNow)
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Issue(d, seller); err != nil || d.Record.ReviewStatus != fiscal.StatusProcessed {
					b.Fatal(err, d.Record.ReviewReasons)
				}
			}
		})
	}
}

// BenchmarkSeal measures the caller's share of Commit for an issued euro
// invoice (ie-full to a German consumer): numbering the invoice and
// sealing the record and receipt at a log index.
func BenchmarkSeal(b *testing.B) {
	e := lawEngine(b)
	books, err := e.Books("ie-full")
	if err != nil {
		b.Fatal(err)
	}
	var buyer fiscaltest.LawBuyer
	for _, x := range fiscaltest.LawBuyers() {
		if x.Country == "DE" {
			buyer = x
		}
	}
	p, err := fiscaltest.LawRequest(1, buyer, false, false).Payment(lawNow)
	if err != nil {
		b.Fatal(err)
	}
	seller := books.Account().Seller
	p.Buyer.SupplyKind, p.Buyer.Description = seller.SupplyKind, seller.ItemName
	d, err := e.Prepare(context.Background(), "ie-full", fiscal.Supply{Payment: p, Seller: seller}, lawNow)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Issue(d, seller); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := int64(0)
	for b.Loop() {
		n++
		if err := fiscal.SealForBench(e, d, n, n); err != nil {
			b.Fatal(err)
		}
	}
}
