package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	rc, err := e.Receipt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := e.JWKS()
	rcFile, jwksFile := writeTemp(t, "receipt.json", rc), writeTemp(t, "jwks.json", jwks)
	tampered := writeTemp(t, "tampered.json", bytes.Replace(rc, []byte(`"FR"`), []byte(`"DE"`), 1))

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"offline", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), rcFile}, 0, "VERIFIED: " + id},
		{"offline, tampered claims", []string{"-jwks", jwksFile, "-log-key", e.LogVerifierKey(), tampered}, 1, `step "claims-mismatch"`},
		{"wrong log key", []string{"-jwks", jwksFile, "-log-key", "other.example/log+01234567+AQ" + strings.Repeat("A", 42) + "=", rcFile}, 1, "NOT VERIFIED"},
		{"keys from the server", []string{"-server", srv.URL, rcFile}, 0, "VERIFIED: " + id},
		{"receipt by id from the server", []string{"-server", srv.URL, "-q", id}, 0, "VERIFIED: " + id},
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
