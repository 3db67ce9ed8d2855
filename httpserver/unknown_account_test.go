package httpserver_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
)

// TestUnknownAccountIsNotFound: a key whose account the engine keeps no
// books for (a server whose Keys name an account missing from the
// engine's Config.Accounts) is NOT_FOUND naming the account on every keyed
// read, as GET /settlements and POST /v1/webhook-endpoints answered; the
// webhook lists (GET /v1/webhook-endpoints, GET /v1/events) answered 200
// with an empty list, as if the account existed with nothing in it.
func TestUnknownAccountIsNotFound(t *testing.T) {
	f := newFixture(t)
	const keyC = "sk_test_account_c_0123456789"
	file := testAccountsFile()
	c := file.Accounts[0]
	c.ID, c.KeyHashes = "acct_c", []string{httpserver.HashKey(keyC)}
	file.Accounts = append(file.Accounts, c)
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	svc := httpserver.Services{Engine: f.engine, Keys: keys}
	shareLoops(t, &svc)
	h, err := httpserver.New(svc, httpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	orphan := &fixture{t: t, srv: srv}
	for _, path := range []string{
		"/settlements", "/settlements/export", "/v1/fiscal-events", "/v1/account/totals",
		"/v1/returns/oss?period=2026-Q1", "/v1/returns/oss/records?period=2026-Q1&memberState=DE",
		"/v1/webhook-endpoints", "/v1/events",
		"/v1/webhook-endpoints/we_1", "/v1/events/evt_1",
	} {
		r := orphan.do("GET", path, keyC, nil)
		if r.status != 404 || !strings.Contains(string(r.body), `"code":"`+string(fiscal.CodeNotFound)+`"`) || !strings.Contains(string(r.body), "acct_c") {
			t.Errorf("GET %s for an account the engine does not keep: %d %s; want 404 NOT_FOUND naming acct_c", path, r.status, r.body)
		}
	}
}
