package evmverify

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

func verifier(t testing.TB, p Policy, urls ...string) *Verifier {
	t.Helper()
	if p.Mode == "" {
		p.Mode = ModeRequired
	}
	p.RPCURLs = urls
	v, err := NewVerifier(map[string]Policy{NetworkBase: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// okClaim is the claim the fake receipts back: hash and receiver in upper
// case, since any case must be accepted.
func okClaim(amount int64) Claim {
	return Claim{
		Network:  NetworkBase,
		TxHash:   "0x" + strings.ToUpper(fxTx[2:]),
		Payer:    fxPayer,
		Receiver: "0x" + strings.ToUpper(fxPayTo[2:]),
		Amount:   big.NewInt(amount),
	}
}

func rejected(t *testing.T, err error, reason string) *RejectedError {
	t.Helper()
	var rej *RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("error %v (%T), want RejectedError %s", err, err, reason)
	}
	if rej.Reason != reason {
		t.Fatalf("reason %q (%s), want %q", rej.Reason, rej.Detail, reason)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Fatalf("rejection %v also claims to be unavailable", err)
	}
	return rej
}

func unavailable(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v (%T), want ErrUnavailable", err, err)
	}
	var rej *RejectedError
	if errors.As(err, &rej) {
		t.Fatalf("unavailable error %v carries a rejection", err)
	}
}

func TestVerifyFacts(t *testing.T) {
	node := newFakeNode()
	// An x402 EIP-3009 receipt: AuthorizationUsed at 4, Transfer at 5; the
	// sender is the facilitator.
	node.Mine(fxTx, 20, "0x1",
		authUsedLog(4, fxUSDCBase, fxPayer),
		fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000))
	node.Advance(2)
	node.SetFinalized(20)
	v := verifier(t, Policy{MinConfirmations: 3}, node.Serve(t))

	got, err := v.Verify(context.Background(), okClaim(1_500_000))
	if err != nil {
		t.Fatal(err)
	}
	want := Facts{
		Network:       "eip155:8453",
		TxHash:        fxTx,
		LogIndex:      5,
		BlockNumber:   20,
		BlockHash:     fakechain.BlockHash(20),
		BlockTime:     time.Date(2026, 1, 1, 0, 0, 40, 0, time.UTC),
		Confirmations: 3,
		Finalized:     true,
		Token:         "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
		From:          fxPayer,
		To:            fxPayTo,
		Amount:        "1500000",
	}
	if got != want {
		t.Errorf("facts\n got %+v\nwant %+v", got, want)
	}
	// Never read: the transaction sender and the transaction itself.
	if n := node.Count("eth_getTransactionByHash"); n != 0 {
		t.Errorf("eth_getTransactionByHash called %d times on the happy path", n)
	}
}

