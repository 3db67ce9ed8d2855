package refunds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// paymentMembers are the members of a refund's payment in the order the
// document writes them (the order of fiscal.RecordPayment's, whose
// members it states).
var paymentMembers = []string{"protocol", "network", "txHash", "logIndex", "asset", "assetContract", "scheme", "amountUsdc", "timestamp", "payerWallet", "receiverWallet"}

// objectMembers returns the member names of the JSON object raw, in
// order, and its members decoded.
func objectMembers(t *testing.T, raw []byte) ([]string, map[string]any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var names []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return names, m
}

// TestRefundPaymentShape: a refund's payment, as the document states it
// (and the API and the event serve it), byte-level: the members of the
// sale's payment in the sale's order, the refunded amount from the
// settlement's receiver back to its payer at the refund's time; the
// refund transfer's network and hash when the refund names one, no
// txHash (nor logIndex) when it does not; and the Go value (Refund.Payment)
// reads the same. It holds before and after RefundPayment stopped
// restating fiscal.RecordPayment's members.
func TestRefundPaymentShape(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	sale := settleOK(t, b, request(910, "11.90", "DE", "2026-04-10T14:30:00Z"))
	refundTx := fiscaltest.TxHash(911)
	for _, c := range []struct {
		name string
		req  refunds.Request
	}{
		{"without a transfer", refunds.Request{AmountUSDC: "2.00"}},
		{"with a transfer", refunds.Request{AmountUSDC: "3.00", Transaction: &refunds.Transaction{Network: sale.Settlement.Network, TxHash: refundTx}}},
	} {
		res, err := refunds.Create(ctx, b, sale.ID, c.req, "")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		stored, err := refunds.Document(ctx, b, sale.ID, res.Refund.ID)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			CreatedAt string          `json:"createdAt"`
			Payment   json.RawMessage `json:"payment"`
		}
		if err := json.Unmarshal(stored, &doc); err != nil {
			t.Fatal(err)
		}
		names, got := objectMembers(t, doc.Payment)
		want := slices.Clone(paymentMembers)
		want = slices.DeleteFunc(want, func(n string) bool { return n == "logIndex" }) // no transfer read on chain
		if c.req.Transaction == nil {
			want = slices.DeleteFunc(want, func(n string) bool { return n == "txHash" })
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: payment members %v, want %v", c.name, names, want)
		}
		s := sale.Settlement
		wantValues := map[string]any{"protocol": s.Protocol, "network": s.Network, "asset": s.Asset, "assetContract": s.AssetContract,
			"scheme": s.Scheme, "amountUsdc": dec(c.req.AmountUSDC).StringFixed(6), "timestamp": doc.CreatedAt,
			"payerWallet": s.ReceiverWallet, "receiverWallet": s.PayerWallet}
		if c.req.Transaction != nil {
			wantValues["txHash"] = refundTx
		}
		for k, v := range wantValues {
			if got[k] != v {
				t.Errorf("%s: payment.%s = %v, want %v", c.name, k, got[k], v)
			}
		}
		p := res.Refund.Payment
		goView := fiscal.RecordPayment{Protocol: p.Protocol, Network: p.Network, TxHash: p.TxHash, LogIndex: p.LogIndex, Asset: p.Asset,
			AssetContract: p.AssetContract, Scheme: p.Scheme, AmountUSDC: p.AmountUSDC, Timestamp: p.Timestamp, PayerWallet: p.PayerWallet, ReceiverWallet: p.ReceiverWallet}
		if goView.TxHash != wantValues["txHash"] && !(goView.TxHash == "" && wantValues["txHash"] == nil) || goView.PayerWallet != s.ReceiverWallet || goView.AmountUSDC != wantValues["amountUsdc"] {
			t.Errorf("%s: Refund.Payment %+v", c.name, p)
		}
		var back refunds.RefundPayment
		if err := json.Unmarshal(doc.Payment, &back); err != nil || back != p {
			t.Errorf("%s: the payment read back %+v (%v), want %+v", c.name, back, err, p)
		}
	}
}
