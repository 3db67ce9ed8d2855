package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/shopspring/decimal"
)

// withPayload replaces the payment payload's scheme payload ("payload"):
// remove drops the member, else it becomes v.
func (d x402Docs) withPayload(t testing.TB, v any, remove bool) x402Docs {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.payload, &m); err != nil {
		t.Fatal(err)
	}
	if remove {
		delete(m, "payload")
	} else {
		m["payload"] = v
	}
	d.payload = mustMarshal(t, m)
	return d
}

// TestX402RecordWithoutAuthorization: an x402 report whose payment payload
// carries no authorization (examples/x402hook sends none) is recorded from
// the settle response's transaction and the chain: amount, payer, receiver
// and time are the Transfer log's and its block's (verification "verified",
// its facts on the record), and the record's x402 member claims nothing an
// authorization would have said: no transfer method, no nonce. A scheme
// payload that is missing, null or an empty object, and a payment payload
// that is absent or an empty object, are the same report; a full EIP-3009
// payload adds its method and nonce.
func TestX402RecordWithoutAuthorization(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	variants := []struct {
		name   string
		mutate func(d x402Docs) x402Docs
	}{
		{"scheme payload missing", func(d x402Docs) x402Docs { return d.withPayload(t, nil, true) }},
		{"scheme payload null", func(d x402Docs) x402Docs { return d.withPayload(t, nil, false) }},
		{"scheme payload empty", func(d x402Docs) x402Docs { return d.withPayload(t, map[string]any{}, false) }},
		{"no payment payload", func(d x402Docs) x402Docs { d.payload = nil; return d }},
		{"payment payload empty", func(d x402Docs) x402Docs { d.payload = []byte(`{}`); return d }},
		{"EIP-3009 authorization", func(d x402Docs) x402Docs { return d }},
	}
	for i, v := range variants {
		tx := fakechain.Hash("tx no authorization " + v.name)
		amount := int64(1_000_000 + i)
		mineRV(node, tx, uint64(10+i), amount)
		node.Advance(3)
		d := v.mutate(rvDocs(t, tx, amount))
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		r := res.Record
		if res.Outcome != fiscal.Created || r.Verification.Chain != "verified" || r.Verification.Facts == nil {
			t.Fatalf("%s: outcome %v verification %+v", v.name, res.Outcome, r.Verification)
		}
		f := r.Verification.Facts
		if r.Settlement.PayerWallet != f.From || r.Settlement.ReceiverWallet != f.To || f.From != rvPayer || f.To != rvPayTo {
			t.Errorf("%s: settlement %+v, chain facts %+v", v.name, r.Settlement, f)
		}
		if want := decimal.New(amount, -6).String(); r.Settlement.AmountUSDC != want || f.Amount != strconv.FormatInt(amount, 10) {
			t.Errorf("%s: amount %s USDC (chain %s atomic), want %s", v.name, r.Settlement.AmountUSDC, f.Amount, want)
		}
		if r.X402 == nil || r.X402.Version != 2 {
			t.Fatalf("%s: x402 member %+v", v.name, r.X402)
		}
		if v.name == "EIP-3009 authorization" {
			if r.X402.TransferMethod != "eip3009" || r.X402.Nonce != fakechain.Hash("nonce "+tx) {
				t.Errorf("%s: x402 member %+v, want the authorization's method and nonce", v.name, r.X402)
			}
			continue
		}
		if r.X402.TransferMethod != "" || r.X402.Nonce != "" {
			t.Errorf("%s: x402 member %+v claims an authorization the documents do not carry", v.name, r.X402)
		}
		raw := string(res.JSON)
		for _, member := range []string{`"transferMethod"`, `"authorizationNonce"`} {
			if strings.Contains(raw, member) {
				t.Errorf("%s: the stored record has %s", v.name, member)
			}
		}
	}
}

// TestX402ContradictorySettleResponse: a settle response that says
// success:true and names an errorReason or errorMessage reports both
// outcomes, and one that says success:false names a transaction that the
// facilitator says did not settle the payment. Neither is recorded nor
// queued, even when the chain has the transfer: the first is BAD_REQUEST
// at the member that contradicts success, the second NOT_SETTLED.
func TestX402ContradictorySettleResponse(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx contradictory")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	size := e.Ledger().Size()
	for _, c := range []struct {
		set   map[string]any
		code  fiscal.Code
		field string
	}{
		{map[string]any{"errorReason": "unexpected_settle_error"}, fiscal.CodeBadRequest, "/settleResponse/errorReason"},
		{map[string]any{"errorMessage": "receipt not found"}, fiscal.CodeBadRequest, "/settleResponse/errorMessage"},
		{map[string]any{"success": false, "errorReason": "transaction_failed"}, ingest.CodeNotSettled, "/settleResponse/success"},
	} {
		bad := d.withSettle(t, c.set)
		_, err := e.IngestX402(ctx, "acct_0", bad.settle, bad.requirements, bad.payload, buyerDE, "")
		if fe := wantCode(t, err, c.code); fe.Field != c.field {
			t.Errorf("%v: field %s, want %s", c.set, fe.Field, c.field)
		}
		_, err = e.EnqueueX402(ctx, "acct_0", bad.settle, bad.requirements, bad.payload, buyerDE, "")
		wantCode(t, err, c.code)
	}
	if got := e.Ledger().Size(); got != size {
		t.Fatalf("ledger grew from %d to %d on refusals", size, got)
	}
	if _, err := e.IngestStatus(ctx, "acct_0", fiscal.EventID("eip155:8453", tx)); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Fatalf("a refused settlement was queued: %v", err)
	}
	// The same transfer reported consistently is recorded.
	if res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, ""); err != nil || res.Outcome != fiscal.Created {
		t.Fatalf("consistent report: %v", err)
	}
}

