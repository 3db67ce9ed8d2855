package httpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// TestUnderlyingProviderVATNumberIsChecked: underlyingProvider.vatNumber
// is a VAT number and is checked as consumerVatNumber is (wire.VATNumber:
// at most 32 printable characters, a 400 naming the member otherwise),
// not as free text of up to 200 characters: such a value was stored on a
// PROCESSED record as the underlying provider's number. A record stored
// with such a value before still reads, lists and replays after a restart.
func TestUnderlyingProviderVATNumberIsChecked(t *testing.T) {
	f := newFixture(t)
	accounts := testAccounts(t)
	accounts[0].Seller.ElectronicInterface = true
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	ok := settlement(map[string]any{"underlyingProvider": map[string]any{"name": "Tool Co", "country": "US", "vatNumber": "DE136695976"}})
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, ok)); r.status != 201 {
		t.Fatalf("a provider with a VAT number: %d %s", r.status, r.body)
	}
	for i, bad := range []string{strings.Repeat("1", 33), strings.Repeat("DE1", 60), "DE136\x7f695976", "DE\t136695976"} {
		body := settlement(map[string]any{
			"txHash":             "0x" + strings.Repeat("0", 63) + string(rune('1'+i)),
			"underlyingProvider": map[string]any{"name": "Tool Co", "vatNumber": bad},
		})
		wantProblem(t, f.do("POST", "/settlements", keyA, mustJSON(t, body)), 400, string(fiscal.CodeBadRequest), "/underlyingProvider/vatNumber")
	}

	// A record stored with such a number (before the check) still reads.
	b, err := f.engine.Books(accounts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	req := fiscal.SettlementRequest{
		AmountUSDC: "2.00", TxHash: "0x" + strings.Repeat("a", 64), Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: "DE",
	}
	p, err := req.Payment(testNow)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Repeat("hello world ", 16)
	p.Buyer.Provider = &vat.Provider{Name: "Tool Co", VATNumber: old}
	res, err := b.SettlePayment(context.Background(), p, fiscal.Verification{}, func(d *fiscal.Draft) { d.ClaimPayment("", p.Fingerprint()) })
	if err != nil {
		t.Fatal(err)
	}
	id := res.Record.ID
	for round := 0; round < 2; round++ {
		r := f.do("GET", "/settlements/"+id, keyA, nil)
		if r.status != 200 || !strings.Contains(string(r.body), strings.TrimSpace(old)) {
			t.Fatalf("round %d: the stored record: %d %.300s", round, r.status, r.body)
		}
		if r := f.do("GET", "/settlements", keyA, nil); r.status != 200 || !strings.Contains(string(r.body), id) {
			t.Fatalf("round %d: the list: %d %.300s", round, r.status, r.body)
		}
		f.reopen()
	}
}
