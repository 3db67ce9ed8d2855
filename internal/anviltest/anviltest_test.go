package anviltest

import (
	"encoding/hex"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestEncodeArgs(t *testing.T) {
	// transfer(0x3c44…93bc, 1500000): PayTo, 1.5 USDC, ABI-encoded by hand
	// (https://docs.soliditylang.org/en/latest/abi-spec.html).
	got, err := encodeArgs(Address(accountPayTo), big.NewInt(1_500_000))
	if err != nil {
		t.Fatal(err)
	}
	want := "0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc" +
		"000000000000000000000000000000000000000000000000000000000016e360"
	if hex.EncodeToString(got) != want {
		t.Errorf("encodeArgs =\n%x\nwant\n%s", got, want)
	}

	// A dynamic string after a static word: offset 0x40, length, padded bytes.
	got, err = encodeArgs("USDC", uint64(6))
	if err != nil {
		t.Fatal(err)
	}
	want = "0000000000000000000000000000000000000000000000000000000000000040" +
		"0000000000000000000000000000000000000000000000000000000000000006" +
		"0000000000000000000000000000000000000000000000000000000000000004" +
		"5553444300000000000000000000000000000000000000000000000000000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("encodeArgs(string, uint) =\n%x\nwant\n%s", got, want)
	}

	// An empty address[] then a string: two offsets, the array's length 0.
	got, err = encodeArgs([]Address{}, "USDC")
	if err != nil {
		t.Fatal(err)
	}
	want = "0000000000000000000000000000000000000000000000000000000000000040" +
		"0000000000000000000000000000000000000000000000000000000000000060" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000004" +
		"5553444300000000000000000000000000000000000000000000000000000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("encodeArgs(address[], string) =\n%x\nwant\n%s", got, want)
	}

	for _, bad := range [][]any{{Address("0x12")}, {big.NewInt(-1)}, {3.5}} {
		if _, err := encodeArgs(bad...); err == nil {
			t.Errorf("encodeArgs(%v) succeeded", bad)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	if err := checkArgs("transfer(address,uint256)", []any{Address(accountPayTo), uint64(1)}); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		sig  string
		args []any
	}{
		{"transfer(address,uint256)", []any{Address(accountPayTo)}},
		{"transfer(address,uint256)", []any{uint64(1), Address(accountPayTo)}},
		{"decimals()", []any{uint64(1)}},
		{"broken", nil},
	} {
		if err := checkArgs(c.sig, c.args); err == nil {
			t.Errorf("checkArgs(%s, %v) succeeded", c.sig, c.args)
		}
	}
}

func TestChain(t *testing.T) {
	genesis := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := StartWith(t, Options{GenesisTime: genesis})

	if got := c.BalanceOf(t, USDC, c.Payer()); got.Cmp(big.NewInt(PayerFunds)) != 0 {
		t.Fatalf("payer USDC = %s, want %d", got, PayerFunds)
	}
	if got := c.BalanceOf(t, c.Impostor(), c.Payer()); got.Cmp(big.NewInt(PayerFunds)) != 0 {
		t.Fatalf("payer impostor = %s, want %d", got, PayerFunds)
	}
	if c.Impostor() == USDC || !strings.HasPrefix(c.Impostor(), "0x") {
		t.Fatalf("impostor %q", c.Impostor())
	}
	var genesisBlock struct{ Timestamp string }
	c.Call(t, "eth_getBlockByNumber", []any{"0x0", false}, &genesisBlock)
	if want := "0x" + big.NewInt(genesis.Unix()).Text(16); genesisBlock.Timestamp != want {
		t.Errorf("genesis timestamp %s, want %s", genesisBlock.Timestamp, want)
	}

	type log struct {
		Address string   `json:"address"`
		Topics  []string `json:"topics"`
		Data    string   `json:"data"`
	}
	type rcpt struct {
		Status string `json:"status"`
		From   string `json:"from"`
		Logs   []log  `json:"logs"`
	}
	transferTopic, err := c.keccak([]byte("Transfer(address,address,uint256)"))
	if err != nil {
		t.Fatal(err)
	}
	pad := func(a string) string { return "0x000000000000000000000000" + strings.TrimPrefix(a, "0x") }

	amount := big.NewInt(1_500_000)
	h := c.Transfer(t, c.Payer(), c.PayTo(), amount)
	var r rcpt
	c.Call(t, "eth_getTransactionReceipt", []any{h}, &r)
	if r.Status != "0x1" || len(r.Logs) != 1 {
		t.Fatalf("transfer receipt %+v", r)
	}
	if l := r.Logs[0]; !strings.EqualFold(l.Address, USDC) || l.Topics[0] != transferTopic ||
		l.Topics[1] != pad(c.Payer()) || l.Topics[2] != pad(c.PayTo()) ||
		l.Data != "0x000000000000000000000000000000000000000000000000000000000016e360" {
		t.Errorf("transfer log %+v", l)
	}

	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	c.SetNextBlockTime(t, at)
	h, nonce := c.TransferWithAuthorization(t, c.Payer(), c.PayTo(), amount)
	c.Call(t, "eth_getTransactionReceipt", []any{h}, &r)
	if r.Status != "0x1" || len(r.Logs) != 2 || !strings.EqualFold(r.From, c.Facilitator()) {
		t.Fatalf("transferWithAuthorization receipt %+v", r)
	}
	// AuthorizationUsed(authorizer, nonce) then Transfer: the events of
	// EIP-3009 (https://eips.ethereum.org/EIPS/eip-3009) and EIP-20, in the
	// order FiatTokenV2_2 emits them.
	authUsed, _ := c.keccak([]byte("AuthorizationUsed(address,bytes32)"))
	if l := r.Logs[0]; l.Topics[0] != authUsed || l.Topics[1] != pad(c.Payer()) || l.Topics[2] != nonce {
		t.Errorf("AuthorizationUsed log %+v, nonce %s", l, nonce)
	}
	if l := r.Logs[1]; l.Topics[0] != transferTopic || l.Topics[1] != pad(c.Payer()) {
		t.Errorf("Transfer log %+v", l)
	}
	var blk struct{ Timestamp string }
	c.Call(t, "eth_getBlockByNumber", []any{"latest", false}, &blk)
	if want := "0x" + big.NewInt(at.Unix()).Text(16); blk.Timestamp != want {
		t.Errorf("pinned block time %s, want %s", blk.Timestamp, want)
	}
	if _, n2 := c.TransferWithAuthorization(t, c.Payer(), c.PayTo(), big.NewInt(1)); n2 == nonce {
		t.Error("nonce reused")
	}

	rv := c.Revert(t)
	c.Call(t, "eth_getTransactionReceipt", []any{rv}, &r)
	if r.Status != "0x0" || len(r.Logs) != 0 {
		t.Errorf("revert receipt %+v", r)
	}

	want := new(big.Int).Sub(big.NewInt(PayerFunds), big.NewInt(2*1_500_000+1))
	if got := c.BalanceOf(t, USDC, c.Payer()); got.Cmp(want) != 0 {
		t.Errorf("payer balance %s, want %s", got, want)
	}

	head := c.Head(t)
	c.Mine(t, 70)
	if got := c.Head(t); got != head+70 {
		t.Errorf("head after Mine(70) = %d, want %d", got, head+70)
	}

	url := c.RPCURL()
	c.Stop()
	c.Stop() // idempotent
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`))
	if err == nil {
		resp.Body.Close()
		t.Fatal("anvil still answers after Stop")
	}
}
