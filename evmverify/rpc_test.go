package evmverify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

func TestParseQuantity(t *testing.T) {
	good := map[string]uint64{
		"0x0": 0, "0x1": 1, "0x2105": 8453, "0xffffffffffffffff": 1<<64 - 1,
		"0x00ff": 255, // padded: odd, accepted (see hex.go)
		"0xABcd": 0xabcd,
	}
	for in, want := range good {
		got, err := parseQuantity(in)
		if err != nil || got != want {
			t.Errorf("parseQuantity(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0x", "1", "0X1", "0x10000000000000000", "0xg", "0x 1", "-0x1", "0x-1"} {
		if got, err := parseQuantity(in); err == nil {
			t.Errorf("parseQuantity(%q) = %d, want error", in, got)
		}
	}
	for _, n := range []uint64{0, 1, 255, 8453, 1<<64 - 1} {
		if got, err := parseQuantity(formatQuantity(n)); err != nil || got != n {
			t.Errorf("round trip %d: %d, %v", n, got, err)
		}
	}
}

func TestParseHex(t *testing.T) {
	if a, err := ParseAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"); err != nil || a != "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913" {
		t.Errorf("ParseAddress = %q, %v", a, err)
	}
	for _, bad := range []string{"", "833589fcd6edb6e08f4c7c32d4f71b54bda02913", "0x833589fcd6edb6e08f4c7c32d4f71b54bda0291",
		"0x833589fcd6edb6e08f4c7c32d4f71b54bda029133", "0x833589fcd6edb6e08f4c7c32d4f71b54bda0291z", "USDC"} {
		if _, err := ParseAddress(bad); err == nil {
			t.Errorf("ParseAddress(%q) succeeded", bad)
		}
	}
	if h, err := ParseTxHash("0X" + strings.Repeat("AB", 32)); err != nil || h != "0x"+strings.Repeat("ab", 32) {
		t.Errorf("ParseTxHash = %q, %v", h, err)
	}
	if b, err := parseData("0x"); err != nil || len(b) != 0 {
		t.Errorf("parseData(0x) = %x, %v", b, err)
	}
	for _, bad := range []string{"", "00", "0x0", "0xzz"} {
		if _, err := parseData(bad); err == nil {
			t.Errorf("parseData(%q) succeeded", bad)
		}
	}
	if a, ok := topicAddress(fakechain.PadTopic(fxPayer)); !ok || a != fxPayer {
		t.Errorf("topicAddress = %q, %v", a, ok)
	}
	// Dirty upper bytes: not an ABI-encoded address.
	if _, ok := topicAddress("0x000000000000000000000001" + fxPayer[2:]); ok {
		t.Error("topicAddress accepted a topic with non-zero padding")
	}
}

func TestChainID(t *testing.T) {
	for in, want := range map[string]uint64{NetworkBase: 8453, NetworkEthereum: 1, "eip155:84532": 84532} {
		if got, err := ChainID(in); err != nil || got != want {
			t.Errorf("ChainID(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "eip155", "eip155:", "eip155:0", "eip155:08453", "eip155:+1", "eip155:-1", "eip155:0x2105",
		"EIP155:1", "base", "solana:1", "eip155:99999999999999999999"} {
		if _, err := ChainID(bad); err == nil {
			t.Errorf("ChainID(%q) succeeded", bad)
		}
	}
}

func TestUSDCContract(t *testing.T) {
	// Addresses as published by Circle (developers.circle.com/stablecoins/
	// usdc-contract-addresses), typed here independently of network.go.
	for network, want := range map[string]string{
		"eip155:8453": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"eip155:1":    "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
	} {
		got, ok := USDCContract(network)
		if !ok || !strings.EqualFold(got, want) || got != strings.ToLower(got) {
			t.Errorf("USDCContract(%s) = %q, %v", network, got, ok)
		}
	}
	for _, n := range []string{"eip155:84532", "eip155:11155111", "base", ""} {
		if _, ok := USDCContract(n); ok {
			t.Errorf("USDCContract(%q) is known", n)
		}
	}
}

func TestDecodeReply(t *testing.T) {
	const id = 7
	cases := []struct {
		name, raw string
		result    string // "" = error expected
		rpcCode   int64  // for error objects
	}{
		{"result", `{"jsonrpc":"2.0","id":7,"result":"0x1"}`, `"0x1"`, 0},
		{"null result", `{"jsonrpc":"2.0","id":7,"result":null}`, `null`, 0},
		{"whitespace", " \n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":true}\n", `true`, 0},
		{"error object", `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"transaction indexing is in progress"}}`, "", -32000},
		{"error with null result", `{"jsonrpc":"2.0","id":7,"result":null,"error":{"code":-32005,"message":"limit"}}`, "", -32005},
		{"both", `{"jsonrpc":"2.0","id":7,"result":"0x1","error":{"code":1,"message":"x"}}`, "", 0},
		{"neither", `{"jsonrpc":"2.0","id":7}`, "", 0},
		{"wrong id", `{"jsonrpc":"2.0","id":8,"result":"0x1"}`, "", 0},
		{"string id", `{"jsonrpc":"2.0","id":"7","result":"0x1"}`, "", 0},
		{"null id", `{"jsonrpc":"2.0","id":null,"result":"0x1"}`, "", 0},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"result":"0x1"}`, "", 0},
		{"no jsonrpc", `{"id":7,"result":"0x1"}`, "", 0},
		{"batch", `[{"jsonrpc":"2.0","id":7,"result":"0x1"}]`, "", 0},
		{"html", `<html><body>502 Bad Gateway</body></html>`, "", 0},
		{"empty", ``, "", 0},
		{"truncated", `{"jsonrpc":"2.0","id":7,"result":"0x`, "", 0},
		{"trailing garbage", `{"jsonrpc":"2.0","id":7,"result":"0x1"} x`, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := decodeReply(id, []byte(c.raw))
			if c.result != "" {
				if err != nil || string(res) != c.result {
					t.Fatalf("decodeReply = %s, %v; want %s", res, err, c.result)
				}
				return
			}
			if err == nil {
				t.Fatalf("decodeReply = %s, want error", res)
			}
			var re *RPCError
			if got := errors.As(err, &re); got != (c.rpcCode != 0) || (got && re.Code != c.rpcCode) {
				t.Errorf("error %v: RPCError %v, want code %d", err, got, c.rpcCode)
			}
		})
	}
	long := `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"` + strings.Repeat("é", 300) + `"}}`
	_, err := decodeReply(id, []byte(long))
	var re *RPCError
	if !errors.As(err, &re) || len(re.Message) > maxRPCMessage+len("…") || !strings.HasSuffix(re.Message, "…") {
		t.Errorf("long message not truncated: %d bytes", len(re.Message))
	}
}

// rawServer answers every call with body and status.
func rawServer(t *testing.T, status int, body func(id string) string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID json.RawMessage }
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &req)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body(string(req.ID)))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func TestClientGarbage(t *testing.T) {
	ok := func(result string) func(string) string {
		return func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}` }
	}
	cases := map[string]struct {
		status int
		body   func(id string) string
	}{
		"http 500 with valid body": {500, ok(`"0x2105"`)},
		"http 429":                 {429, func(string) string { return "slow down" }},
		"html":                     {200, func(string) string { return "<html>gateway</html>" }},
		"number not quantity":      {200, ok(`8453`)},
		"quantity without 0x":      {200, ok(`"2105"`)},
		"overflow":                 {200, ok(`"0x1ffffffffffffffff"`)},
		"null chain id":            {200, ok(`null`)},
		"echoes a wrong id":        {200, func(string) string { return `{"jsonrpc":"2.0","id":999999,"result":"0x2105"}` }},
		"oversized": {200, func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":"0x2105","pad":"` + strings.Repeat("a", MaxReplyBytes) + `"}`
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := NewClient(rawServer(t, tc.status, tc.body), nil)
			if err != nil {
				t.Fatal(err)
			}
			id, err := c.ChainID(context.Background())
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("ChainID = %d, %v; want ErrUnavailable", id, err)
			}
		})
	}
}

