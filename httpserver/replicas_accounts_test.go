package httpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// nopSender answers every delivery 204 without sending it.
type nopSender struct{}

func (nopSender) Send(context.Context, *webhooks.Message) (webhooks.Response, error) {
	return webhooks.Response{Status: 204}, nil
}

// startReplica serves the accounts file on an engine of the shared log
// store, in dir (holding keysFrom's keys when given), as the server
// binary does: the engine's accounts, the keys and the webhook endpoints
// are the file's.
func startReplica(t *testing.T, store, dir, keysFrom string, file httpserver.AccountsFile) *fixture {
	t.Helper()
	if keysFrom != "" {
		fiscaltest.CopyKeys(t, filepath.Join(keysFrom, "keys"), filepath.Join(dir, "keys"))
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := fiscal.New(fiscal.Config{Dir: dir, Store: store, Accounts: file.EngineAccounts(), Clock: func() time.Time { return testNow }, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	hooks, err := webhooks.New(e, webhooks.Options{Sender: nopSender{}, Configured: file.Webhooks(), ConfigGeneration: file.Generation, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpserver.New(httpserver.Services{Engine: e, Keys: keys, Webhooks: hooks}, httpserver.Options{Logger: quiet, RateLimit: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{t: t, dir: dir, engine: e, srv: srv}
}

// TestReplicaAnswersForAccountsItDoesNotKnow: during a rolling deploy a
// replica on the old accounts file serves requests about what only the new
// file has (an account, an endpoint of a known account). It answers each
// with the error it would give for anything it does not know, or with the
// shared log's state, never a 5xx: the new account's key is not a key it
// knows (401), another account's record is not the caller's (404), and
// the known account's endpoints and events are those of the log, including
// the endpoint whose secret only the new file holds.
func TestReplicaAnswersForAccountsItDoesNotKnow(t *testing.T) {
	store := pgtest.Schema(t)
	const secretX, secretY = "whsec_operator_chosen_secret_xxx1", "whsec_operator_chosen_secret_yyy1"
	newFile := testAccountsFile()
	newFile.Accounts[0].Webhooks = []webhooks.EndpointConfig{{URL: "https://erp.example.com/x", Secrets: []string{secretX}}}
	newFile.Accounts[1].Webhooks = []webhooks.EndpointConfig{{URL: "https://crm.example.com/y", Secrets: []string{secretY}}}
	oldFile := testAccountsFile()
	oldFile.Accounts = oldFile.Accounts[:1] // acct_a only, without the endpoint

	dirA := t.TempDir()
	a := startReplica(t, store, dirA, "", newFile)
	b := startReplica(t, store, t.TempDir(), dirA, oldFile)

	post := func(f *fixture, key string, n int) string {
		t.Helper()
		r := f.do("POST", "/settlements", key, mustJSON(t, settlement(map[string]any{"txHash": txHash(n)})))
		if r.status != 201 {
			t.Fatalf("POST /settlements: %d %s", r.status, r.body)
		}
		return r.json(t)["id"].(string)
	}
	recA, recB := post(a, keyA, 1), post(a, keyB, 2)
	epsA := a.do("GET", "/v1/webhook-endpoints", keyA, nil)
	var list struct{ Data []struct{ ID, URL string } }
	if err := json.Unmarshal(epsA.body, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("acct_a's endpoints on the new replica: %d %s", epsA.status, epsA.body)
	}
	epX := list.Data[0].ID

	for _, c := range []struct {
		method, path, key string
		status            int
		code              fiscal.Code
	}{
		{"POST", "/settlements", keyB, 401, fiscal.CodeAuthenticationFailed},
		{"GET", "/settlements/" + recB, keyB, 401, fiscal.CodeAuthenticationFailed},
		{"GET", "/v1/webhook-endpoints", keyB, 401, fiscal.CodeAuthenticationFailed},
		{"GET", "/settlements/" + recB, keyA, 404, fiscal.CodeNotFound},
		{"GET", "/v1/events/evt_" + recB, keyA, 404, fiscal.CodeNotFound},
		{"GET", "/settlements/" + recA, keyA, 200, ""},
		{"GET", "/v1/webhook-endpoints", keyA, 200, ""},
		{"GET", "/v1/webhook-endpoints/" + epX, keyA, 200, ""},
		{"GET", "/v1/events/evt_" + recA, keyA, 200, ""},
		{"DELETE", "/v1/webhook-endpoints/" + epX, keyA, 409, webhooks.CodeEndpointConflict},
	} {
		var body []byte
		if c.method == "POST" {
			body = mustJSON(t, settlement(map[string]any{"txHash": txHash(3)}))
		}
		r := b.do(c.method, c.path, c.key, body)
		if r.status != c.status || (c.code != "" && !strings.Contains(string(r.body), `"code":"`+string(c.code)+`"`)) {
			t.Errorf("%s %s on the old replica: %d %s, want %d %s", c.method, c.path, r.status, r.body, c.status, c.code)
		}
	}
	// The old replica lists the endpoint the new file added as the log
	// holds it: the same id and URL as the new replica's answer.
	r := b.do("GET", "/v1/webhook-endpoints", keyA, nil)
	var seen struct{ Data []struct{ ID, URL string } }
	if err := json.Unmarshal(r.body, &seen); err != nil || len(seen.Data) != 1 || seen.Data[0] != list.Data[0] {
		t.Errorf("acct_a's endpoints on the old replica: %s, want %+v", r.body, list.Data)
	}
}
