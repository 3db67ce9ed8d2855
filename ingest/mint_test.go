package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestMintOrBurnIsNotAPayment: a USDC Transfer from the zero address is a
// mint (the issuer creating USDC, e.g. for the merchant's own deposit), one
// to the zero address a burn; neither is a buyer paying for a supply, and
// recording either as a sale would charge VAT on no sale. Both are
// refused at the log they name, and nothing is written.
func TestMintOrBurnIsNotAPayment(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	const zero = "0x0000000000000000000000000000000000000000"
	for _, c := range []struct{ name, from, to string }{{"mint", zero, rvPayTo}, {"burn", rvPayer, zero}} {
		tx := fakechain.Hash("tx " + c.name)
		node.MineTransfer(tx, 10, c.from, c.to, 1_000_000)
		node.Advance(3)
		size := e.Engine.Ledger().Size()
		_, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 0, buyerDE, "")
		if fiscaltest.Code(err) != fiscal.CodeBadRequest || !strings.Contains(err.Error(), c.name) {
			t.Fatalf("%s: %v (%s), want BAD_REQUEST naming the %s", c.name, err, fiscaltest.Code(err), c.name)
		}
		if got := e.Engine.Ledger().Size(); got != size {
			t.Fatalf("%s: %d entries written", c.name, got-size)
		}
	}
}
