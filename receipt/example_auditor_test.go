package receipt_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/fiscal402/fiscal402/receipt"
)

// Example is an auditor's check, with package receipt alone and without the
// service: the receipt a merchant handed over, the receipt keys the service
// publishes (GET /.well-known/jwks.json, archived by the auditor) and its log
// verifier key (GET /.well-known/log-key). Changing one signed byte breaks it. (The
// README quotes it.)
func Example() {
	doc, _ := os.ReadFile("testdata/receipt-v4.json")
	jwks, _ := os.ReadFile("testdata/jwks.json")
	logKey, _ := os.ReadFile("testdata/log.vkey")

	claims, err := receipt.Verify(doc, jwks, strings.TrimSpace(string(logKey)))
	if err != nil {
		log.Fatal(err)
	}
	c := claims.Classification
	fmt.Println(claims.ReceiptID, claims.ReviewStatus, claims.Seller.LegalName)
	fmt.Println(claims.Settlement.AmountUSDC, "USDC =", claims.FX.GrossEUR, "EUR, of which VAT", claims.FX.VATEUR, "at", c.RatePercent, "% in", c.TaxingCountry)
	fmt.Println("in log", claims.Log.Origin, "at index", claims.Log.Index)

	forged := bytes.Replace(doc, []byte(`"review_status": "PROCESSED"`), []byte(`"review_status": "PENDING_MANUAL_REVIEW"`), 1)
	_, err = receipt.Verify(forged, jwks, strings.TrimSpace(string(logKey)))
	fmt.Println(err)
	// Output:
	// rcpt_x402-7c1e9a40d2b35f86a0c4e1b7d9f20310 PROCESSED Example Digital GmbH
	// 12.100000 USDC = 10.33 EUR, of which VAT 1.93 at 23 % in PL
	// in log ledger.example/fiscal402 at index 7
	// receipt: verify rcpt_x402-7c1e9a40d2b35f86a0c4e1b7d9f20310: claims-mismatch: the readable claims say /review_status is "PENDING_MANUAL_REVIEW", but the signed payload says "PROCESSED": the readable copy was changed after signing. Trust only the signed values (Verify returns them), and ask the issuer for an unaltered receipt
}
