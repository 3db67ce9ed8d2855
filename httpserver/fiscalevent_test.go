package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/receipt"
)

type fiscalEventView struct {
	ID      string
	Object  string
	Account string
	Seller  struct {
		LegalName, Country string
		AccountSeller      bool
	}
	Determination struct {
		Status, Ruleset, Regime, TaxCategoryCode, TaxingCountry string
		RatePercent                                             json.Number
		Reasons                                                 []struct{ Code string }
	}
	FX         struct{ GrossEur, NetEur, VatEur string }
	Production struct {
		Receipt    bool
		Invariants []struct {
			Code  string
			Holds bool
		}
	}
	Invoice *struct{ UblSha256, URL string }
	Receipt *struct{ ID, URL string }
	Ledger  struct{ Index int64 }
}

func decodeEvent(t *testing.T, body []byte) fiscalEventView {
	t.Helper()
	var v fiscalEventView
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not a fiscal event: %v\n%s", err, body)
	}
	return v
}

func (v fiscalEventView) reasons() string {
	var codes []string
	for _, r := range v.Determination.Reasons {
		codes = append(codes, r.Code)
	}
	return strings.Join(codes, ",")
}

func (v fiscalEventView) failing() string {
	var codes []string
	for _, inv := range v.Production.Invariants {
		if !inv.Holds {
			codes = append(codes, inv.Code)
		}
	}
	return strings.Join(codes, ",")
}