func TestVerifyRejections(t *testing.T) {
	impostor := "0x1111111111111111111111111111111111111111"
	idx := func(i uint64) *uint64 { return &i }
	cases := []struct {
		name   string
		status string
		logs   func() []map[string]any
		claim  func(c *Claim)
		reason string
		detail string // substring
	}{
		{"reverted", "0x0", func() []map[string]any { return nil }, nil, ReasonTxReverted, "status 0"},
		{"amount", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 1_000_000)}
		}, nil, ReasonAmountMismatch, "log 0 transfers 1000000, claim says 1500000"},
		{"receiver", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxOther, 1_500_000)}
		}, nil, ReasonReceiverMismatch, "to " + fxOther},
		{"payer is the sender, not the Transfer's from", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 1_500_000)}
		}, func(c *Claim) { c.Payer = fxFacilitator }, ReasonPayerMismatch, "from " + fxPayer},
		{"impostor token", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, impostor, fxPayer, fxPayTo, 1_500_000)}
		}, nil, ReasonAssetMismatch, "emitted by " + impostor},
		{"claimed asset differs", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 1_500_000)}
		}, func(c *Claim) { c.Asset = impostor }, ReasonAssetMismatch, "claim says " + impostor},
		{"two fields differ", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxOther, 7)}
		}, nil, ReasonNoMatchingLog, "1 of them ERC-20 Transfers"},
		{"no logs", "0x1", func() []map[string]any { return nil }, nil, ReasonNoMatchingLog, "0 logs"},
		{"ERC-721 Transfer is not ERC-20", "0x1", func() []map[string]any {
			l := fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 0)
			l["topics"] = append(l["topics"].([]string), fakechain.PadTopic("0x05"+strings.Repeat("0", 38)))
			l["data"] = "0x"
			return []map[string]any{l}
		}, nil, ReasonNoMatchingLog, "0 of them ERC-20 Transfers"},
		{"ambiguous", "0x1", func() []map[string]any {
			return []map[string]any{
				fakechain.TransferLog(2, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
				fakechain.TransferLog(3, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
			}
		}, nil, ReasonAmbiguousLogs, "logs 2, 3"},
		{"pinned log is AuthorizationUsed", "0x1", func() []map[string]any {
			return []map[string]any{authUsedLog(0, fxUSDCBase, fxPayer), fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000)}
		}, func(c *Claim) { c.LogIndex = idx(0) }, ReasonLogNotTransfer, "log 0"},
		{"pinned log absent", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000)}
		}, func(c *Claim) { c.LogIndex = idx(9) }, ReasonNoMatchingLog, "no log with index 9"},
		{"pinned log wrong amount and receiver", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxOther, 1)}
		}, func(c *Claim) { c.LogIndex = idx(1) }, ReasonAmountMismatch, "transfers 1, claim says 1500000; log 1 transfers to"},
		{"pinned log foreign token", "0x1", func() []map[string]any {
			return []map[string]any{fakechain.TransferLog(1, impostor, fxPayer, fxOther, 1)}
		}, func(c *Claim) { c.LogIndex = idx(1) }, ReasonAssetMismatch, "emitted by " + impostor},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := newFakeNode()
			node.Mine(fxTx, 7, tc.status, tc.logs()...)
			v := verifier(t, Policy{}, node.Serve(t))
			c := okClaim(1_500_000)
			if tc.claim != nil {
				tc.claim(&c)
			}
			_, err := v.Verify(context.Background(), c)
			rej := rejected(t, err, tc.reason)
			if !strings.Contains(rej.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", rej.Detail, tc.detail)
			}
		})
	}
}

