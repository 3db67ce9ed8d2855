package audit

import (
	"testing"

	"github.com/fiscal402/fiscal402/receipt"
)

// FuzzOutsideBytes feeds the command's own readers of outside bytes (a
// checkpoint or receipt file, a leaf's payload, a stored record) with
// arbitrary input: they must return an error or a verdict, never panic.
func FuzzOutsideBytes(f *testing.F) {
	f.Add([]byte(`{"receipt":{"id":"rcpt_x"},"ledger":{"origin":"o","index":0},"settlement":{"amountUsdc":"5.00"}}`))
	f.Add([]byte("o\n1\nAAAA\n\n— o AAAA\n"))
	f.Add([]byte(`{"tlog_proof":"c2sp.org/tlog-proof@v1\nindex 0\n\n"}`))
	f.Add([]byte("eyJhbGciOiJFZDI1NTE5In0.e30.AAAA"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkpointNote(data)
		leafPayload(data)
		var c receipt.Claims
		decodeLeafClaims(data, &c)
		c = receipt.Claims{ReceiptID: "rcpt_x", Log: receipt.LogRef{Origin: "o"}, Classification: &receipt.Classification{RatePercent: "20"}, FX: &receipt.FX{GrossEUR: "1.00"}, Invoice: &receipt.Invoice{ID: "i"}}
		recordMismatch(data, &c)
	})
}
