package httpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// viesStub behaves like the VIES REST API
// (https://ec.europa.eu/assets/taxud/vow-information/swagger_publicVAT.yaml): POST
// /check-vat-number answers valid with a requestIdentifier, invalid, or a
// fault sent as HTTP 200 (as VIES does), depending on mode.
type viesStub struct {
	srv   *httptest.Server
	mode  atomic.Value // "valid" | "invalid" | a fault code
	calls atomic.Int64
}

func newVIESStub(t *testing.T, mode string) *viesStub {
	st := &viesStub{}
	st.mode.Store(mode)
	st.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.calls.Add(1)
		var req struct{ CountryCode, VatNumber, RequesterMemberStateCode, RequesterNumber string }
		if r.Method != "POST" || r.URL.Path != "/check-vat-number" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch m := st.mode.Load().(string); m {
		case "valid":
			json.NewEncoder(w).Encode(map[string]any{"countryCode": req.CountryCode, "vatNumber": req.VatNumber,
				"requestDate": "2026-11-21T12:00:00.000Z", "valid": true, "requestIdentifier": "WAPIAAAAZ7test01",
				"name": "Käufer GmbH", "address": "Hauptstraße 5, 10115 Berlin"})
		case "invalid":
			json.NewEncoder(w).Encode(map[string]any{"countryCode": req.CountryCode, "vatNumber": req.VatNumber,
				"requestDate": "2026-11-21T12:00:00.000Z", "valid": false, "requestIdentifier": "", "name": "---", "address": "---"})
		default:
			json.NewEncoder(w).Encode(map[string]any{"actionSucceed": false, "errorWrappers": []map[string]string{{"error": m, "message": "busy"}}})
		}
	}))
	t.Cleanup(st.srv.Close)
	return st
}

// withVIES configures the engine with the real vies.Service against the stub.
func withVIES(st *viesStub) func(*fiscal.Config) {
	return func(cfg *fiscal.Config) {
		svc, err := vies.New(vies.Config{
			Mode: vies.ModeLive,
			VIES: vies.VIESConfig{BaseURL: st.srv.URL, RequesterCountry: "IE", RequesterNumber: "IE1234567T"},
			Service: vies.ServiceConfig{Syntax: vat.Syntax, MaxAttempts: 1, ValidTTL: -1, InvalidTTL: -1,
				Rate: rate.Inf, Clock: cfg.Clock},
		})
		if err != nil {
			panic(err)
		}
		cfg.VIES = svc
		cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: 10 * time.Minute, GiveUpAfter: 72 * time.Hour}
	}
}

const germanBusiness = "DE136695976"

func postB2B(t *testing.T, f *fixture, n int) map[string]any {
	t.Helper()
	resp := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(n), "consumerVatNumber": germanBusiness})))
	if resp.status != 201 {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	return resp.json(t)
}

func verifyReceipt(t *testing.T, f *fixture, id string) *receipt.Claims {
	t.Helper()
	rc := f.do("GET", "/v1/receipts/"+id, "", nil)
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil)
	// The public receipt verifies on its own; the account's openings then
	// reveal its committed fields (the VIES proof, the tx hash, ...).
	if _, err := receipt.Verify(rc.body, jwks.body, f.engine.LogVerifierKey()); err != nil {
		t.Fatalf("receipt %s: %v", id, err)
	}
	op := f.do("GET", "/v1/receipts/"+id+"/openings", keyA, nil)
	openings, err := receipt.ParseOpenings(op.body)
	if op.status != 200 || err != nil {
		t.Fatalf("openings of %s: %d %v", id, op.status, err)
	}
	v, err := receipt.NewVerifier(jwks.body, f.engine.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	claims, err := v.Verify(rc.body, openings...)
	if err != nil {
		t.Fatalf("receipt %s with its openings: %v", id, err)
	}
	return claims
}