func TestVerifyAmbiguityResolvedByLogIndex(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 7, "0x1",
		fakechain.TransferLog(2, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		fakechain.TransferLog(3, fxUSDCBase, fxPayer, fxPayTo, 1_500_000))
	v := verifier(t, Policy{}, node.Serve(t))
	for _, i := range []uint64{2, 3} {
		c := okClaim(1_500_000)
		c.LogIndex = &i
		f, err := v.Verify(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if f.LogIndex != i {
			t.Errorf("log index %d, want %d", f.LogIndex, i)
		}
	}
}

func TestVerifyMissingReceipt(t *testing.T) {
	t.Run("unknown to a synced node", func(t *testing.T) {
		node := newFakeNode()
		node.Advance(5)
		v := verifier(t, Policy{}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		rejected(t, err, ReasonTxNotFound)
	})
	t.Run("node syncing", func(t *testing.T) {
		node := newFakeNode()
		node.Edit(func(c *fakechain.Chain) { c.Syncing = true })
		v := verifier(t, Policy{}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		unavailable(t, err)
	})
	t.Run("pending", func(t *testing.T) {
		node := newFakeNode()
		node.Edit(func(c *fakechain.Chain) { c.Txs[fxTx] = map[string]any{"hash": fxTx, "blockNumber": nil} })
		v := verifier(t, Policy{MinConfirmations: 3}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		var nf *NotFinalError
		if !errors.As(err, &nf) || !nf.Pending || nf.Required != 3 || nf.Confirmations != 0 || nf.RetryAfter != 2*time.Second {
			t.Fatalf("error %v, want pending NotFinalError requiring 3", err)
		}
		if errors.Is(err, ErrUnavailable) {
			t.Error("pending reported as unavailable")
		}
	})
	t.Run("transaction answer for another hash", func(t *testing.T) {
		node := newFakeNode()
		node.Edit(func(c *fakechain.Chain) {
			c.Txs[fxTx] = map[string]any{"hash": fakechain.Hash("other"), "blockNumber": nil}
		})
		v := verifier(t, Policy{}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		unavailable(t, err)
	})
	t.Run("mined without receipt (receipt index lags)", func(t *testing.T) {
		node := newFakeNode()
		node.Edit(func(c *fakechain.Chain) { c.Txs[fxTx] = map[string]any{"hash": fxTx, "blockNumber": "0x7"} })
		v := verifier(t, Policy{}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		unavailable(t, err)
	})
	t.Run("geth indexing in progress", func(t *testing.T) {
		node := newFakeNode()
		node.SetIntercept(func(w http.ResponseWriter, _ *http.Request, c fakechain.Call) bool {
			if c.Method != "eth_getTransactionReceipt" {
				return false
			}
			fakechain.ReplyError(w, c.ID, -32000, "transaction indexing is in progress")
			return true
		})
		v := verifier(t, Policy{}, node.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(1))
		unavailable(t, err)
		var re *RPCError
		if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, "indexing") {
			t.Errorf("error %v does not carry the RPC error", err)
		}
	})
}

func TestVerifyDepth(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))
	url := node.Serve(t)

	v := verifier(t, Policy{MinConfirmations: 4}, url)
	_, err := v.Verify(context.Background(), okClaim(5))
	var nf *NotFinalError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want NotFinalError", err)
	}
	if nf.Confirmations != 1 || nf.Required != 4 || nf.Pending || nf.Facts.BlockNumber != 10 || nf.Facts.Amount != "5" {
		t.Errorf("NotFinalError %+v", nf)
	}
	if nf.RetryAfter != 6*time.Second { // 3 missing Base blocks of 2 s
		t.Errorf("RetryAfter %v, want 6s", nf.RetryAfter)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Error("NotFinalError is also ErrUnavailable")
	}

	node.Advance(3) // head 13: confirmations 4
	f, err := v.Verify(context.Background(), okClaim(5))
	if err != nil || f.Confirmations != 4 || f.Finalized {
		t.Fatalf("facts %+v, err %v", f, err)
	}

	fin := verifier(t, Policy{RequireFinalized: true}, url)
	_, err = fin.Verify(context.Background(), okClaim(5))
	if !errors.As(err, &nf) || nf.Finalized || !nf.RequireFinalized || nf.Confirmations != 4 {
		t.Fatalf("error %v, want not finalized (nothing finalized yet)", err)
	}
	if nf.RetryAfter != 20*time.Minute { // Base finality, no finalized head known
		t.Errorf("RetryAfter %v, want 20m", nf.RetryAfter)
	}
	node.SetFinalized(7)
	_, err = fin.Verify(context.Background(), okClaim(5))
	if !errors.As(err, &nf) || nf.Finalized {
		t.Fatalf("error %v, want not finalized (finalized 7 < block 10)", err)
	}
	if nf.RetryAfter != 6*time.Second { // finalized head 3 blocks behind
		t.Errorf("RetryAfter %v, want 6s", nf.RetryAfter)
	}
	node.SetFinalized(10)
	if f, err := fin.Verify(context.Background(), okClaim(5)); err != nil || !f.Finalized {
		t.Fatalf("facts %+v, err %v, want finalized", f, err)
	}

	// A node that cannot name its finalized block: harmless unless required.
	node.Edit(func(c *fakechain.Chain) { c.FinalizedErr = true })
	if f, err := v.Verify(context.Background(), okClaim(5)); err != nil || f.Finalized {
		t.Fatalf("facts %+v, err %v", f, err)
	}
	_, err = fin.Verify(context.Background(), okClaim(5))
	unavailable(t, err)
}

func TestVerifyBlockHashRecheck(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))
	node.Advance(1)
	// The chain reorganises between the receipt and the block read: block
	// 10 now has another hash.
	node.Edit(func(c *fakechain.Chain) { c.Blocks[10]["hash"] = fakechain.Hash("block 10 on the other fork") })
	v := verifier(t, Policy{}, node.Serve(t))
	_, err := v.Verify(context.Background(), okClaim(5))
	unavailable(t, err)
	if !errors.Is(err, ErrReorg) {
		t.Errorf("error %v, want ErrReorg", err)
	}

	node.Edit(func(c *fakechain.Chain) { delete(c.Blocks, 10) }) // the block vanished altogether
	_, err = v.Verify(context.Background(), okClaim(5))
	if !errors.Is(err, ErrReorg) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("error %v, want ErrReorg and ErrUnavailable", err)
	}
}

