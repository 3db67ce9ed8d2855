package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/anviltest"
)

func TestChainFlags(t *testing.T) {
	cases := []struct {
		args     []string
		env      string // FISCAL402_BASE_RPC
		base     evmverify.Mode
		ethereum evmverify.Mode
		nilChain bool
		err      string
	}{
		{args: nil, nilChain: true},
		{args: []string{"-base-mode", "required", "-base-rpc", "http://127.0.0.1:8545"}, base: "required", ethereum: "off"},
		{args: []string{"-base-mode", "required"}, env: "https://base.example/v1/KEY", base: "required", ethereum: "off"},
		{args: []string{"-base-mode", "required", "-base-rpc", "http://a, http://b", "-base-confirmations", "3", "-base-finalized",
			"-ethereum-mode", "required", "-ethereum-rpc", "http://c", "-chain-timeout", "3s"}, base: "required", ethereum: "required"},
		{args: []string{"-base-mode", "required"}, err: "-base-mode required needs -base-rpc"},
		{args: []string{"-base-rpc", "http://127.0.0.1:8545"}, err: "-base-rpc is set but -base-mode is off"},
		{args: nil, env: "http://127.0.0.1:8545", err: "-base-rpc is set but -base-mode is off"},
		{args: []string{"-ethereum-confirmations", "12"}, err: "need -ethereum-mode required"},
		{args: []string{"-base-mode", "on", "-base-rpc", "http://x"}, err: `-base-mode "on": want off or required`},
		{args: []string{"-base-mode", "required", "-base-rpc", "ftp://x"}, err: "rpc url"},
		{args: []string{"-chain-timeout", "0s"}, err: "-chain-timeout must be positive"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " ")+" env="+c.env, func(t *testing.T) {
			t.Setenv("FISCAL402_BASE_RPC", c.env)
			t.Setenv("FISCAL402_ETHEREUM_RPC", "")
			fs := flag.NewFlagSet("server", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cf := addChainFlags(fs)
			if err := applyEnv(fs, os.Getenv); err != nil { // as serve does: the variable, then the command line
				t.Fatal(err)
			}
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			v, err := cf.verifier()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.nilChain {
				if v != nil {
					t.Fatalf("verifier %v for the offline demo", v.Networks())
				}
				return
			}
			if v.Mode(evmverify.NetworkBase) != c.base || v.Mode(evmverify.NetworkEthereum) != c.ethereum {
				t.Fatalf("modes %s %s", v.Mode(evmverify.NetworkBase), v.Mode(evmverify.NetworkEthereum))
			}
			var out bytes.Buffer
			cf.describe(&out)
			if !strings.Contains(out.String(), "eip155:8453 (base): verification required") {
				t.Errorf("describe: %s", out.String())
			}
		})
	}
}

// TestServerX402: the bundled server with Base verified against a local
// chain records an x402 payment over HTTP, and its background queue records
// a held (settlement_pending) one.
func TestServerX402(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)})
	t.Setenv("FISCAL402_BASE_RPC", chain.RPCURL())
	p := startServer(t, t.TempDir(), "-base-mode", "required", "-chain-timeout", "5s")

	post := func(tx string, units int64, pending bool) (int, map[string]any) {
		t.Helper()
		amount := big.NewInt(units).String()
		req := map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": amount,
			"asset": chain.USDC(), "payTo": chain.PayTo(), "maxTimeoutSeconds": 60}
		settle := map[string]any{"success": true, "payer": chain.Payer(), "transaction": tx, "network": "eip155:8453"}
		if pending {
			settle["success"], settle["errorReason"] = false, "settlement_pending"
		}
		body, _ := json.Marshal(map[string]any{"settleResponse": settle, "paymentRequirements": req, "buyer": map[string]any{"consumerCountry": "FR"}})
		hr, _ := http.NewRequest("POST", p.base+"/v1/x402/settlements", bytes.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("X-Service-Key", demoKey)
		resp, err := client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}

	tx, _ := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(5_000_000))
	status, rec := post(tx, 5_000_000, false)
	if status != http.StatusCreated || rec["reviewStatus"] != "PROCESSED" || rec["verification"].(map[string]any)["chain"] != "verified" {
		t.Fatalf("status %d: %v", status, rec)
	}

	tx, _ = chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(6_000_000))
	status, st := post(tx, 6_000_000, true)
	if status != http.StatusAccepted || st["state"] != "queued" {
		t.Fatalf("held: %d %v", status, st)
	}
	deadline := time.Now().Add(20 * time.Second)
	var recordURL string
	for {
		code, raw := p.get(t, "/v1/x402/settlements/"+st["id"].(string), true)
		var cur map[string]any
		_ = json.Unmarshal(raw, &cur)
		if code == 200 && cur["state"] == "recorded" {
			recordURL, _ = cur["recordUrl"].(string)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's queue did not record the held payment: %d %s", code, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _ := p.get(t, recordURL, true); code != 200 || recordURL == "" {
		t.Fatalf("record: %d", code)
	}
}
