package httpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestInvoicingLawOverHTTP posts the invoicing-law table (issue 18;
// internal/fiscaltest LawSellers × LawBuyers) to POST /settlements: every
// seller, full and bare, selling to consumers and businesses in its own
// country, Germany, Poland and the United Kingdom. No request answers a
// 5xx: each is 201 with a record, PROCESSED with an invoice that GET
// .../ubl serves and the validators pass, or PENDING_MANUAL_REVIEW with
// reasons and no invoice; the record is readable again with GET. The
// library runs the full table (fiscal TestInvoicingLawTable).
func TestInvoicingLawOverHTTP(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	sellers := fiscaltest.LawSellers()
	file := httpserver.AccountsFile{}
	keys := map[string]string{}
	for i, s := range sellers {
		key := fmt.Sprintf("sk_test_law_%02d_0123456789abcdef", i)
		keys[s.ID] = key
		file.Accounts = append(file.Accounts, httpserver.AccountEntry{ID: s.ID, KeyHashes: []string{httpserver.HashKey(key)}, Seller: s.Seller})
	}
	cfg := fiscaltest.Config(t, now)
	cfg.Accounts = file.EngineAccounts()
	cfg.FX = fiscaltest.SyntheticFX(t)
	cfg.VIES = fiscaltest.LawVIES(now)
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	e := fiscaltest.Engine(t, cfg)
	k, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpserver.New(httpserver.Services{Engine: e, Keys: k}, httpserver.Options{Logger: fiscaltest.Logger(), RateLimit: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func(method, path, key string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(string(body)))
		req.Header.Set("X-Service-Key", key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	buyers := map[string]fiscaltest.LawBuyer{}
	for _, b := range fiscaltest.LawBuyers() {
		buyers[b.Country] = b
	}
	dir := t.TempDir()
	var en16931, peppol []string
	n, processed := 0, 0
	for _, s := range sellers {
		cols := []string{"DE", "PL", "GB"}
		if !slices.Contains(cols, s.Country) && buyers[s.Country].Country != "" {
			cols = append(cols, s.Country)
		}
		for _, bc := range cols {
			for _, b2b := range []bool{false, true} {
				n++
				body, _ := json.Marshal(fiscaltest.LawRequest(n, buyers[bc], b2b, s.Full))
				status, raw := call("POST", "/settlements", keys[s.ID], body)
				if status != http.StatusCreated {
					t.Fatalf("%s → %s b2b=%v: %d %s", s.ID, bc, b2b, status, raw)
				}
				var r fiscal.Record
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Fatal(err)
				}
				if status, again := call("GET", "/settlements/"+r.ID, keys[s.ID], nil); status != 200 || !strings.Contains(string(again), r.ReviewStatus) {
					t.Errorf("%s: GET %d", r.ID, status)
				}
				switch r.ReviewStatus {
				case fiscal.StatusProcessed:
					processed++
					status, doc := call("GET", "/settlements/"+r.ID+"/ubl", keys[s.ID], nil)
					if status != 200 || r.Invoice == nil {
						t.Fatalf("%s: invoice %d", r.ID, status)
					}
					f := filepath.Join(dir, r.ID+".xml")
					if err := os.WriteFile(f, doc, 0o644); err != nil {
						t.Fatal(err)
					}
					if strings.Contains(r.Invoice.Profile, "peppol") {
						peppol = append(peppol, f)
					} else {
						en16931 = append(en16931, f)
					}
				case fiscal.StatusPendingReview:
					if r.Invoice != nil || len(r.ReviewReasons) == 0 {
						t.Errorf("%s: pending with invoice %v, reasons %v", r.ID, r.Invoice, r.ReviewReasons)
					}
					if status, _ := call("GET", "/settlements/"+r.ID+"/ubl", keys[s.ID], nil); status != 404 {
						t.Errorf("%s: the invoice of a pending record answers %d", r.ID, status)
					}
				default:
					t.Errorf("%s: status %q", r.ID, r.ReviewStatus)
				}
			}
		}
	}
	t.Logf("%d settlements over HTTP: %d PROCESSED, %d PENDING_MANUAL_REVIEW, none 5xx", n, processed, n-processed)
	fiscaltest.ValidateUBL(t, en16931, false)
	fiscaltest.ValidateUBL(t, peppol, true)
}

// TestConsumerAddressOverHTTP: consumerAddress is a member of the
// settlement body, checked like the others (400 naming the member).
func TestConsumerAddressOverHTTP(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{
		"consumerAddress": map[string]any{"street": "Musterstraße 1", "city": "Berlin", "postalCode": "10115", "country": "AT"},
	})))
	if r.status != 400 || r.json(t)["field"] != "/consumerAddress/country" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{
		"consumerAddress": map[string]any{"street": "Musterstraße 1", "city": "Berlin", "postalCode": "10115"},
	})))
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	addr := r.json(t)["buyer"].(map[string]any)["address"].(map[string]any)
	if addr["street"] != "Musterstraße 1" || addr["country"] != "DE" || r.json(t)["buyer"].(map[string]any)["postalCode"] != "10115" {
		t.Fatalf("buyer %v", r.json(t)["buyer"])
	}
}