func TestVerifyInconsistentNode(t *testing.T) {
	receipt := func(c *fakechain.Chain) map[string]any { return c.Receipts[fxTx] }
	log0 := func(c *fakechain.Chain) map[string]any { return receipt(c)["logs"].([]map[string]any)[0] }
	cases := map[string]struct {
		setup func(c *fakechain.Chain)
		want  string
	}{
		"head below receipt":    {func(c *fakechain.Chain) { c.Head = 3 }, "head 3 is below the receipt's block 10"},
		"receipt of another tx": {func(c *fakechain.Chain) { receipt(c)["transactionHash"] = fakechain.Hash("other") }, "receipt is for transaction"},
		"log of another tx":     {func(c *fakechain.Chain) { log0(c)["transactionHash"] = fakechain.Hash("other") }, "log 0 belongs to transaction"},
		"log in another block":  {func(c *fakechain.Chain) { log0(c)["blockHash"] = fakechain.Hash("other") }, "log 0 is in block"},
		"log removed":           {func(c *fakechain.Chain) { log0(c)["removed"] = true }, "log 0 is marked removed"},
		"status 0x2":            {func(c *fakechain.Chain) { receipt(c)["status"] = "0x2" }, `status "0x2" is neither`},
		"no status":             {func(c *fakechain.Chain) { delete(receipt(c), "status") }, "pre-EIP-658"},
		"no logs":               {func(c *fakechain.Chain) { delete(receipt(c), "logs") }, "no logs array"},
		"duplicate log index": {func(c *fakechain.Chain) {
			receipt(c)["logs"] = append(receipt(c)["logs"].([]map[string]any), log0(c))
		}, "duplicate logIndex 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			node := newFakeNode()
			node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))
			node.Edit(tc.setup)
			v := verifier(t, Policy{}, node.Serve(t))
			_, err := v.Verify(context.Background(), okClaim(5))
			unavailable(t, err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestVerifyWrongChain(t *testing.T) {
	node := newFakeNode()
	node.SetChainID(1)
	node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))
	v := verifier(t, Policy{}, node.Serve(t))
	_, err := v.Verify(context.Background(), okClaim(5))
	rej := rejected(t, err, ReasonWrongChain)
	if strings.Contains(rej.Detail, "127.0.0.1") {
		t.Errorf("client-facing detail %q names the operator's endpoint", rej.Detail)
	}
	if !strings.Contains(rej.Detail, "chain id 1,") || node.Count("eth_getTransactionReceipt") != 0 {
		t.Errorf("detail %q, receipt calls %d", rej.Detail, node.Count("eth_getTransactionReceipt"))
	}
}

