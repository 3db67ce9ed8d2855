package httpserver_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestChainUnavailableIsNotAnErrorAndNamesNoBlock: a 503 CHAIN_UNAVAILABLE
// is the expected answer while a transfer is not final yet, or while the
// chain's node cannot give a trustworthy answer (here: it reorganised
// between two calls); the client retries after Retry-After. It was
// logged at ERROR, as a server failure, with evmverify's cause, which
// names the block number and hash of the payer's transfer: with them the
// transfer, hence the wallets, is found on chain, and README "Logs"
// promises that no wallet reaches the log. The line is now below ERROR
// and carries neither the transaction's hash nor its block's number or
// hash.
func TestChainUnavailableIsNotAnErrorAndNamesNoBlock(t *testing.T) {
	const block = 5123
	s := settlement(nil)
	ts, _ := time.Parse(time.RFC3339, s["timestamp"].(string))
	tx, payer, receiver := s["txHash"].(string), s["payerWallet"].(string), s["receiverWallet"].(string)
	for _, tc := range []struct {
		name      string
		advance   uint64 // blocks on top of the transfer's
		reorg     bool   // the node's block differs from the receipt's
		finalized bool   // the policy requires a finalized block (the node knows none)
	}{
		{"not final yet", 3, false, true},
		{"reorganised between calls", 20, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := fakechain.New(ts.Add(-time.Duration(block*fakechain.BlockSeconds) * time.Second))
			node.MineTransfer(tx, block, payer, receiver, 11_900_000)
			node.Advance(tc.advance)
			if tc.reorg {
				node.Edit(func(c *fakechain.Chain) { c.Blocks[block]["hash"] = fakechain.Hash("another block") })
			}
			var logs syncBuffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
				evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{node.Serve(t)}, Timeout: 2 * time.Second, RequireFinalized: tc.finalized},
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			e, err := fiscal.New(fiscal.Config{
				Dir: t.TempDir(), Accounts: testAccounts(t), Chain: v,
				Clock: func() time.Time { return chainNow }, Rand: &detRand{seed: "chainlog"}, Logger: logger,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			srv := httptest.NewServer(newHandlerWith(t, httpserver.Services{Engine: e}, httpserver.Options{Logger: logger}))
			t.Cleanup(srv.Close)
			req, _ := http.NewRequest("POST", srv.URL+"/settlements", bytes.NewReader(mustJSON(t, s)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Service-Key", keyA)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var problem struct{ Code string }
			json.NewDecoder(resp.Body).Decode(&problem)
			resp.Body.Close()
			if resp.StatusCode != 503 || problem.Code != string(fiscal.CodeChainUnavailable) {
				t.Fatalf("answer %d %s, want 503 %s", resp.StatusCode, problem.Code, fiscal.CodeChainUnavailable)
			}
			out := logs.String()
			if strings.Contains(out, `"level":"ERROR"`) {
				t.Errorf("a 503 CHAIN_UNAVAILABLE, an expected retry, is logged at ERROR:\n%s", out)
			}
			for _, id := range []string{strconv.Itoa(block), fakechain.BlockHash(block), strings.TrimPrefix(fakechain.BlockHash(block), "0x"),
				fakechain.Hash("another block"), strings.ToLower(tx), strings.ToLower(payer), strings.ToLower(receiver)} {
				if strings.Contains(strings.ToLower(out), strings.ToLower(id)) {
					t.Errorf("the log names %s, which finds the payer's transfer on chain:\n%s", id, out)
				}
			}
		})
	}
}
