package httpserver_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

type evaluationView struct {
	Object, Environment, Watermark, Date string
	Recorded                             bool
	Seller                               struct {
		Country       string
		AccountSeller bool
	}
	Determination struct {
		Status, Regime, OssScheme, TaxingCountry string
		RatePercent                              json.Number
		Reasons                                  []struct{ Code string }
	}
	FX struct {
		GrossEur, NetEur, VatEur, Note string
		UsdPerEur                      *struct{ Raw, RateDate string }
	}
}

// TestEvaluate checks the classification preview: its answers, that it
// writes nothing, and its errors.
func TestEvaluate(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name      string
		key       string
		overrides map[string]any
		status    int
		code      string // problem code when status is not 200
		field     string
		det       string // determination status
		regime    string
		scheme    string
		country   string
		rate      string
		reason    string
		noFX      bool
		account   bool // the seller is the account's
	}{
		{name: "French seller above the threshold, German consumer", status: 200, det: "DETERMINED", regime: "OSS_B2C", scheme: "union", country: "DE", rate: "19"},
		{name: "non-EU seller: non-union OSS", overrides: map[string]any{"seller": map[string]any{"country": "US"}}, status: 200, det: "DETERMINED", regime: "OSS_B2C", scheme: "non-union", country: "DE", rate: "19"},
		{name: "UK seller to a Greek consumer (EL accepted)", overrides: map[string]any{"seller": map[string]any{"country": "GB"}, "buyer.country": "EL"}, status: 200, det: "DETERMINED", regime: "OSS_B2C", scheme: "non-union", country: "GR", rate: "24"},
		{name: "French seller below the threshold", overrides: map[string]any{"seller": map[string]any{"country": "FR", "overThreshold": false, "optedForDestination": false}}, status: 200, det: "DETERMINED", regime: "DOMESTIC", country: "FR", rate: "20"},
		{name: "French seller, threshold unknown", overrides: map[string]any{"seller": map[string]any{"country": "FR"}}, status: 200, det: "MANUAL_REVIEW_REQUIRED", reason: "seller_threshold_unknown"},
		{name: "with a key, the account's seller by default", key: keyA, overrides: map[string]any{"seller": nil}, status: 200, det: "DETERMINED", regime: "OSS_B2C", scheme: "union", country: "DE", rate: "19", account: true},
		{name: "domestic sale of the account's seller", key: keyB, overrides: map[string]any{"seller": nil}, status: 200, det: "DETERMINED", regime: "DOMESTIC", country: "DE", rate: "19", account: true},
		{name: "B2B with a VAT number and no registry", overrides: map[string]any{"buyer": map[string]any{"country": "DE", "businessStatus": "B2B", "vatNumber": "DE136695976"}}, status: 200, det: "MANUAL_REVIEW_REQUIRED", reason: "vat_number_unverified"},
		{name: "Canary Islands: an EU-27 country, outside EU VAT", overrides: map[string]any{"buyer": map[string]any{"country": "ES", "postalCode": "35001"}}, status: 200, det: "DETERMINED", regime: "OUTSIDE_SCOPE"},
		{name: "e-book rate of a domestic sale", overrides: map[string]any{"supply.kind": "ebook", "buyer.country": "FR"}, status: 200, det: "DETERMINED", regime: "DOMESTIC", country: "FR", rate: "5.5"},
		{name: "date as an instant", key: keyA, overrides: map[string]any{"date": "2026-04-10T23:59:59Z"}, status: 200, det: "DETERMINED", country: "DE", rate: "19"},
		{name: "today by default: no ECB rate yet", overrides: map[string]any{"date": nil}, status: 200, det: "DETERMINED", country: "DE", rate: "19", noFX: true},
		{name: "currency stated", key: keyA, overrides: map[string]any{"currency": "USDC"}, status: 200, det: "DETERMINED", country: "DE", rate: "19"},

		{name: "US buyer", overrides: map[string]any{"buyer.country": "US"}, status: 422, code: "UNSUPPORTED_JURISDICTION", field: "/buyer/country"},
		{name: "UK buyer", overrides: map[string]any{"buyer.country": "GB"}, status: 422, code: "UNSUPPORTED_JURISDICTION", field: "/buyer/country"},
		{name: "buyer not attested", overrides: map[string]any{"buyer.country": nil}, status: 422, code: "UNSUPPORTED_JURISDICTION", field: "/buyer/country"},
		{name: "buyer country not ISO", overrides: map[string]any{"buyer.country": "Deutschland"}, status: 400, code: "BAD_REQUEST", field: "/buyer/country"},
		{name: "no seller and no key", overrides: map[string]any{"seller": nil}, status: 400, code: "BAD_REQUEST", field: "/seller"},
		{name: "seller without country", overrides: map[string]any{"seller": map[string]any{"legalName": "X"}}, status: 400, code: "BAD_REQUEST", field: "/seller/country"},
		{name: "amount as a JSON number", overrides: map[string]any{"amountUsdc": 11.9}, status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount with 7 decimals", overrides: map[string]any{"amountUsdc": "1.0000001"}, status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "amount missing", overrides: map[string]any{"amountUsdc": nil}, status: 400, code: "BAD_REQUEST", field: "/amountUsdc"},
		{name: "currency EUR", overrides: map[string]any{"currency": "EUR"}, status: 422, code: "UNSUPPORTED_ASSET", field: "/currency"},
		{name: "date in the future", overrides: map[string]any{"date": "2026-11-22"}, status: 400, code: "BAD_REQUEST", field: "/date"},
		{name: "date malformed", overrides: map[string]any{"date": "10/04/2026"}, status: 400, code: "BAD_REQUEST", field: "/date"},
		{name: "supply missing", overrides: map[string]any{"supply": nil}, status: 400, code: "BAD_REQUEST", field: "/supply/kind"},
		{name: "unknown member", overrides: map[string]any{"buyerCountry": "DE"}, status: 400, code: "BAD_REQUEST", field: "/buyerCountry"},
		{name: "wrong key", key: "sk_wrong", status: 401, code: "AUTHENTICATION_FAILED"},
	}
	counted := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := map[string]any{}
			for k, v := range tc.overrides {
				o[k] = v
			}
			resp := f.do("POST", "/v1/compliance/evaluate", tc.key, mustJSON(t, evaluateBody(o)))
			if tc.status != 200 {
				assertProblem(t, resp, tc.status, tc.code, tc.field)
				if resp.header.Get("X-Quota-Remaining") != "" {
					t.Errorf("a refused request states a quota")
				}
				return
			}
			if resp.status != 200 {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			if tc.key == "" {
				counted++
				if got, want := resp.header.Get("X-Quota-Remaining"), decimal.NewFromInt(int64(10-counted)).String(); got != want {
					t.Errorf("X-Quota-Remaining %s, want %s (only valid calls count)", got, want)
				}
			}
			var ev evaluationView
			dec := json.NewDecoder(bytes.NewReader(resp.body))
			dec.UseNumber()
			if err := dec.Decode(&ev); err != nil {
				t.Fatal(err)
			}
			if ev.Object != "compliance_evaluation" || ev.Environment != "sandbox" || ev.Recorded || !strings.HasPrefix(ev.Watermark, "SANDBOX") {
				t.Errorf("evaluation header %+v", ev)
			}
			d := ev.Determination
			var codes []string
			for _, r := range d.Reasons {
				codes = append(codes, r.Code)
			}
			if d.Status != tc.det || (tc.regime != "" && d.Regime != tc.regime) || (tc.scheme != "" && d.OssScheme != tc.scheme) ||
				(tc.country != "" && d.TaxingCountry != tc.country) || (tc.rate != "" && d.RatePercent.String() != tc.rate) {
				t.Errorf("determination %s %s %s %s %s (%v)", d.Status, d.Regime, d.OssScheme, d.TaxingCountry, d.RatePercent, codes)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(codes, ","), tc.reason) {
				t.Errorf("reasons %v lack %s", codes, tc.reason)
			}
			if ev.Seller.AccountSeller != tc.account {
				t.Errorf("accountSeller %v", ev.Seller.AccountSeller)
			}
			switch {
			case tc.noFX:
				if ev.FX.GrossEur != "" || ev.FX.Note == "" {
					t.Errorf("fx without a rate: %+v", ev.FX)
				}
			case d.Status == "DETERMINED" && d.RatePercent != "":
				// 11.90 USDC at the ECB rate of the day, split by the rate.
				rate := decimal.RequireFromString(ev.FX.UsdPerEur.Raw)
				gross := decimal.RequireFromString("11.90").DivRound(rate, 2)
				pct := decimal.RequireFromString(d.RatePercent.String())
				net := gross.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(pct), 2)
				if ev.FX.GrossEur != gross.StringFixed(2) || ev.FX.NetEur != net.StringFixed(2) || ev.FX.VatEur != gross.Sub(net).StringFixed(2) {
					t.Errorf("gross/net/vat %s/%s/%s, want %s/%s/%s", ev.FX.GrossEur, ev.FX.NetEur, ev.FX.VatEur, gross.StringFixed(2), net.StringFixed(2), gross.Sub(net).StringFixed(2))
				}
			case d.Status != "DETERMINED":
				if ev.FX.VatEur != "" || ev.FX.NetEur != "" {
					t.Errorf("a manual review states net or VAT: %+v", ev.FX)
				}
			}
		})
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Errorf("evaluate wrote %d production entries", n)
	}
	if n := f.sandboxLedger().Size(); n != 0 {
		t.Errorf("evaluate wrote %d sandbox entries", n)
	}
}