func TestVerifyFailover(t *testing.T) {
	good := newFakeNode()
	good.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))

	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	stale := newFakeNode() // one block behind: knows nothing of the tx
	stale.Advance(9)

	wrong := newFakeNode()
	wrong.SetChainID(84532)

	slow := newFakeNode()
	slow.SetIntercept(func(_ http.ResponseWriter, r *http.Request, _ fakechain.Call) bool {
		<-r.Context().Done() // hangs until the client gives up
		return true
	})

	cases := map[string]func(t testing.TB) string{
		"connection refused":      func(testing.TB) string { return downURL },
		"stale node: not found":   stale.Serve,
		"endpoint of wrong chain": wrong.Serve,
		"timeout":                 slow.Serve,
		"http 502": func(t testing.TB) string {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
			}))
			t.Cleanup(s.Close)
			return s.URL
		},
	}
	for name, first := range cases {
		t.Run(name, func(t *testing.T) {
			v := verifier(t, Policy{Timeout: 300 * time.Millisecond}, first(t), good.Serve(t))
			f, err := v.Verify(context.Background(), okClaim(5))
			if err != nil {
				t.Fatal(err)
			}
			if f.BlockNumber != 10 {
				t.Errorf("facts %+v", f)
			}
		})
	}

	t.Run("definitive answer stops the search", func(t *testing.T) {
		first := newFakeNode()
		first.Mine(fxTx, 10, "0x0")
		second := newFakeNode()
		v := verifier(t, Policy{}, first.Serve(t), second.Serve(t))
		_, err := v.Verify(context.Background(), okClaim(5))
		rejected(t, err, ReasonTxReverted)
		if n := second.Total(); n != 0 {
			t.Errorf("second endpoint called %d times after a definitive answer", n)
		}
	})
	t.Run("all down", func(t *testing.T) {
		v := verifier(t, Policy{Timeout: 200 * time.Millisecond}, downURL, slow.Serve(t))
		start := time.Now()
		_, err := v.Verify(context.Background(), okClaim(5))
		unavailable(t, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not carry the timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v; the per-endpoint timeout did not bound it", d)
		}
	})
	t.Run("not found beats unavailable", func(t *testing.T) {
		v := verifier(t, Policy{}, stale.Serve(t), downURL)
		_, err := v.Verify(context.Background(), okClaim(5))
		rejected(t, err, ReasonTxNotFound)
	})
	t.Run("unavailable beats wrong chain", func(t *testing.T) {
		v := verifier(t, Policy{}, wrong.Serve(t), downURL)
		_, err := v.Verify(context.Background(), okClaim(5))
		unavailable(t, err)
	})
	t.Run("caller's context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		v := verifier(t, Policy{}, good.Serve(t))
		_, err := v.Verify(ctx, okClaim(5))
		unavailable(t, err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not carry context.Canceled", err)
		}
	})
}

func TestErrorsHideRPCSecrets(t *testing.T) {
	const secret = "sEcReT-aPi-KeY"
	node := newFakeNode()
	node.SetIntercept(func(w http.ResponseWriter, _ *http.Request, _ fakechain.Call) bool {
		fakechain.Reply(w, "not json")
		return true
	})
	base := node.Serve(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	v := verifier(t, Policy{}, base+"/v2/"+secret+"?key="+secret, downURL+"/"+secret)
	_, err := v.Verify(context.Background(), okClaim(5))
	unavailable(t, err)
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the URL secret: %v", err)
	}
	if !strings.Contains(err.Error(), strings.TrimPrefix(base, "http://")) {
		t.Errorf("error %v does not name the endpoint host", err)
	}
	if _, err := NewVerifier(map[string]Policy{NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"ftp://x/" + secret}}}, nil); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("NewVerifier error %v", err)
	}
}

