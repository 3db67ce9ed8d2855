package fakechain_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestFixturesMatchTheCode: the fixtures typed here from their public
// sources are the values evmverify uses, so that a node built from them is
// a Base node to the verifier.
func TestFixturesMatchTheCode(t *testing.T) {
	if fakechain.TransferTopic != evmverify.TransferTopic {
		t.Errorf("TransferTopic %s, evmverify %s", fakechain.TransferTopic, evmverify.TransferTopic)
	}
	if usdc, ok := evmverify.USDCContract(evmverify.NetworkBase); !ok || usdc != fakechain.USDCBase {
		t.Errorf("USDCBase %s, evmverify %s", fakechain.USDCBase, usdc)
	}
	if id, err := evmverify.ChainID(evmverify.NetworkBase); err != nil || id != fakechain.BaseChainID {
		t.Errorf("BaseChainID %d, evmverify %d %v", fakechain.BaseChainID, id, err)
	}
}

// TestNodeAnswers reads the node through evmverify's client: chain id,
// head, dated blocks, the latest, safe and finalized tags, a failing
// finalized tag, receipts, an unknown method, and the call counts.
func TestNodeAnswers(t *testing.T) {
	genesis := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := fakechain.New(genesis)
	tx := fakechain.Hash("tx")
	node.MineTransfer(tx, 5, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", 7)
	node.Advance(2)
	node.SetSafe(6)
	node.SetFinalized(4)
	c, err := evmverify.NewClient(node.Serve(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if id, err := c.ChainID(ctx); err != nil || id != 8453 {
		t.Errorf("ChainID %d, %v", id, err)
	}
	if head, err := c.BlockNumber(ctx); err != nil || head != 7 {
		t.Errorf("BlockNumber %d, %v", head, err)
	}
	for tag, want := range map[string]uint64{evmverify.TagLatest: 7, evmverify.TagSafe: 6, evmverify.TagFinalized: 4} {
		b, found, err := c.BlockByTag(ctx, tag)
		if err != nil || !found || b.Number != want || b.Hash != fakechain.BlockHash(want) || b.Time != uint64(genesis.Unix())+2*want {
			t.Errorf("BlockByTag(%s) %+v, %v, %v; want block %d", tag, b, found, err, want)
		}
	}
	r, found, err := c.TransactionReceipt(ctx, tx)
	if err != nil || !found || r.Status != 1 || r.BlockNumber != 5 || r.BlockHash != fakechain.BlockHash(5) || len(r.Logs) != 1 || r.Logs[0].Address != fakechain.USDCBase {
		t.Errorf("receipt %+v, %v, %v", r, found, err)
	}
	if _, found, err := c.BlockByNumber(ctx, 8); err != nil || found {
		t.Errorf("block above the head: found %v, %v", found, err)
	}
	node.Edit(func(c *fakechain.Chain) { c.FinalizedErr = true })
	var re *evmverify.RPCError
	if _, _, err := c.BlockByTag(ctx, evmverify.TagFinalized); !errors.As(err, &re) || re.Code != -39001 {
		t.Errorf("failing finalized tag: %v", err)
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "web3_clientVersion", nil, &raw); !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("unknown method: %v", err)
	}
	if n := node.Count("eth_getBlockByNumber"); n != 5 {
		t.Errorf("eth_getBlockByNumber counted %d times, want 5", n)
	}
	if n := node.Total(); n != 9 {
		t.Errorf("%d calls counted, want 9", n)
	}
}

// TestNodeMisbehaves: an intercept answers instead of the node, and a hang
// outlasts the client's deadline.
func TestNodeMisbehaves(t *testing.T) {
	node := fakechain.New(time.Unix(0, 0))
	c, err := evmverify.NewClient(node.Serve(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	node.SetIntercept(func(w http.ResponseWriter, _ *http.Request, call fakechain.Call) bool {
		if call.Method != "eth_chainId" {
			return false
		}
		fakechain.ReplyResult(w, call.ID, `"0x1"`)
		return true
	})
	ctx := context.Background()
	if id, err := c.ChainID(ctx); err != nil || id != 1 {
		t.Errorf("intercepted ChainID %d, %v", id, err)
	}
	if head, err := c.BlockNumber(ctx); err != nil || head != 0 {
		t.Errorf("BlockNumber past the intercept %d, %v", head, err)
	}
	node.SetHang(time.Minute)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.BlockNumber(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging node: %v, want the client's deadline", err)
	}
}
