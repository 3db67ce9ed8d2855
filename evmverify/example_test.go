package evmverify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fiscal402/fiscal402/evmverify"
)

func ExampleVerifier_Verify() {
	rpcURL := exampleBaseNode() // e.g. "https://base-mainnet.g.alchemy.com/v2/<key>"

	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {
			Mode:             evmverify.ModeRequired,
			RPCURLs:          []string{rpcURL},
			MinConfirmations: 3,
		},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// An x402 exact settlement: the facilitator sent the transaction, the
	// payer and payTo are those of the signed authorisation.
	facts, err := v.Verify(context.Background(), evmverify.Claim{
		Network:  evmverify.NetworkBase,
		TxHash:   "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344",
		Payer:    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		Receiver: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Amount:   big.NewInt(1_500_000), // 1.5 USDC
	})
	var notFinal *evmverify.NotFinalError
	switch {
	case errors.As(err, &notFinal):
		fmt.Println("retry later:", notFinal)
		return
	case err != nil:
		log.Fatal(err)
	}
	out, _ := json.MarshalIndent(facts, "", "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "network": "eip155:8453",
	//   "txHash": "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344",
	//   "logIndex": 1,
	//   "blockNumber": 10,
	//   "blockHash": "0x5b0c9e2c5c3d1f6c9a4d8be1d0a0ad6e8c6e1d8ef1e8b6e4a3f9d6b1c2a3e4f5",
	//   "blockTime": "2026-01-01T00:00:20Z",
	//   "confirmations": 3,
	//   "finalized": false,
	//   "token": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
	//   "from": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
	//   "to": "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
	//   "amount": "1500000"
	// }
}

func ExampleRejectedError() {
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{exampleBaseNode()}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, err = v.Verify(context.Background(), evmverify.Claim{
		Network:  evmverify.NetworkBase,
		TxHash:   "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344",
		Payer:    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		Receiver: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Amount:   big.NewInt(2_000_000), // the claim says 2 USDC; 1.5 moved
	})
	var rej *evmverify.RejectedError
	switch {
	case errors.As(err, &rej): // the chain says no: 422 CHAIN_VERIFY_FAILED
		fmt.Println(rej.Reason)
		fmt.Println(rej.Detail)
	case errors.Is(err, evmverify.ErrUnavailable): // no answer: 503, retry
		fmt.Println("unavailable")
	}
	// Output:
	// amount_mismatch
	// log 1 transfers 1500000, claim says 2000000
}

func ExampleVerifier_ReadTransfer() {
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{exampleBaseNode()}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := v.ReadTransfer(context.Background(), evmverify.NetworkBase,
		"0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344", 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.From, "→", f.To, f.Amount, "at", f.BlockTime.Format("2006-01-02 15:04:05"))
	// Output:
	// 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 → 0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc 1500000 at 2026-01-01 00:00:20
}

func ExampleUSDCContract() {
	for _, network := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum, "eip155:84532"} {
		addr, ok := evmverify.USDCContract(network)
		fmt.Println(network, addr, ok)
	}
	// Output:
	// eip155:8453 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913 true
	// eip155:1 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48 true
	// eip155:84532  false
}

// exampleBaseNode serves canned Base JSON-RPC answers for one x402
// settlement (the receipt we observed on a local chain, observedReceipt in
// fuzz_test.go, in block 10, head at 12) so the examples run offline.
func exampleBaseNode() string {
	const (
		tx    = "0x2f1c0cbf5d3a4d7b8c9e0f11223344556677889900aabbccddeeff0011223344"
		block = "0x5b0c9e2c5c3d1f6c9a4d8be1d0a0ad6e8c6e1d8ef1e8b6e4a3f9d6b1c2a3e4f5"
		usdc  = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	)
	answers := map[string]string{
		"eth_chainId":     `"0x2105"`,
		"eth_blockNumber": `"0xc"`,
		"eth_getTransactionReceipt": `{"transactionHash":"` + tx + `","status":"0x1","blockNumber":"0xa","blockHash":"` + block + `",
		  "from":"0x90f79bf6eb2c4f870365e785982e1f101e93b906","to":"` + usdc + `","logs":[
		  {"address":"` + usdc + `","logIndex":"0x0","data":"0x","topics":["0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5",
		   "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8","0x3a1e85bdcb876e262c4a898ba314ca4618c9a428e86263af20cab62e7d0a43c9"]},
		  {"address":"` + usdc + `","logIndex":"0x1","data":"0x000000000000000000000000000000000000000000000000000000000016e360",
		   "topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
		   "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8","0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"]}]}`,
	}
	blocks := map[string]string{
		"0xa":       `{"number":"0xa","hash":"` + block + `","parentHash":"0x` + strings.Repeat("09", 32) + `","timestamp":"0x6955b914"}`,
		"finalized": `null`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		result, ok := answers[req.Method]
		if req.Method == "eth_getBlockByNumber" {
			var ref string
			_ = json.Unmarshal(req.Params[0], &ref)
			result, ok = blocks[ref]
		}
		if !ok {
			result = "null"
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	// The server lives until the example process ends.
	return srv.URL
}
