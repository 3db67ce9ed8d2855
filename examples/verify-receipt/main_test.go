package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
)

// service settles one payment and returns the engine, a server over it and
// the receipt id.
func service(t *testing.T) (*fiscal.Engine, *httptest.Server, string) {
	t.Helper()
	accounts := []fiscal.Account{{ID: "acct",
		Seller: fiscal.Seller{LegalName: "Seller Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: accounts, Logger: quiet,
		Clock: func() time.Time { return time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	books, err := e.Books("acct")
	if err != nil {
		t.Fatal(err)
	}
	res, err := books.Settle(context.Background(), fiscal.SettlementRequest{
		AmountUSDC: "5.00", TxHash: "0x" + strings.Repeat("ab", 32), Timestamp: "2026-04-10T10:00:00Z",
		PayerWallet: "0x" + strings.Repeat("11", 20), ReceiverWallet: "0x" + strings.Repeat("22", 20),
		Network: "eip155:8453", ConsumerCountry: "FR",
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpserver.New(httpserver.Services{Engine: e, Keys: &httpserver.Keys{}}, httpserver.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return e, srv, res.Record.Receipt.ID
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerifyReceiptCommand(t *testing.T) {
	e, srv, id := service(t)
	// A sandbox simulation through the server: its receipt verifies with
	// the sandbox's published keys, by id or as a file.
	resp, err := http.Post(srv.URL+"/sandbox/v1/simulate", "application/json", strings.NewReader(`{"amountUsdc":"2.00",
		"txHash":"0x`+strings.Repeat("cd", 32)+`","timestamp":"2026-04-10T10:00:00Z","payerWallet":"0x`+strings.Repeat("11", 20)+`",
		"receiverWallet":"0x`+strings.Repeat("22", 20)+`","network":"eip155:8453","consumerCountry":"DE"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sim struct {
		Receipt json.RawMessage `json:"receipt"`
	}
	err = json.NewDecoder(resp.Body).Decode(&sim)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("simulate: %d %v", resp.StatusCode, err)
	}
	var simID struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(sim.Receipt, &simID); err != nil || !strings.HasPrefix(simID.ID, "rcpt_x402-sandbox-") {
		t.Fatalf("sandbox receipt id %q: %v", simID.ID, err)
	}
	sbFile := writeTemp(t, "sandbox.json", sim.Receipt)
	rc, err := e.Receipt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := e.JWKS()
	rcFile, jwksFile := writeTemp(t, "receipt.json", rc), writeTemp(t, "jwks.json", jwks)
	tampered := writeTemp(t, "tampered.json", bytes.Replace(rc, []byte(`"FR"`), []byte(`"DE"`), 1))

	_, otherLogKey, err := note.GenerateKey(rand.Reader, "other.example/log")
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"offline", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), rcFile}, 0, "VERIFIED: " + id},
		{"offline, tampered claims", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), tampered}, 1, `step "claims-mismatch"`},
		{"another log's key", []string{"-jwks", jwksFile, "-log-key", otherLogKey, rcFile}, 1, "NOT VERIFIED"},
		{"not a log key", []string{"-jwks", jwksFile, "-log-key", "other.example/log+01234567+AQ" + strings.Repeat("A", 42) + "=", rcFile}, 2, ""},
		{"receipt file missing", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), rcFile + ".missing"}, 3, ""},
		{"keys from the server", []string{"-server", srv.URL, rcFile}, 0, "VERIFIED: " + id},
		{"receipt by id from the server", []string{"-server", srv.URL, "-q", id}, 0, "VERIFIED: " + id},
		{"sandbox receipt by id from the server", []string{"-server", srv.URL, "-q", simID.ID}, 0, "VERIFIED: " + simID.ID + " (service.receipt/4.0.0, sandbox)"},
		{"sandbox receipt file, keys from the server", []string{"-server", srv.URL, "-q", sbFile}, 0, "VERIFIED: " + simID.ID},
		{"sandbox receipt, production keys", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), sbFile}, 1, "NOT VERIFIED"},
		{"no keys", []string{rcFile}, 2, ""},
		{"no receipt", []string{"-server", srv.URL}, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(c.args, &out, &errOut)
			if code != c.code || !strings.Contains(out.String(), c.want) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, out.String(), errOut.String())
			}
		})
	}
}