// TestFiscalEvents posts events inside and outside the EU VAT production
// invariants and checks the determination, which invariants fail, and that
// a receipt and an invoice exist exactly when all hold.
func TestFiscalEvents(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name      string
		overrides map[string]any
		status    string // determination status
		regime    string // when determined
		country   string // taxing country, when determined
		rate      string
		reason    string // a reason code that must be present
		failing   string // the invariants that fail, in order
	}{
		{name: "account seller to a German consumer", status: "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19"},
		{name: "account seller spelt in other case and spacing",
			overrides: map[string]any{"seller.legalName": "  seller a   LTD ", "seller.vatNumber": "IE 1234567T"},
			status:    "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19"},
		{name: "account seller to a French consumer, supply saas",
			overrides: map[string]any{"buyer.country": "FR", "supply.kind": "saas"},
			status:    "DETERMINED", regime: "OSS_B2C", country: "FR", rate: "20"},
		{name: "a US seller (not the account's) to a German consumer",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Acme Inc", "country": "US"}},
			status:    "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19", failing: "seller_is_account"},
		{name: "a Japanese seller to a French consumer",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Kabushiki Kaisha", "country": "JP"}, "buyer.country": "FR"},
			status:    "DETERMINED", regime: "OSS_B2C", country: "FR", rate: "20", failing: "seller_is_account"},
		{name: "a French seller whose threshold is unknown",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Vendeur SARL", "country": "FR"}},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "seller_threshold_unknown", failing: "seller_is_account,determined_eu_vat"},
		{name: "a French seller above the threshold",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Vendeur SARL", "country": "FR", "overThreshold": true}},
			status:    "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19", failing: "seller_is_account"},
		{name: "a French seller below the threshold",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Vendeur SARL", "country": "FR", "overThreshold": false, "optedForDestination": false}},
			status:    "DETERMINED", regime: "DOMESTIC", country: "FR", rate: "20", failing: "seller_is_account"},
		{name: "US seller to US buyer: corridor not covered",
			overrides: map[string]any{"seller": map[string]any{"legalName": "Acme Inc", "country": "US"}, "buyer.country": "US"},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "corridor_not_covered", failing: "seller_is_account,buyer_in_eu,determined_eu_vat"},
		{name: "account seller to a US buyer: outside the scope of EU VAT",
			overrides: map[string]any{"buyer.country": "US"},
			status:    "DETERMINED", regime: "OUTSIDE_SCOPE", failing: "buyer_in_eu"},
		{name: "account seller to a UK consumer: experimental UK ruleset",
			overrides: map[string]any{"buyer.country": "GB"},
			status:    "DETERMINED", regime: "UK_B2C", country: "GB", rate: "20", failing: "buyer_in_eu,determined_eu_vat"},
		{name: "no buyer country",
			overrides: map[string]any{"buyer.country": nil},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "buyer_country_missing", failing: "buyer_in_eu,determined_eu_vat"},
		{name: "B2B with a VAT number and no registry configured",
			overrides: map[string]any{"buyer": map[string]any{"country": "DE", "businessStatus": "B2B", "vatNumber": "DE136695976"}},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "vat_number_unverified", failing: "determined_eu_vat"},
		{name: "B2B claimed without a VAT number is treated as B2C",
			overrides: map[string]any{"buyer.businessStatus": "B2B"},
			status:    "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19", reason: "b2b_claim_without_vat_number"},
		{name: "supply kind the ruleset does not cover",
			overrides: map[string]any{"supply.kind": "consulting"},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "supply_kind_not_covered", failing: "determined_eu_vat"},
		{name: "after the last ECB publication",
			overrides: map[string]any{"payment.timestamp": "2026-04-15T10:00:00Z"},
			status:    "DETERMINED", regime: "OSS_B2C", country: "DE", rate: "19", failing: "fx_rate_available"},
		{name: "account seller's name with another VAT number is another seller, threshold unknown",
			overrides: map[string]any{"seller.vatNumber": "IE9999999X"},
			status:    "MANUAL_REVIEW_REQUIRED", reason: "seller_threshold_unknown", failing: "seller_is_account,determined_eu_vat"},
	}
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := map[string]any{"payment.txHash": txHash(2000 + i)}
			for k, v := range tc.overrides {
				o[k] = v
			}
			tc.overrides = o
			before := f.engine.Ledger().Size()
			resp := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(tc.overrides)))
			if resp.status != http.StatusCreated {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			if f.engine.Ledger().Size() != before+1 {
				t.Fatalf("ledger grew from %d to %d", before, f.engine.Ledger().Size())
			}
			ev := decodeEvent(t, resp.body)
			if ev.Object != "fiscal_event" || !strings.HasPrefix(ev.ID, "x402-") || ev.Account != "acct_a" {
				t.Fatalf("event %+v", ev)
			}
			if loc := resp.header.Get("Location"); loc != "/v1/fiscal-events/"+ev.ID {
				t.Errorf("Location %q", loc)
			}
			d := ev.Determination
			if d.Status != tc.status {
				t.Fatalf("determination %s (%s), want %s", d.Status, ev.reasons(), tc.status)
			}
			if tc.regime != "" && (d.Regime != tc.regime || d.TaxingCountry != tc.country || d.RatePercent.String() != tc.rate) {
				t.Errorf("regime/country/rate %s/%s/%s, want %s/%s/%s", d.Regime, d.TaxingCountry, d.RatePercent, tc.regime, tc.country, tc.rate)
			}
			if tc.reason != "" && !strings.Contains(ev.reasons(), tc.reason) {
				t.Errorf("reasons %s lack %s", ev.reasons(), tc.reason)
			}
			if d.Status == "MANUAL_REVIEW_REQUIRED" && (d.TaxCategoryCode != "" || d.RatePercent != "" || ev.FX.VatEur != "") {
				t.Errorf("a manual review states a category, rate or VAT: %+v %+v", d, ev.FX)
			}
			if got := ev.failing(); got != tc.failing {
				t.Errorf("failing invariants %q, want %q", got, tc.failing)
			}
			if len(ev.Production.Invariants) != 5 {
				t.Errorf("%d invariants, want 5", len(ev.Production.Invariants))
			}
			production := tc.failing == ""
			if ev.Production.Receipt != production || (ev.Receipt != nil) != production || (ev.Invoice != nil) != production {
				t.Fatalf("production %v, receipt %v, invoice %v; want all %v", ev.Production.Receipt, ev.Receipt != nil, ev.Invoice != nil, production)
			}
			rc := f.do("GET", "/v1/receipts/rcpt_"+ev.ID, "", nil)
			ubl := f.do("GET", "/v1/fiscal-events/"+ev.ID+"/ubl", keyA, nil)
			if !production {
				assertProblem(t, rc, 404, "NOT_FOUND", "")
				assertProblem(t, ubl, 404, "NOT_FOUND", "")
				// The log still commits to the event: its leaf is the event JSON.
				ent, err := f.engine.Ledger().Entry(ev.ID)
				if err != nil || !bytes.Equal(ent.Leaf, bytes.TrimSpace(resp.body)) {
					t.Errorf("leaf of a non-production event is not the event JSON (%v)", err)
				}
				return
			}
			// The account opens the receipt's committed fields.
			op := f.do("GET", "/v1/receipts/"+ev.Receipt.ID+"/openings", keyA, nil)
			openings, err := receipt.ParseOpenings(op.body)
			if op.status != 200 || err != nil {
				t.Fatalf("openings: %d %v", op.status, err)
			}
			v, err := receipt.NewVerifier(jwks, f.engine.LogVerifierKey())
			if err != nil {
				t.Fatal(err)
			}
			claims, err := v.Verify(rc.body, openings...)
			if err != nil {
				t.Fatalf("receipt: %v", err)
			}
			if claims.EventID != ev.ID || claims.Environment != "production" || claims.Seller.LegalName != "Seller A Ltd" || claims.FX.VATEUR != ev.FX.VatEur {
				t.Errorf("claims %+v do not bind the event", claims)
			}
			sum := sha256.Sum256(ubl.body)
			if ubl.status != 200 || hex.EncodeToString(sum[:]) != ev.Invoice.UblSha256 || claims.Invoice.UBLSHA256 != ev.Invoice.UblSha256 {
				t.Errorf("ubl %d, sha256 %x, event %s, receipt %s", ubl.status, sum, ev.Invoice.UblSha256, claims.Invoice.UBLSHA256)
			}
			if ev.Invoice.URL != "/v1/fiscal-events/"+ev.ID+"/ubl" {
				t.Errorf("invoice url %s", ev.Invoice.URL)
			}
		})
	}
	// Every event reads back byte for byte, and is not a settlement.
	list := f.do("GET", "/v1/fiscal-events?limit=200", keyA, nil)
	var page struct{ Data []json.RawMessage }
	if err := json.Unmarshal(list.body, &page); err != nil || len(page.Data) != len(cases) {
		t.Fatalf("list: %v, %d events, want %d", err, len(page.Data), len(cases))
	}
	for _, raw := range page.Data {
		id := decodeEvent(t, raw).ID
		got := f.do("GET", "/v1/fiscal-events/"+id, keyA, nil)
		if got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), raw) {
			t.Errorf("GET %s: %d, equal %v", id, got.status, bytes.Equal(bytes.TrimSpace(got.body), raw))
		}
		assertProblem(t, f.do("GET", "/v1/fiscal-events/"+id, keyB, nil), 404, "NOT_FOUND", "")
		assertProblem(t, f.do("GET", "/settlements/"+id, keyA, nil), 404, "NOT_FOUND", "")
	}
	if n := len(decodePage(t, f.do("GET", "/settlements", keyA, nil)).Data); n != 0 {
		t.Errorf("GET /settlements lists %d fiscal events", n)
	}
	// Every entry announced itself in the outbox as fiscal_event.recorded.
	for i := int64(0); i < f.engine.Ledger().Size(); i++ {
		raw, err := f.engine.Ledger().Get("events", binary.BigEndian.AppendUint64(nil, uint64(i)))
		if err != nil || !strings.Contains(string(raw), `"type":"fiscal_event.recorded"`) {
			t.Errorf("outbox event %d: %s %v", i, raw, err)
		}
	}
	if err := f.engine.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}

