package fiscal_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/receipt"
)

// seededRand is a deterministic byte stream for reproducible keys in
// examples; real use leaves Config.Rand nil (crypto/rand).
type seededRand struct {
	block [32]byte
	used  int
}

func (r *seededRand) Read(p []byte) (int, error) {
	for i := range p {
		if r.used == len(r.block) {
			r.block = sha256.Sum256(r.block[:])
			r.used = 0
		}
		p[i] = r.block[r.used]
		r.used++
	}
	return len(p), nil
}

// Example records a settled USDC payment in-process: a 11.90 USDC payment
// on Base by a consumer in Germany to an Irish seller registered for OSS.
func Example() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	accounts, err := fiscal.NewAccounts([]fiscal.Account{{
		ID:        "acct_demo",
		KeyHashes: []string{fiscal.HashKey("sk_example")},
		Seller: fiscal.Seller{
			LegalName:     "Demo Digital Services Ltd",
			VATNumber:     "IE1234567T",
			LegalID:       "IE-CRO-654321", // identifies the seller where no VAT id may appear
			Country:       "IE",
			Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
			OverThreshold: true, // Art. 59c: above EUR 10,000 of cross-border B2C sales
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	engine, err := fiscal.New(fiscal.Config{
		DataDir:  dir,
		Accounts: accounts,
		Clock:    func() time.Time { return time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC) },
		Rand:     &seededRand{}, // fixed keys, so the output below is reproducible
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()

	res, err := engine.Settle(context.Background(), "acct_demo", fiscal.SettlementRequest{
		AmountUSDC:      "11.90",
		TxHash:          "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
		Timestamp:       "2026-04-10T14:30:00Z",
		PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network:         "eip155:8453",
		ConsumerCountry: "DE",
	}, "order-1001")
	if err != nil {
		log.Fatal(err)
	}
	r := res.Record
	fmt.Println(r.ID, r.ReviewStatus)
	fmt.Println(r.Classification.Regime, r.Classification.Category, r.Classification.RatePercent, r.Classification.TaxingCountry)
	fmt.Printf("%s USDC = %s EUR gross = %s net + %s VAT (ECB %s of %s)\n",
		r.FX.AmountUSDC, r.FX.GrossEUR, r.FX.NetEUR, r.FX.VATEUR, r.FX.USDPerEUR.Raw, r.FX.USDPerEUR.RateDate)

	// Anyone can verify the receipt offline with the public keys.
	rcpt, err := engine.Receipt(context.Background(), r.Receipt.ID)
	if err != nil {
		log.Fatal(err)
	}
	jwks, err := engine.JWKS()
	if err != nil {
		log.Fatal(err)
	}
	claims, err := receipt.Verify(rcpt, jwks, engine.LogVerifierKey())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receipt", claims.ReceiptID, "verified; log index", claims.Log.Index)
	// Output:
	// x402-58da266c40105d3ff1aba32e04c2d1b8 PROCESSED
	// OSS_B2C S 19 DE
	// 11.90 USDC = 10.16 EUR gross = 8.54 net + 1.62 VAT (ECB 1.1711 of 2026-04-10)
	// receipt rcpt_x402-58da266c40105d3ff1aba32e04c2d1b8 verified; log index 0
}