// permit2Payload is the scheme payload of the Permit2 transfer method
// (scheme_exact_evm.md §2) for amount from rvPayer to rvPayTo in Base USDC.
func permit2Payload(amount int64) map[string]any {
	return map[string]any{"signature": "0x" + strings.Repeat("cd", 65), "permit2Authorization": map[string]any{
		"permitted": map[string]any{"token": fakechain.USDCBase, "amount": strconv.FormatInt(amount, 10)},
		"from":      rvPayer,
		"spender":   "0x402085c248EeA27D92E8b30b2C58ed07f9E20001",
		"nonce":     "33247007178036348590600198031289925668252061821958005840077069883511451257277",
		"deadline":  "1775811000",
		"witness":   map[string]any{"to": rvPayTo, "validAfter": "1775810400"},
	}}
}

// TestX402Permit2Recorded: an exact payment by the Permit2 method is
// recorded as such (transferMethod "permit2", no EIP-3009 nonce), and, as
// with EIP-3009, its amount, payer and receiver are the token's Transfer
// log's: the proxy's own x402PermitTransfer log beside it is not read, and
// a transaction whose Transfer is not the permit's payment is refused.
func TestX402Permit2Recorded(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	// x402PermitTransfer(address from, address to, uint256 amount, address
	// asset), none indexed, emitted by the x402ExactPermit2Proxy.
	proxyLog := func(index uint64, amount int64) map[string]any {
		return map[string]any{
			"address":  "0x402085c248eea27d92e8b30b2c58ed07f9e20001",
			"topics":   []string{"0xc0482a187556d776f2ef86c70df26debca6009f9d1647f6ce59e2f57fea17dc6"},
			"data":     "0x" + strings.TrimPrefix(fakechain.PadTopic(rvPayer), "0x") + strings.TrimPrefix(fakechain.PadTopic(rvPayTo), "0x") + fmt.Sprintf("%064x", amount) + strings.TrimPrefix(fakechain.PadTopic(fakechain.USDCBase), "0x"),
			"logIndex": fakechain.Quantity(index),
		}
	}
	tx := fakechain.Hash("tx permit2")
	node.Mine(tx, 10, "0x1", fakechain.TransferLog(0, fakechain.USDCBase, rvPayer, rvPayTo, 2_500_000), proxyLog(1, 2_500_000))
	node.Advance(3)
	d := rvDocs(t, tx, 2_500_000).withPayload(t, permit2Payload(2_500_000), false)
	res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record
	if r.X402 == nil || r.X402.TransferMethod != "permit2" || r.X402.Nonce != "" {
		t.Fatalf("x402 member %+v, want transferMethod permit2 and no EIP-3009 nonce", r.X402)
	}
	f := r.Verification.Facts
	if f == nil || f.LogIndex != 0 || f.From != rvPayer || f.To != rvPayTo || f.Amount != "2500000" || r.Settlement.AmountUSDC != "2.5" {
		t.Fatalf("settlement %+v, chain facts %+v", r.Settlement, f)
	}

	// The permit says rvPayer → rvPayTo, the transaction's Transfer moved
	// the money from someone else: the chain wins, nothing is recorded.
	other := fakechain.Hash("tx permit2 other payer")
	node.Mine(other, 20, "0x1", fakechain.TransferLog(0, fakechain.USDCBase, "0x90f79bf6eb2c4f870365e785982e1f101e93b906", rvPayTo, 2_500_000), proxyLog(1, 2_500_000))
	node.Advance(3)
	size := e.Ledger().Size()
	d = rvDocs(t, other, 2_500_000).withPayload(t, permit2Payload(2_500_000), false)
	_, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	wantCode(t, err, fiscal.CodeChainVerifyFailed)
	// An incomplete permit is refused before the chain is asked.
	incomplete := permit2Payload(2_500_000)
	delete(incomplete["permit2Authorization"].(map[string]any), "witness")
	d = rvDocs(t, other, 2_500_000).withPayload(t, incomplete, false)
	_, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if fe := wantCode(t, err, fiscal.CodeBadRequest); fe.Field != "/paymentPayload/payload/permit2Authorization/witness" {
		t.Errorf("incomplete permit: %+v", fe)
	}
	if got := e.Ledger().Size(); got != size {
		t.Fatalf("ledger grew from %d to %d on refusals", size, got)
	}
}
