package fiscal_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// Example is a Go merchant's program: open the books of one seller, record a
// settled payment of 11.90 USDC on Base by a consumer in Germany, and get the
// record, the UBL invoice and the signed receipt. (The README quotes it.)
func Example() {
	dir, _ := os.MkdirTemp("", "books")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	books, err := fiscal.Open(dir, fiscal.Seller{
		LegalName: "Demo Digital Services Ltd", Country: "IE", VATNumber: "IE1234567T",
		// Registered in Ireland and for the Union OSS there: sales to
		// consumers in other member states are declared through the OSS.
		Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
		OverThreshold: true, // over the EUR 10,000 of Art. 59c: B2C sales are taxed where the buyer is
	})
	if err != nil {
		log.Fatal(err)
	}
	defer books.Close()

	res, err := books.Settle(ctx, fiscal.SettlementRequest{
		AmountUSDC: "11.90", Network: "eip155:8453", Timestamp: "2026-04-10T14:30:00Z",
		TxHash:          "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
		PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		ConsumerCountry: "DE",
	}, "order-1001")
	if err != nil {
		log.Fatal(err)
	}
	invoice, _, err := books.Invoice(ctx, res.Record.ID)
	if err != nil {
		log.Fatal(err)
	}
	receiptJSON, err := books.Receipt(ctx, res.Record.ID)
	if err != nil {
		log.Fatal(err)
	}

	r := res.Record
	fmt.Println(r.Invoice.ID, r.ReviewStatus, r.Classification.Regime, r.Classification.RatePercent, r.Classification.TaxingCountry)
	fmt.Println(r.FX.GrossEUR, "EUR =", r.FX.NetEUR, "net +", r.FX.VATEUR, "VAT")
	fmt.Println(len(invoice) > 0, len(receiptJSON) > 0)
	// Output:
	// F402-2026-000001 PROCESSED OSS_B2C 19 DE
	// 10.16 EUR = 8.54 net + 1.62 VAT
	// true true
}