func TestClientTypedResults(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 10, "0x1", fakechain.TransferLog(3, fxUSDCBase, fxPayer, fxPayTo, 1_500_000))
	node.Advance(2)
	node.SetFinalized(4)
	c, err := NewClient(node.Serve(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if id, err := c.ChainID(ctx); err != nil || id != 8453 {
		t.Errorf("ChainID = %d, %v", id, err)
	}
	if n, err := c.BlockNumber(ctx); err != nil || n != 12 {
		t.Errorf("BlockNumber = %d, %v", n, err)
	}
	if s, err := c.Syncing(ctx); err != nil || s {
		t.Errorf("Syncing = %v, %v", s, err)
	}
	r, found, err := c.TransactionReceipt(ctx, fxTx)
	if err != nil || !found || r.Status != 1 || r.BlockNumber != 10 || len(r.Logs) != 1 {
		t.Fatalf("TransactionReceipt = %+v, %v, %v", r, found, err)
	}
	if l := r.Logs[0]; l.Index != 3 || l.Address != strings.ToLower(fxUSDCBase) || len(l.Data) != 32 || l.TxHash != fxTx {
		t.Errorf("log %+v", l)
	}
	if _, found, err := c.TransactionReceipt(ctx, fakechain.Hash("unknown")); err != nil || found {
		t.Errorf("unknown receipt: found %v, %v", found, err)
	}
	tx, found, err := c.TransactionByHash(ctx, fxTx)
	if err != nil || !found || tx.Pending || tx.BlockNumber != 10 {
		t.Errorf("TransactionByHash = %+v, %v, %v", tx, found, err)
	}
	b, found, err := c.BlockByTag(ctx, TagFinalized)
	if err != nil || !found || b.Number != 4 || b.Time != fxBlockTime+8 {
		t.Errorf("BlockByTag(finalized) = %+v, %v, %v", b, found, err)
	}
	if _, found, err := c.BlockByNumber(ctx, 99); err != nil || found {
		t.Errorf("BlockByNumber(99): found %v, %v", found, err)
	}
	if _, _, err := c.BlockByTag(ctx, "pending"); err == nil {
		t.Error("BlockByTag(pending) accepted")
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "web3_clientVersion", nil, &raw); !errors.Is(err, ErrUnavailable) {
		t.Errorf("unknown method: %v", err)
	}
}

func TestClientTimeout(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only once the body is consumed does net/http watch the
		// connection and cancel r.Context when the client hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	c, err := NewClient(s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.ChainID(ctx)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want ErrUnavailable and DeadlineExceeded", err)
	}
}

func TestClientRequest(t *testing.T) {
	var got []map[string]any
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want POST json", http.StatusBadRequest)
			return
		}
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		got = append(got, req)
		fakechain.Reply(w, `{"jsonrpc":"2.0","id":`+jsonNumber(req["id"])+`,"result":null}`)
	}))
	t.Cleanup(s.Close)
	c, _ := NewClient(s.URL, nil)
	ctx := context.Background()
	_, _, _ = c.TransactionReceipt(ctx, fxTx)
	_, _, _ = c.BlockByNumber(ctx, 255)
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	first, _ := json.Marshal(got[0])
	second, _ := json.Marshal(got[1])
	if string(first) != `{"id":1,"jsonrpc":"2.0","method":"eth_getTransactionReceipt","params":["`+fxTx+`"]}` {
		t.Errorf("request %s", first)
	}
	if string(second) != `{"id":2,"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0xff",false]}` {
		t.Errorf("request %s", second)
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
