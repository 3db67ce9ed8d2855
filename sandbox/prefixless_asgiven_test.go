package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vies"
)

// TestPreviewStatesNumberAsGiven: the preview's buyer is a fiscal event's
// buyer (README "Compliance preview"). A German business that gave its VAT
// number without the prefix DE is stated by the event with the number read
// under DE and, in vatNumberAsGiven, the number as given (the note
// vat_number_prefix_supplied speaks of both); the preview of the same sale
// states the same two, not the read number alone.
func TestPreviewStatesNumberAsGiven(t *testing.T) {
	const given = "136695976"
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = vies.NewFake()
	e := fiscaltest.Engine(t, cfg)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	buyer := parties.Buyer{Country: "DE", BusinessStatus: "B2B", VATNumber: given}
	seller := parties.Seller{LegalName: fiscaltest.IrishSeller.LegalName, Country: "IE"}
	ev, err := sandbox.New(e, sandbox.Options{}).Evaluate(ctx, acct, sandbox.AccountAgent(acct), sandbox.EvaluateRequest{
		Seller: &seller, Buyer: buyer, Supply: parties.Supply{Kind: "saas"}, AmountUSDC: "11.90", Date: "2026-04-10T14:30:00Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := fiscaltest.Request(1, "11.90", "", "2026-04-10T14:30:00Z")
	res, err := fiscalevent.New(e).Record(ctx, acct, fiscalevent.Request{
		Payment: fiscalevent.Payment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp, PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
		Seller:  seller, Buyer: buyer, Supply: parties.Supply{Kind: "saas"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Buyer.VATNumberAsGiven == "" || ev.Buyer.VATNumberAsGiven != res.Event.Buyer.VATNumberAsGiven || ev.Buyer.VATNumber != res.Event.Buyer.VATNumber {
		t.Errorf("preview states %q as given %q; the event %q as given %q", ev.Buyer.VATNumber, ev.Buyer.VATNumberAsGiven, res.Event.Buyer.VATNumber, res.Event.Buyer.VATNumberAsGiven)
	}
}
