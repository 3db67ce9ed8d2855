package httpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryRunLogNamesNoBuyer: a month's summary run whose summary of
// one buyer cannot be issued logs the failure (code, state, request id)
// but not the buyer, who is a consumer's payer wallet or a business
// customer's VAT number: README "Logs" promises that no buyer's VAT number
// or wallet reaches the log. The account reads the buyer in the answer's
// answer.
func TestSummaryRunLogNamesNoBuyer(t *testing.T) {
	now := time.Date(2026, 4, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	seller := fiscaltest.IrishSeller
	seller.Invoicing = fiscal.InvoicingSummaryMonthly
	cfg := fiscaltest.Config(t, now, seller)
	cfg.Clock = func() time.Time { return clock() }
	e := fiscaltest.Engine(t, cfg)
	books := fiscaltest.Books(t, e, 0)
	for i := 0; i < 2; i++ {
		if _, err := books.Settle(context.Background(), fiscaltest.Request(i, "1.19", "DE", fmt.Sprintf("2026-04-1%dT10:00:00Z", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	// The profile changes without dated registrations: the April supplies
	// now fall under another state's invoicing rules, and their summary
	// is refused (INVOICE_RULES_FAILED).
	moved := seller
	moved.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "DE", Number: "DE123456789"}}
	if err := e.SetAccounts(fiscaltest.Accounts(moved)); err != nil {
		t.Fatal(err)
	}
	later := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
	clock = func() time.Time { return later }

	var logged bytes.Buffer
	file := httpserver.AccountsFile{Accounts: []httpserver.AccountEntry{{ID: fiscaltest.AccountID(0), KeyHashes: []string{httpserver.HashKey(keyA)}, Seller: moved}}}
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpserver.New(httpserver.Services{Engine: e, Keys: keys}, httpserver.Options{Logger: slog.New(slog.NewJSONHandler(&logged, nil)), RateLimit: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	f := &fixture{t: t, srv: srv}
	res := f.do("POST", "/v1/invoices/summaries", keyA, []byte(`{"period":"2026-04"}`))
	wallet := strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet)
	// The run issued nothing: it answers its (only) failure's error, which
	// names the buyer to the account (README "Summary invoices").
	if res.status != 422 || !strings.Contains(string(res.body), "INVOICE_RULES_FAILED") || !strings.Contains(string(res.body), wallet) {
		t.Fatalf("the run answered %d %s; want 422 INVOICE_RULES_FAILED naming the buyer", res.status, res.body)
	}
	if !strings.Contains(logged.String(), "summary invoice not issued") || !strings.Contains(logged.String(), "INVOICE_RULES_FAILED") {
		t.Fatalf("the failure was not logged:\n%s", logged.String())
	}
	if strings.Contains(strings.ToLower(logged.String()), wallet) {
		t.Errorf("the log names the buyer's wallet %s:\n%s", wallet, logged.String())
	}
}
