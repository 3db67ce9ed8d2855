package ingest_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestFailedEntryLogsNoWalletOrTransaction: README "Operations", Logs: no
// buyer's wallet reaches the server's log, and the receipt keeps the
// transaction hash and the wallets out of clear (they find the buyer on
// chain). A queued x402 payment the chain contradicts fails for good, and
// its log line says so with its id, account and code; the detail that
// names the wallets and the transaction stays in the entry's lastError,
// which only the account reads (GET /v1/x402/settlements/{id}).
func TestFailedEntryLogsNoWalletOrTransaction(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	var logs bytes.Buffer
	svc := newService(t, e.Engine, ingest.Options{NoQueue: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	tx := fakechain.Hash("tx from another wallet")
	other := "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc"
	node.MineTransfer(tx, 10, other, rvPayTo, 1_000_000) // the chain's payer is not the documents'
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	res, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := svc.Process(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := svc.Status(ctx, "acct_0", res.Queued.ID)
	if st.State != ingest.StateFailed || st.LastError == nil || st.LastError.Code != fiscal.CodeChainVerifyFailed {
		t.Fatalf("status %+v lastError %+v, want failed with CHAIN_VERIFY_FAILED", st, st.LastError)
	}
	if !strings.Contains(logs.String(), "x402 ingest failed") {
		t.Fatalf("no log line of the failure:\n%s", logs.String())
	}
	lower := strings.ToLower(logs.String())
	for _, v := range []string{other, rvPayer, rvPayTo, tx, strings.TrimPrefix(tx, "0x")} {
		if strings.Contains(lower, strings.ToLower(v)) {
			t.Errorf("the log holds %s:\n%s", v, logs.String())
		}
	}
}