// TestVATNumberValidReverseCharge: a VIES-confirmed German business buying
// from an Irish seller is reverse-charged (AE, 0 %, VATEX-EU-AE), the VIES
// proof is on the record and in the signed receipt, and the invoice is a
// Peppol BIS 3.0 document with both VAT ids.
func TestVATNumberValidReverseCharge(t *testing.T) {
	st := newVIESStub(t, "valid")
	f := newFixtureWith(t, withVIES(st))
	rec := postB2B(t, f, 1)
	cl := rec["classification"].(map[string]any)
	if rec["reviewStatus"] != "PROCESSED" || cl["regime"] != "REVERSE_CHARGE_B2B" || cl["taxCategoryCode"] != "AE" || cl["vatex"] != "VATEX-EU-AE" {
		t.Fatalf("record %s / %v", rec["reviewStatus"], cl)
	}
	fxo := rec["fx"].(map[string]any)
	if fxo["vatEur"] != "0.00" || fxo["netEur"] != fxo["grossEur"] {
		t.Errorf("reverse charge must not charge VAT: %v", fxo)
	}
	reg := rec["buyer"].(map[string]any)["registry"].(map[string]any)
	if reg["status"] != "valid" || reg["requestIdentifier"] != "WAPIAAAAZ7test01" {
		t.Errorf("registry proof %v", reg)
	}
	claims := verifyReceipt(t, f, rec["receipt"].(map[string]any)["id"].(string))
	if claims.Buyer.Registry == nil || claims.Buyer.Registry.RequestIdentifier != "WAPIAAAAZ7test01" || claims.Classification.Category != "AE" {
		t.Errorf("receipt lacks the VIES proof: %+v %+v", claims.Buyer.Registry, claims.Classification)
	}
	ubl := f.do("GET", rec["invoice"].(map[string]any)["url"].(string), keyA, nil)
	for _, want := range []string{"poacc:billing:3.0", "<cbc:CompanyID>DE136695976</cbc:CompanyID>", "<cbc:CompanyID>IE1234567T</cbc:CompanyID>", "VATEX-EU-AE", "Reverse charge"} {
		if !strings.Contains(string(ubl.body), want) {
			t.Errorf("AE invoice lacks %s", want)
		}
	}
}

// TestVATNumberInvalidTreatedAsB2C: a definitive "invalid" is B2C, and says so.
func TestVATNumberInvalidTreatedAsB2C(t *testing.T) {
	st := newVIESStub(t, "invalid")
	f := newFixtureWith(t, withVIES(st))
	rec := postB2B(t, f, 1)
	cl := rec["classification"].(map[string]any)
	if rec["reviewStatus"] != "PROCESSED" || cl["taxCategoryCode"] != "S" || cl["buyerTreatment"] != "B2C" {
		t.Fatalf("invalid number: %s %v", rec["reviewStatus"], cl)
	}
	if reasons, _ := json.Marshal(cl["reasons"]); !strings.Contains(string(reasons), "vat_number_invalid") {
		t.Errorf("classification does not say why it is B2C: %s", reasons)
	}
	if q, _ := f.engine.Queues(); q.Rechecks != 0 {
		t.Errorf("a definitive answer was queued for re-check")
	}
}

