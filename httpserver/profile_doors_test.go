package httpserver_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/vat"
)

// TestAccountProfileAgreesOnThreeDoors: what an account's profile decides
// beyond its country (registrations, the choice of review for special
// territories, attested rate conditions, an electronic interface) is
// answered alike by POST /settlements, POST /v1/fiscal-events and POST
// /v1/capabilities/check with the account's key.
func TestAccountProfileAgreesOnThreeDoors(t *testing.T) {
	reg := func(scheme, cc string) vat.Registration { return vat.Registration{Scheme: scheme, Country: cc} }
	base := func(cc string) fiscal.Seller {
		return fiscal.Seller{LegalName: "Profile Seller " + cc, Country: cc, OverThreshold: true, LegalID: "REG-" + cc,
			Address: fiscal.Address{Street: "1 Example Street", City: "Example City", PostalCode: "10115"}}
	}
	noVRN := base("IE")
	noVRN.Registrations = []vat.Registration{reg(vat.RegistrationNational, "IE"), reg(vat.RegistrationOSSUnion, "IE")}
	noOSS := base("IE")
	noOSS.Registrations = []vat.Registration{reg(vat.RegistrationNational, "IE")}
	review := base("DE")
	review.ReviewSpecialTerritories = true
	cppap := base("DE")
	cppap.RateConditions = []string{vat.ConditionFRPressCPPAP}
	iface := base("IE")
	iface.ElectronicInterface = true
	rebutted := iface
	rebutted.Art9aRebutted = true
	profiles := []struct {
		id     string
		seller fiscal.Seller
		buyers []string
		kind   string
	}{
		{"acct_novrn", noVRN, []string{"XI", "GB", "DE", "IE"}, vat.KindDigitalService},
		{"acct_nooss", noOSS, []string{"DE", "IE"}, vat.KindDigitalService},
		{"acct_review", review, []string{"IC", "EA", "AX", "DE"}, vat.KindDigitalService},
		{"acct_cppap", cppap, []string{"FR", "DE"}, vat.KindEpublication},
		{"acct_iface", iface, []string{"DE"}, vat.KindDigitalService},
		{"acct_rebutted", rebutted, []string{"DE"}, vat.KindDigitalService},
	}
	var file httpserver.AccountsFile
	for _, p := range profiles {
		file.Accounts = append(file.Accounts, httpserver.AccountEntry{ID: p.id, KeyHashes: []string{httpserver.HashKey("sk_test_" + p.id + "_0123456789")}, Seller: p.seller})
	}
	f, _ := serveAccounts(t, file)
	n := 0
	var table []string
	for _, p := range profiles {
		key := "sk_test_" + p.id + "_0123456789"
		for _, buyer := range p.buyers {
			n++
			name := p.id + "→" + buyer
			o := map[string]any{"txHash": txHash(930000 + n), "consumerCountry": buyer, "supplyKind": p.kind}
			if p.seller.ElectronicInterface {
				o["underlyingProvider"] = map[string]any{"name": "Weather Tools Inc."}
			}
			r := f.do("POST", "/settlements", key, mustJSON(t, settlement(o)))
			var rec fiscal.Record
			if r.status != 201 || json.Unmarshal(r.body, &rec) != nil {
				t.Fatalf("%s: settlements %d %s", name, r.status, r.body)
			}
			cl := rec.Classification
			st := doorAnswer{status: cl.Status, regime: cl.Regime, taxing: cl.TaxingCountry, rate: rateOf(cl.RatePercent)}
			stReasons := codesOf(cl.Reasons, rec.ReviewReasons)

			ev := map[string]any{
				"payment.txHash": txHash(940000 + n),
				"seller":         map[string]any{"legalName": p.seller.LegalName, "country": p.seller.Country, "overThreshold": true},
				"buyer.country":  buyer,
				"supply.kind":    p.kind,
			}
			e := f.do("POST", "/v1/fiscal-events", key, mustJSON(t, fiscalEventBody(ev)))
			var evd struct{ Determination vat.Determination }
			if e.status != 201 || json.Unmarshal(e.body, &evd) != nil {
				t.Fatalf("%s: fiscal-events %d %s", name, e.status, e.body)
			}
			d := evd.Determination
			fe := doorAnswer{status: d.Status, regime: d.Regime, taxing: d.TaxingCountry, rate: rateOf(d.RatePercent)}

			c := f.do("POST", "/v1/capabilities/check", key, mustJSON(t, map[string]any{
				"seller_country": p.seller.Country, "buyer_country": buyer, "supply_type": p.kind, "buyer_type": "B2C", "supply_date": "2026-04-10",
				"payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}}))
			var chk struct {
				DeterminationCoverage struct {
					Status         string
					Reasons        []vat.Reason
					Classification *vat.Determination
				} `json:"determination_coverage"`
			}
			if c.status != 200 || json.Unmarshal(c.body, &chk) != nil {
				t.Fatalf("%s: check %d %s", name, c.status, c.body)
			}
			dc := chk.DeterminationCoverage
			ca := doorAnswer{status: map[string]string{"determined": vat.StatusDetermined, "manual_review": vat.StatusManualReview}[dc.Status]}
			if k := dc.Classification; k != nil {
				ca.regime, ca.taxing, ca.rate = k.Regime, k.TaxingCountry, rateOf(k.RatePercent)
			}
			caReasons := codesOf(dc.Reasons)
			if !st.same(ca) || !sameReviewCodes(stReasons, caReasons) {
				t.Errorf("%s: settlements %s %v, capabilities %s %v", name, st, stReasons, ca, caReasons)
			}
			// A fiscal event of the account's own seller decides on the
			// account's profile too; its body has no underlyingProvider, so
			// an interface's event waits for the provider.
			if p.seller.ElectronicInterface && !p.seller.Art9aRebutted {
				if d.Status != vat.StatusManualReview || !slices.Contains(codesOf(d.Reasons), vat.ReasonUnderlyingProviderMissing) {
					t.Errorf("%s: fiscal event %s %v, want underlying_provider_missing", name, fe, codesOf(d.Reasons))
				}
			} else if !st.same(fe) {
				t.Errorf("%s: settlements %s, fiscal-events %s", name, st, fe)
			}
			table = append(table, fmt.Sprintf("%-18s settlements %-40s %v | fiscal-events %-32s | capabilities %-32s %v", name, st.String(), stReasons, fe.String(), ca.String(), caReasons))
		}
	}
	t.Logf("account profiles through the doors:\n%s", strings.Join(table, "\n"))
}

// codesOf lists the distinct review-relevant codes of the lists given.
func codesOf(lists ...[]vat.Reason) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l {
			if !slices.Contains(out, r.Code) {
				out = append(out, r.Code)
			}
		}
	}
	return out
}

// sameReviewCodes compares the determination's review reasons, leaving
// out what only recording knows (the invoice, the rate, the evidence).
func sameReviewCodes(a, b []string) bool {
	keep := func(l []string) []string {
		var out []string
		for _, c := range l {
			switch c {
			case "invoice_rules_failed", "buyer_address_missing", "national_rate_unavailable", "national_rate_required",
				"fx_rate_unavailable", vat.ReasonLocationSingleAssertion:
				continue
			}
			out = append(out, c)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(keep(a), keep(b))
}
