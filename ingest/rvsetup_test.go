package ingest_test

import (
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// The review tests run against an in-process Base node (internal/fakechain;
// anvil is not installed here).

const (
	rvPayer = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
	rvPayTo = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
)

// block times: 2026-04-10T09:00:00Z + 2 s per block (an ECB rate day)
var rvGenesis = time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC).Unix()

// newRVNode is a fake Base node from rvGenesis and its URL, closed with the
// test.
func newRVNode(t testing.TB) (*fakechain.Node, string) {
	n := fakechain.New(time.Unix(rvGenesis, 0))
	return n, n.Serve(t)
}

// rvSetup is a fake node and an engine against it (policy p, a fresh
// directory, the clock of rvClock), closed with the test.
func rvSetup(t *testing.T, p evmverify.Policy) (*fakechain.Node, *movingClock, *env) {
	t.Helper()
	node, url := newRVNode(t)
	clock := rvClock()
	e := rvEngine(t, t.TempDir(), url, p, clock)
	t.Cleanup(func() { e.Close() })
	return node, clock, e
}

// rvEngine is an engine on dir against the fake node (Base, mode required).
func rvEngine(t testing.TB, dir, url string, p evmverify.Policy, clock *movingClock) *env {
	t.Helper()
	return engineAt(t, dir, baseVerifier(t, url, p), clock)
}

func rvDocs(t testing.TB, tx string, amount int64) x402Docs {
	return sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: rvPayTo, nonce: fakechain.Hash("nonce " + tx), amount: amount})
}

// mineRV mines the transferWithAuthorization an rvDocs report describes:
// the token's AuthorizationUsed(rvPayer, the report's nonce) at log 0, then
// its Transfer from rvPayer to rvPayTo at log 1 (EIP-3009,
// https://eips.ethereum.org/EIPS/eip-3009; FiatToken emits them in this
// order).
func mineRV(node *fakechain.Node, tx string, number uint64, amount int64) {
	node.Mine(tx, number, "0x1",
		fakechain.AuthorizationUsedLog(0, fakechain.USDCBase, rvPayer, fakechain.Hash("nonce "+tx)),
		fakechain.TransferLog(1, fakechain.USDCBase, rvPayer, rvPayTo, amount))
}
