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
	doc, _ := os.ReadFile("testdata/receipt-v2.json")
	jwks, _ := os.ReadFile("testdata/jwks.json")
	logKey, _ := os.ReadFile("testdata/log.vkey")

	claims, err := receipt.Verify(doc, jwks, strings.TrimSpace(string(logKey)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claims.ReceiptID, claims.ReviewStatus, claims.Settlement.Network, claims.Settlement.AmountUSDC, "USDC")
	fmt.Println("in log", claims.Log.Origin, "at index", claims.Log.Index)

	forged := bytes.Replace(doc, []byte(`"review_status": "PROCESSED"`), []byte(`"review_status": "PENDING_MANUAL_REVIEW"`), 1)
	_, err = receipt.Verify(forged, jwks, strings.TrimSpace(string(logKey)))
	fmt.Println(err)
	// Output:
	// rcpt_x402-9f2c4e1a0b7d3c5e1a PROCESSED eip155:8453 12.100000 USDC
	// in log ledger.example/fiscal402 at index 1
	// receipt: verify rcpt_x402-9f2c4e1a0b7d3c5e1a: claims-mismatch: readable claims differ from the signed payload
}
