package evmverify

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// BenchmarkDecodeReceipt decodes the observed receipt (two logs), the
// largest reply of a verification.
func BenchmarkDecodeReceipt(b *testing.B) {
	raw := json.RawMessage(observedReceipt)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := decodeReceipt(raw); err != nil || !ok {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch matches a claim against a receipt of 64 logs where the
// Transfer that backs it is last (a batched settlement).
func BenchmarkMatch(b *testing.B) {
	var logs []Log
	for i := range 63 {
		l, _ := decodeLog(wireFromMap(fakechain.TransferLog(uint64(i), fxUSDCBase, fxOther, fxPayTo, int64(i+1))))
		logs = append(logs, l)
	}
	last, _ := decodeLog(wireFromMap(fakechain.TransferLog(63, fxUSDCBase, fxPayer, fxPayTo, 1_500_000)))
	logs = append(logs, last)
	w := claimedByObservedReceipt()
	b.ReportAllocs()
	for b.Loop() {
		if _, rej := w.match(logs); rej != nil {
			b.Fatal(rej)
		}
	}
}

func wireFromMap(m map[string]any) wireLog {
	raw, _ := json.Marshal(m)
	var w wireLog
	_ = json.Unmarshal(raw, &w)
	return w
}

// BenchmarkVerifyInProcess is a whole Verify (five JSON-RPC round trips)
// against the fake node through an in-process transport: the package's own
// cost without sockets or a real node.
func BenchmarkVerifyInProcess(b *testing.B) {
	node := newFakeNode()
	node.Mine(fxTx, 20, "0x1",
		authUsedLog(4, fxUSDCBase, fxPayer),
		fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000))
	node.Advance(2)
	v, err := NewVerifier(map[string]Policy{NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"http://node.invalid"}}},
		&http.Client{Transport: inProcess{node}})
	if err != nil {
		b.Fatal(err)
	}
	c := Claim{Network: NetworkBase, TxHash: fxTx, Payer: fxPayer, Receiver: fxPayTo, Amount: big.NewInt(1_500_000)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