// TestVATNumberUnavailableThenResolved: VIES is down at the sale, so the
// record is PENDING_MANUAL_REVIEW (vat_number_unverified), neither
// reverse-charged nor 0 %; the service restarts while it is pending; VIES
// comes back; the re-check appends a signed revision that moves the record
// to PROCESSED. The original entry and its receipt stay as they were.
func TestVATNumberUnavailableThenResolved(t *testing.T) {
	st := newVIESStub(t, "MS_MAX_CONCURRENT_REQ")
	f := newFixtureWith(t, withVIES(st))
	rec := postB2B(t, f, 1)
	id := rec["id"].(string)
	if rec["reviewStatus"] != "PENDING_MANUAL_REVIEW" || !strings.Contains(string(mustJSON(t, rec["reviewReasons"])), "vat_number_unverified") {
		t.Fatalf("registry down: %s %v", rec["reviewStatus"], rec["reviewReasons"])
	}
	if cl := rec["classification"].(map[string]any); cl["taxCategoryCode"] != nil || cl["ratePercent"] != nil {
		t.Fatalf("pending record carries a category or rate: %v", cl)
	}
	if _, ok := rec["invoice"]; ok {
		t.Fatal("pending record has an invoice")
	}
	if q, _ := f.engine.Queues(); q.Rechecks != 1 {
		t.Fatalf("pending re-checks %d, want 1", q.Rechecks)
	}
	firstReceipt := rec["receipt"].(map[string]any)["id"].(string)

	// Still down at the first re-check: rescheduled, nothing written.
	f.advance(2 * time.Minute)
	if n, err := f.engine.RecheckNow(t.Context()); err != nil || n != 0 {
		t.Fatalf("re-check while down: %d %v", n, err)
	}
	size := f.engine.Ledger().Size()

	// Restart while pending; the registry comes back.
	f.reopen()
	st.mode.Store("valid")
	f.advance(30 * time.Minute)
	if n, err := f.engine.RecheckNow(t.Context()); err != nil || n != 1 {
		t.Fatalf("re-check after the restart: %d %v", n, err)
	}
	if got := f.engine.Ledger().Size(); got != size+1 {
		t.Fatalf("ledger size %d, want %d (one revision)", got, size+1)
	}
	if q, _ := f.engine.Queues(); q.Rechecks != 0 {
		t.Fatalf("queue not emptied: %d", q.Rechecks)
	}

	got := f.do("GET", "/settlements/"+id, keyA, nil).json(t)
	if got["reviewStatus"] != "PROCESSED" || got["revision"].(float64) != 2 {
		t.Fatalf("after the re-check: %s revision %v", got["reviewStatus"], got["revision"])
	}
	if cl := got["classification"].(map[string]any); cl["taxCategoryCode"] != "AE" {
		t.Fatalf("resolved classification %v", cl)
	}
	hist := got["history"].([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["reviewStatus"] != "PENDING_MANUAL_REVIEW" || hist[1].(map[string]any)["eventType"] != "settlement.review_resolved" {
		t.Fatalf("history %v", hist)
	}
	newReceipt := got["receipt"].(map[string]any)["id"].(string)
	if newReceipt == firstReceipt {
		t.Fatal("the revision reuses the pending receipt's id")
	}
	claims := verifyReceipt(t, f, newReceipt)
	if claims.Supersedes != firstReceipt || claims.ReviewStatus != "PROCESSED" || claims.Buyer.Registry.RequestIdentifier != "WAPIAAAAZ7test01" {
		t.Errorf("revision receipt: supersedes %q status %s", claims.Supersedes, claims.ReviewStatus)
	}
	old := verifyReceipt(t, f, firstReceipt)
	if old.ReviewStatus != "PENDING_MANUAL_REVIEW" {
		t.Errorf("the original receipt changed: %s", old.ReviewStatus)
	}
	if ubl := f.do("GET", "/settlements/"+id+"/ubl", keyA, nil); ubl.status != 200 {
		t.Errorf("no invoice after the resolution: %d", ubl.status)
	}
	if err := f.engine.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}

// TestVATNumberRecheckGivesUp: a registry that never answers within the
// bound leaves the record pending for a person, with a revision saying so.
func TestVATNumberRecheckGivesUp(t *testing.T) {
	st := newVIESStub(t, "MS_UNAVAILABLE")
	f := newFixtureWith(t, withVIES(st))
	rec := postB2B(t, f, 1)
	f.advance(73 * time.Hour)
	if n, err := f.engine.RecheckNow(t.Context()); err != nil || n != 1 {
		t.Fatalf("give up: %d %v", n, err)
	}
	got := f.do("GET", "/settlements/"+rec["id"].(string), keyA, nil).json(t)
	if got["reviewStatus"] != "PENDING_MANUAL_REVIEW" || got["revision"].(float64) != 2 {
		t.Fatalf("after giving up: %s rev %v", got["reviewStatus"], got["revision"])
	}
	if !strings.Contains(string(mustJSON(t, got["reviewReasons"])), "could not confirm") {
		t.Errorf("reasons do not say the registry never answered: %v", got["reviewReasons"])
	}
	if q, _ := f.engine.Queues(); q.Rechecks != 0 {
		t.Errorf("still queued after giving up")
	}
}

// TestVATNumberRegistryOff: the offline demo default asks no registry; a B2B
// claim is pending review and is not queued (waiting cannot help).
func TestVATNumberRegistryOff(t *testing.T) {
	f := newFixtureWith(t, func(cfg *fiscal.Config) {
		svc, err := vies.New(vies.Config{Mode: vies.ModeOff, Service: vies.ServiceConfig{Syntax: vat.Syntax}})
		if err != nil {
			panic(err)
		}
		cfg.VIES = svc
	})
	rec := postB2B(t, f, 1)
	if rec["reviewStatus"] != "PENDING_MANUAL_REVIEW" || !strings.Contains(string(mustJSON(t, rec["reviewReasons"])), "vat_number_unverified") {
		t.Fatalf("registry off: %s %v", rec["reviewStatus"], rec["reviewReasons"])
	}
	if q, _ := f.engine.Queues(); q.Rechecks != 0 {
		t.Errorf("queued a re-check with the registry off")
	}
}