func TestClaimValidation(t *testing.T) {
	node := newFakeNode()
	v := verifier(t, Policy{}, node.Serve(t))
	cases := map[string]struct {
		mutate func(c *Claim)
		field  string
	}{
		"short hash":     {func(c *Claim) { c.TxHash = fxTx[:65] }, "TxHash"},
		"hash no prefix": {func(c *Claim) { c.TxHash = fxTx[2:] + "00" }, "TxHash"},
		"hash non-hex":   {func(c *Claim) { c.TxHash = fxTx[:65] + "g" }, "TxHash"},
		"payer":          {func(c *Claim) { c.Payer = "0x1234" }, "Payer"},
		"receiver":       {func(c *Claim) { c.Receiver = "" }, "Receiver"},
		"asset":          {func(c *Claim) { c.Asset = "USDC" }, "Asset"},
		"nil amount":     {func(c *Claim) { c.Amount = nil }, "Amount"},
		"zero amount":    {func(c *Claim) { c.Amount = big.NewInt(0) }, "Amount"},
		"negative":       {func(c *Claim) { c.Amount = big.NewInt(-5) }, "Amount"},
		"over uint256":   {func(c *Claim) { c.Amount = new(big.Int).Lsh(big.NewInt(1), 256) }, "Amount"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := okClaim(5)
			tc.mutate(&c)
			_, err := v.Verify(context.Background(), c)
			var ce *ClaimError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("error %v, want ClaimError on %s", err, tc.field)
			}
		})
	}
	if n := node.Total(); n != 0 {
		t.Errorf("malformed claims reached the node %d times", n)
	}
}

func TestNetworks(t *testing.T) {
	node := newFakeNode()
	v, err := NewVerifier(map[string]Policy{
		NetworkBase:     {Mode: ModeRequired, RPCURLs: []string{node.Serve(t)}},
		NetworkEthereum: {Mode: ModeOff},
		"eip155:84532":  {Mode: ModeOff, RPCURLs: []string{node.Serve(t)}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for network, want := range map[string]Mode{NetworkBase: ModeRequired, NetworkEthereum: ModeOff, "eip155:10": ModeOff} {
		if got := v.Mode(network); got != want {
			t.Errorf("Mode(%s) = %q, want %q", network, got, want)
		}
	}
	if got := strings.Join(v.Networks(), ","); got != "eip155:1,eip155:8453,eip155:84532" {
		t.Errorf("Networks() = %s", got)
	}

	ctx := context.Background()
	c := okClaim(5)
	c.Network = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
	_, err = v.Verify(ctx, c)
	rejected(t, err, ReasonUnsupportedNetwork)

	c.Network = "eip155:84532" // Base Sepolia: USDC deliberately unknown
	_, err = v.Verify(ctx, c)
	rejected(t, err, ReasonUnsupportedNetwork)

	c.Network = NetworkEthereum // policy without endpoints
	_, err = v.Verify(ctx, c)
	if !errors.Is(err, ErrNotConfigured) || errors.Is(err, ErrUnavailable) {
		t.Errorf("error %v, want ErrNotConfigured", err)
	}
	c.Network = "eip155:10" // no policy at all
	c.Asset = fxOther
	if _, err = v.Verify(ctx, c); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("error %v, want ErrNotConfigured", err)
	}
	// A named asset on a network without known USDC, with an endpoint: the
	// verifier asks (ModeOff does not stop Verify) and the fake node,
	// serving chain 8453, is the wrong chain for 84532.
	c.Network = "eip155:84532"
	_, err = v.Verify(ctx, c)
	rejected(t, err, ReasonWrongChain)
}

func TestNewVerifierRefuses(t *testing.T) {
	cases := map[string]map[string]Policy{
		"not caip-2":         {"base": {Mode: ModeOff}},
		"leading zero":       {"eip155:08453": {Mode: ModeOff}},
		"chain id 0":         {"eip155:0": {Mode: ModeOff}},
		"empty mode":         {NetworkBase: {RPCURLs: []string{"http://127.0.0.1:1"}}},
		"unknown mode":       {NetworkBase: {Mode: "optional"}},
		"required, no urls":  {NetworkBase: {Mode: ModeRequired}},
		"relative url":       {NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"/rpc"}}},
		"ws url":             {NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"wss://node"}}},
		"negative timeout":   {NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"http://a"}, Timeout: -1}},
		"uint64 overflowing": {"eip155:18446744073709551616": {Mode: ModeOff}},
	}
	for name, p := range cases {
		if _, err := NewVerifier(p, nil); err == nil {
			t.Errorf("%s: NewVerifier accepted %+v", name, p)
		}
	}
}