// TestFiscalEventBadInput: auth failures and malformed events write nothing.
func TestFiscalEventBadInput(t *testing.T) {
	f := newFixture(t)
	valid := func(o map[string]any) []byte { return mustJSON(t, fiscalEventBody(o)) }
	cases := []struct {
		name    string
		key     string
		body    []byte
		headers []string
		status  int
		code    string
		field   string
	}{
		{name: "no key", key: "-", body: valid(nil), status: 401, code: "AUTHENTICATION_FAILED"},
		{name: "wrong key", key: "sk_wrong", body: valid(nil), status: 401, code: "AUTHENTICATION_FAILED"},
		{name: "amount as a JSON number", body: valid(map[string]any{"payment.amountUsdc": 11.9}), status: 400, code: "BAD_REQUEST", field: "/payment/amountUsdc"},
		{name: "amount missing", body: valid(map[string]any{"payment.amountUsdc": nil}), status: 400, code: "BAD_REQUEST", field: "/payment/amountUsdc"},
		{name: "payment missing", body: valid(map[string]any{"payment": nil}), status: 400, code: "BAD_REQUEST", field: "/payment/amountUsdc"},
		{name: "tx hash malformed", body: valid(map[string]any{"payment.txHash": "0x12"}), status: 400, code: "BAD_REQUEST", field: "/payment/txHash"},
		{name: "timestamp not UTC", body: valid(map[string]any{"payment.timestamp": "2026-04-10T14:30:00+02:00"}), status: 400, code: "BAD_REQUEST", field: "/payment/timestamp"},
		{name: "network unsupported", body: valid(map[string]any{"payment.network": "eip155:10"}), status: 422, code: "UNSUPPORTED_NETWORK", field: "/payment/network"},
		{name: "asset unsupported", body: valid(map[string]any{"payment.asset": "USDT"}), status: 422, code: "UNSUPPORTED_ASSET", field: "/payment/asset"},
		{name: "scheme unsupported", body: valid(map[string]any{"payment.scheme": "upto"}), status: 422, code: "UNSUPPORTED_SCHEME", field: "/payment/scheme"},
		{name: "seller missing", body: valid(map[string]any{"seller": nil}), status: 400, code: "BAD_REQUEST", field: "/seller/legalName"},
		{name: "seller without country", body: valid(map[string]any{"seller.country": nil}), status: 400, code: "BAD_REQUEST", field: "/seller/country"},
		{name: "seller country not ISO", body: valid(map[string]any{"seller.country": "USA"}), status: 400, code: "BAD_REQUEST", field: "/seller/country"},
		{name: "seller establishment outside the EU", body: valid(map[string]any{"seller": map[string]any{"legalName": "X", "country": "FR", "otherEstablishments": []string{"CH"}}}), status: 400, code: "BAD_REQUEST", field: "/seller/otherEstablishments/0"},
		{name: "account seller with a contradicting threshold", body: valid(map[string]any{"seller.overThreshold": false}), status: 400, code: "BAD_REQUEST", field: "/seller/overThreshold"},
		{name: "buyer country not ISO", body: valid(map[string]any{"buyer.country": "Germany"}), status: 400, code: "BAD_REQUEST", field: "/buyer/country"},
		{name: "business status unknown", body: valid(map[string]any{"buyer.businessStatus": "B2G"}), status: 400, code: "BAD_REQUEST", field: "/buyer/businessStatus"},
		{name: "B2C with a VAT number", body: valid(map[string]any{"buyer.vatNumber": "DE136695976"}), status: 400, code: "BAD_REQUEST", field: "/buyer/businessStatus"},
		{name: "postal code without country", body: valid(map[string]any{"buyer": map[string]any{"postalCode": "35001"}}), status: 400, code: "BAD_REQUEST", field: "/buyer/postalCode"},
		{name: "supply missing", body: valid(map[string]any{"supply": nil}), status: 400, code: "BAD_REQUEST", field: "/supply/kind"},
		{name: "supply kind not a token", body: valid(map[string]any{"supply.kind": "Digital Service"}), status: 400, code: "BAD_REQUEST", field: "/supply/kind"},
		{name: "unknown member", body: valid(map[string]any{"buyer.countyr": "DE"}), status: 400, code: "BAD_REQUEST", field: "/buyer/countyr"},
		{name: "unknown member deep in the payment", body: valid(map[string]any{"payment.txhash2": "x"}), status: 400, code: "BAD_REQUEST", field: "/payment/txhash2"},
		{name: "settlement body instead of an event", body: mustJSON(t, settlement(nil)), status: 400, code: "BAD_REQUEST"},
		{name: "duplicate member", body: []byte(`{"buyer":{"country":"DE","country":"FR"}}`), status: 400, code: "BAD_REQUEST", field: "/buyer/country"},
		{name: "not JSON", body: []byte("payment=1"), status: 400, code: "BAD_REQUEST"},
		{name: "text/plain", body: valid(nil), headers: []string{"Content-Type", "text/plain"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE", field: "Content-Type"},
		{name: "idempotency key with a space", body: valid(nil), headers: []string{"Idempotency-Key", "a b"}, status: 400, code: "BAD_REQUEST", field: "Idempotency-Key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := keyA
			switch tc.key {
			case "-":
				key = ""
			case "":
			default:
				key = tc.key
			}
			assertProblem(t, f.do("POST", "/v1/fiscal-events", key, tc.body, tc.headers...), tc.status, tc.code, tc.field)
		})
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Fatalf("ledger has %d entries after only bad requests", n)
	}
	assertProblem(t, f.do("GET", "/v1/fiscal-events/x402-00", "", nil), 401, "AUTHENTICATION_FAILED", "")
	assertProblem(t, f.do("GET", "/v1/fiscal-events/x402-00", keyA, nil), 404, "NOT_FOUND", "")
}

// TestFiscalEventUniqueness: a payment is recorded once, whichever endpoint
// is used, and the Idempotency-Key space is shared with settlements.
func TestFiscalEventUniqueness(t *testing.T) {
	f := newFixture(t)
	body := mustJSON(t, fiscalEventBody(nil))
	first := f.do("POST", "/v1/fiscal-events", keyA, body, "Idempotency-Key", "ev-1")
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	id := decodeEvent(t, first.body).ID
	steps := []struct {
		name    string
		method  string
		path    string
		key     string
		body    []byte
		headers []string
		status  int
		code    string // problem code, or "" for a success carrying the first event
		field   string
	}{
		{"replay: same key, same meaning", "POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.amountUsdc": "11.9", "seller.legalName": "SELLER A LTD"})), []string{"Idempotency-Key", "ev-1"}, 201, "", ""},
		{"same key, other body", "POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"buyer.country": "FR"})), []string{"Idempotency-Key", "ev-1"}, 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key"},
		{"duplicate payment without a key", "POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"buyer.country": "FR"})), nil, 200, "", ""},
		{"the key on POST /settlements", "POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(5)})), []string{"Idempotency-Key", "ev-1"}, 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key"},
		{"the payment on POST /settlements", "POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(1000)})), nil, 409, "PAYMENT_ALREADY_RECORDED", "/txHash"},
		{"the payment from another account", "POST", "/v1/fiscal-events", keyB, mustJSON(t, fiscalEventBody(nil)), nil, 409, "SETTLEMENT_CONFLICT", "/payment/txHash"},
		{"a settled payment as a fiscal event", "POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": settlement(nil)["txHash"]})), nil, 409, "PAYMENT_ALREADY_RECORDED", "/payment/txHash"},
	}
	settled := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if settled.status != 201 {
		t.Fatalf("settlement: %d %s", settled.status, settled.body)
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			resp := f.do(st.method, st.path, st.key, st.body, st.headers...)
			if st.code != "" {
				assertProblem(t, resp, st.status, st.code, st.field)
				return
			}
			if resp.status != st.status || !bytes.Equal(resp.body, first.body) {
				t.Fatalf("status %d (want %d), same event %v: %s", resp.status, st.status, bytes.Equal(resp.body, first.body), resp.body)
			}
			if replayed := resp.header.Get("Idempotent-Replayed") == "true"; replayed != (st.status == 201) {
				t.Errorf("Idempotent-Replayed %q", resp.header.Get("Idempotent-Replayed"))
			}
		})
	}
	if n := f.engine.Ledger().Size(); n != 2 {
		t.Errorf("ledger size %d, want 2 (one event, one settlement)", n)
	}
	// A restart changes nothing.
	f.reopen()
	if got := f.do("GET", "/v1/fiscal-events/"+id, keyA, nil); got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(first.body)) {
		t.Errorf("after restart: %d", got.status)
	}
	assertProblem(t, f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(1000)}))), 409, "PAYMENT_ALREADY_RECORDED", "/txHash")
	if err := f.engine.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}
