package httpserver_test

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/vat"
)

// refusedAt is the JSON pointer a refusal names, "" for none.
func refusedAt(err error) string {
	var fe *fiscal.Error
	var we *wire.FieldError
	var me *vat.ManualError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &me):
		return me.Field
	case errors.As(err, &fe):
		return fe.Field
	case errors.As(err, &we):
		return we.Field
	}
	return "?" + err.Error()
}

// TestTextMaxLengthsAreTheServers: every maxLength the OpenAPI document
// states for a member of a request body is the length the server refuses
// beyond (a 400 naming the member) and accepts up to, counted in characters
// as JSON Schema counts them (a value of maxLength "é" is accepted too);
// and each text member whose length the server bounds states it. Before,
// no text member had a maxLength, the Limits paragraph said "text members
// up to 200 characters" while note takes 2,000, and VAT numbers, postal
// codes and notes were bounded in bytes, not characters.
func TestTextMaxLengthsAreTheServers(t *testing.T) {
	settle := func(member string) func(string) error {
		return func(v string) error {
			body := settlement(map[string]any{member: v, "consumerCountry": "DE"})
			var req fiscal.SettlementRequest
			if err := json.Unmarshal(mustJSON(t, body), &req); err != nil {
				t.Fatal(err)
			}
			_, err := req.Payment(testNow)
			return err
		}
	}
	resolve := func(set func(r *fiscal.Resolution, v string)) func(string) error {
		return func(v string) error {
			r := fiscal.Resolution{ResolvedBy: "ops"}
			set(&r, v)
			n, err := r.Normalised()
			if err != nil || n.Determination == nil {
				return err
			}
			// A determination is checked by vat.DetermineManually too,
			// once the record is read (a 422 naming the member).
			m := n.Determination
			_, err = vat.DetermineManually(vat.Input{}, vat.Manual{Regime: m.Regime, TaxingCountry: m.TaxingCountry, RatePercent: m.RatePercent, Reason: m.Reason, DecidedBy: n.ResolvedBy})
			if f := refusedAt(err); strings.HasPrefix(f, "/determination/reason") {
				return err
			}
			return nil
		}
	}
	buyer := func(set func(b *fiscal.ResolutionBuyer, v string)) func(string) error {
		return resolve(func(r *fiscal.Resolution, v string) {
			r.Buyer = &fiscal.ResolutionBuyer{Country: "DE"}
			set(r.Buyer, v)
		})
	}
	manual := func(r *fiscal.Resolution, v string) {
		r.Determination = &fiscal.ManualDetermination{Regime: vat.RegimeDomestic, TaxingCountry: "DE", RatePercent: "19", Reason: v}
	}
	type probe struct {
		field     string
		asciiOnly bool // a token: other characters are refused for their form
		check     func(string) error
	}
	probes := map[string]probe{
		"ManualDetermination.reason":         {"/determination/reason", false, resolve(manual)},
		"Resolution.note":                    {"/note", false, resolve(func(r *fiscal.Resolution, v string) { r.Note = v })},
		"Resolution.resolvedBy":              {"/resolvedBy", false, resolve(func(r *fiscal.Resolution, v string) { r.ResolvedBy = v; r.Note = "n" })},
		"ResolutionBuyer.consumerName":       {"/buyer/consumerName", false, buyer(func(b *fiscal.ResolutionBuyer, v string) { b.Name = v })},
		"ResolutionBuyer.consumerPostalCode": {"/buyer/consumerPostalCode", false, buyer(func(b *fiscal.ResolutionBuyer, v string) { b.PostalCode = v })},
		"ResolutionBuyer.consumerVatNumber":  {"/buyer/consumerVatNumber", false, buyer(func(b *fiscal.ResolutionBuyer, v string) { b.VATNumber = v })},
	}
	eventSeller := func(set func(s *parties.Seller, v string)) func(string) error {
		return func(v string) error {
			in := parties.Seller{Country: "DE"}
			set(&in, v)
			_, err := parties.ParseSeller("/seller", in, false)
			return err
		}
	}
	eventBuyer := func(set func(b *parties.Buyer, v string)) func(string) error {
		return func(v string) error {
			in := parties.Buyer{Country: "DE"}
			set(&in, v)
			_, err := parties.ParseBuyer("/buyer", in)
			return err
		}
	}
	eventSupply := func(set func(s *parties.Supply, v string)) func(string) error {
		return func(v string) error {
			in := parties.Supply{Kind: vat.KindDigitalService}
			set(&in, v)
			_, _, err := parties.ParseSupply("/supply", in)
			return err
		}
	}
	probes["EventSeller.legalName"] = probe{"/seller/legalName", false, eventSeller(func(s *parties.Seller, v string) { s.LegalName = v })}
	probes["EventSeller.vatNumber"] = probe{"/seller/vatNumber", false, eventSeller(func(s *parties.Seller, v string) { s.VATNumber = v })}
	probes["EventBuyer.name"] = probe{"/buyer/name", false, eventBuyer(func(b *parties.Buyer, v string) { b.Name = v })}
	probes["EventBuyer.vatNumber"] = probe{"/buyer/vatNumber", false, eventBuyer(func(b *parties.Buyer, v string) { b.VATNumber = v })}
	probes["EventBuyer.postalCode"] = probe{"/buyer/postalCode", false, eventBuyer(func(b *parties.Buyer, v string) { b.PostalCode = v })}
	probes["EventSupply.description"] = probe{"/supply/description", false, eventSupply(func(s *parties.Supply, v string) { s.Description = v })}
	probes["EventSupply.kind"] = probe{"/supply/kind", true, eventSupply(func(s *parties.Supply, v string) { s.Kind = v })}
	for _, c := range []string{"SettlementRequest", "SimulateRequest"} {
		for _, m := range []string{"consumerName", "description", "consumerVatNumber", "consumerPostalCode", "supplyKind"} {
			probes[c+"."+m] = probe{"/" + m, m == "supplyKind", settle(m)}
		}
	}

	f := newFixture(t)
	doc := f.openAPIDocument(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	// A refund's reason, over HTTP: a sale refunded a cent at a time.
	sale := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if sale.status != 201 {
		t.Fatalf("settlement: %d %s", sale.status, sale.body)
	}
	refundsOf := "/settlements/" + sale.json(t)["id"].(string) + "/refunds"
	probes["RefundRequest.reason"] = probe{"/reason", false, func(v string) error {
		r := f.do("POST", refundsOf, keyA, mustJSON(t, map[string]any{"amountUsdc": "0.01", "reason": v}))
		if r.status == 400 {
			p := r.json(t)
			field, _ := p["field"].(string)
			return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: p["detail"].(string)}
		}
		if r.status != 201 {
			t.Fatalf("refund with a reason of %d characters: %d %s", len([]rune(v)), r.status, r.body)
		}
		return nil
	}}
	seen := map[string]bool{}
	var names []string
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		props, _ := schemas[n].(map[string]any)["properties"].(map[string]any)
		for member, s := range props {
			key := n + "." + member
			max, ok := s.(map[string]any)["maxLength"].(float64)
			if !ok {
				continue
			}
			seen[key] = true
			p, ok := probes[key]
			if !ok {
				t.Errorf("%s: maxLength %v, which no probe of this test checks against the server", key, max)
				continue
			}
			n := int(max)
			for _, c := range []struct {
				v    string
				want bool
			}{
				{strings.Repeat("a", n), false}, {strings.Repeat("a", n+1), true}, {strings.Repeat("é", n), false},
			} {
				if p.asciiOnly && !strings.HasPrefix(c.v, "a") {
					continue
				}
				got := refusedAt(p.check(c.v))
				if refused := got == p.field; refused != c.want || (!refused && got != "") {
					t.Errorf("%s (maxLength %d): %d characters of %q: refused at %q, want refused at %s: %v", key, n, len([]rune(c.v)), c.v[:1], got, p.field, c.want)
				}
			}
		}
	}
	for key := range probes {
		if !seen[key] {
			t.Errorf("%s: the server bounds its length, the document states no maxLength", key)
		}
	}
	// The Limits paragraph names the members beyond the usual length.
	info, _ := doc["info"].(map[string]any)["description"].(string)
	if i := strings.Index(info, "**Limits**"); i < 0 || !strings.Contains(info[i:], "`note`") {
		t.Errorf("the Limits paragraph does not name note's length: %.400s", info[max(i, 0):])
	}
}