func TestReadTransfer(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 10, "0x1",
		authUsedLog(0, fxUSDCBase, fxPayer),
		fakechain.TransferLog(1, fxUSDCBase, fxPayer, fxPayTo, 1_500_000),
		fakechain.TransferLog(2, "0x1111111111111111111111111111111111111111", fxPayer, fxPayTo, 9))
	v := verifier(t, Policy{}, node.Serve(t))
	ctx := context.Background()

	f, err := v.ReadTransfer(ctx, NetworkBase, fxTx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.From != fxPayer || f.To != fxPayTo || f.Amount != "1500000" || f.LogIndex != 1 || f.Token != strings.ToLower(fxUSDCBase) {
		t.Errorf("facts %+v", f)
	}
	_, err = v.ReadTransfer(ctx, NetworkBase, fxTx, 0)
	rejected(t, err, ReasonLogNotTransfer)
	_, err = v.ReadTransfer(ctx, NetworkBase, fxTx, 2)
	rejected(t, err, ReasonAssetMismatch)
	_, err = v.ReadTransfer(ctx, NetworkBase, fxTx, 3)
	rejected(t, err, ReasonNoMatchingLog)
	_, err = v.ReadTransfer(ctx, NetworkBase, "0x12", 1)
	var ce *ClaimError
	if !errors.As(err, &ce) || ce.Field != "TxHash" {
		t.Errorf("error %v, want ClaimError TxHash", err)
	}
	_, err = v.ReadTransfer(ctx, "eip155:84532", fxTx, 1)
	rejected(t, err, ReasonUnsupportedNetwork)
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&RejectedError{Reason: ReasonTxReverted}, "evmverify: claim rejected: tx_reverted"},
		{&RejectedError{Reason: ReasonAmountMismatch, Detail: "log 1 transfers 1, claim says 2"},
			"evmverify: claim rejected: amount_mismatch: log 1 transfers 1, claim says 2"},
		{&NotFinalError{Pending: true, Required: 1}, "evmverify: not final: transaction pending (no receipt yet)"},
		{&NotFinalError{Confirmations: 2, Required: 5}, "evmverify: not final: 2 of 5 confirmations"},
		{&NotFinalError{Confirmations: 9, Required: 5, RequireFinalized: true, Facts: Facts{BlockNumber: 77}},
			"evmverify: not final: block 77 not yet finalized (9 confirmations)"},
		{&ClaimError{Field: "Payer", Err: errors.New("bad")}, "evmverify: claim Payer: bad"},
		{&RPCError{Code: -32000, Message: "x"}, "json-rpc error -32000: x"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%T: %q, want %q", c.err, got, c.want)
		}
	}
}

// TestVerifyTime: a claim's Time must lie within MaxTimeSkew of its
// block's time, either way; a claim without Time is not dated.
func TestVerifyTime(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(0, fxUSDCBase, fxPayer, fxPayTo, 5))
	v := verifier(t, Policy{}, node.Serve(t))
	block := time.Unix(fxBlockTime+20, 0).UTC()
	for _, c := range []struct {
		at time.Time
		ok bool
	}{
		{time.Time{}, true},
		{block, true},
		{block.Add(MaxTimeSkew), true},
		{block.Add(-MaxTimeSkew), true},
		{block.Add(MaxTimeSkew + time.Second), false},
		{block.Add(-MaxTimeSkew - time.Second), false},
		{block.Add(48 * time.Hour), false},
	} {
		claim := okClaim(5)
		claim.Time = c.at
		f, err := v.Verify(context.Background(), claim)
		if c.ok {
			if err != nil || !f.BlockTime.Equal(block) {
				t.Errorf("time %v: %+v %v", c.at, f, err)
			}
			continue
		}
		rej := rejected(t, err, ReasonTimeMismatch)
		if !strings.Contains(rej.Detail, "block 10 is dated 2026-01-01T00:00:20Z") {
			t.Errorf("detail %q", rej.Detail)
		}
	}
}
