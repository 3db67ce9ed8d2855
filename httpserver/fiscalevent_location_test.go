package httpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFiscalEventTakesTheCustomersLocation: POST /settlements takes the
// customer's location evidence (Art. 24b, 24f Implementing Regulation
// 282/2011) and postal address (Art. 226(5) Directive 2006/112/EC), and a
// fiscal event, whose buyer is named in the body, takes them too, as
// buyer.locationEvidence and buyer.address (the names the stored event
// serves them under), checked by the same rules: the determination
// assesses the items, the event keeps them and the address, and a bad item
// or address is 400 naming its member under /buyer with the detail a
// settlement's gets, and records nothing. A review found the body refused
// with an unknown member, so a fiscal event could state neither.
func TestFiscalEventTakesTheCustomersLocation(t *testing.T) {
	f := newFixture(t)
	item := func(kind, country, source, value string) map[string]any {
		return map[string]any{"kind": kind, "country": country, "source": source, "provider": "test", "value": value}
	}
	two := []any{item("billing_address", "DE", "customer", "Unter den Linden 1"), item("ip_address", "DE", "merchant", "203.0.113.7")}
	address := map[string]any{"street": "Unter den Linden 1", "city": "Berlin", "postalCode": "10117"}
	resp := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{
		"payment.txHash": txHash(7100), "buyer.locationEvidence": two, "buyer.address": address})))
	if resp.status != 201 {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	var ev struct {
		Determination struct {
			Status           string
			LocationEvidence *struct{ Rule string }
		}
		Buyer struct {
			PostalCode       string
			LocationEvidence []struct{ Kind, Country string }
			Address          *struct{ Street, City, PostalCode, Country string }
		}
	}
	if err := json.Unmarshal(resp.body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Determination.Status != "DETERMINED" || ev.Determination.LocationEvidence == nil || ev.Determination.LocationEvidence.Rule != "two_items" {
		t.Errorf("determination %+v, want the two items assessed (two_items)", ev.Determination)
	}
	if len(ev.Buyer.LocationEvidence) != 2 || ev.Buyer.Address == nil || ev.Buyer.Address.Street != "Unter den Linden 1" || ev.Buyer.Address.Country != "DE" || ev.Buyer.PostalCode != "10117" {
		t.Errorf("buyer %+v, want the items, the address (country DE) and its postal code kept", ev.Buyer)
	}

	// The address is part of the request an Idempotency-Key stands for.
	keyed := func(street string) response {
		return f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(7103),
			"buyer.address": map[string]any{"street": street, "city": "Berlin", "postalCode": "10117"}})), "Idempotency-Key", "loc-1")
	}
	if r := keyed("Unter den Linden 1"); r.status != 201 {
		t.Fatalf("keyed: %d %s", r.status, r.body)
	}
	if r := keyed("Unter den Linden 1"); r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %q", r.status, r.header.Get("Idempotent-Replayed"))
	}
	assertProblem(t, keyed("Friedrichstraße 2"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")

	// Refusals: the fiscal event's member under /buyer, the settlement's at
	// its own name, the same detail; nothing recorded.
	badItem := []any{item("ip_address", "DE", "merchant", "203.0.113.7"), map[string]any{"kind": "ip_address", "country": "DE"}}
	for _, tc := range []struct {
		name                 string
		event, settlement    map[string]any
		eventField, setField string
	}{
		{"an item without its source", map[string]any{"buyer.locationEvidence": badItem}, map[string]any{"locationEvidence": badItem},
			"/buyer/locationEvidence/1/source", "/locationEvidence/1/source"},
		{"an address in another country", map[string]any{"buyer.address": map[string]any{"city": "Paris", "country": "FR"}},
			map[string]any{"consumerAddress": map[string]any{"city": "Paris", "country": "FR"}},
			"/buyer/address/country", "/consumerAddress/country"},
		{"an address with another postal code", map[string]any{"buyer.postalCode": "10115", "buyer.address": map[string]any{"city": "Berlin", "postalCode": "10117"}},
			map[string]any{"consumerPostalCode": "10115", "consumerAddress": map[string]any{"city": "Berlin", "postalCode": "10117"}},
			"/buyer/address/postalCode", "/consumerAddress/postalCode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := f.engine.Ledger().Size()
			tc.event["payment.txHash"] = txHash(7101)
			ev := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(tc.event)))
			assertProblem(t, ev, 400, "BAD_REQUEST", tc.eventField)
			tc.settlement["txHash"] = txHash(7102)
			st := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(tc.settlement)))
			assertProblem(t, st, 400, "BAD_REQUEST", tc.setField)
			if f.engine.Ledger().Size() != size {
				t.Errorf("a refused body wrote %d entries", f.engine.Ledger().Size()-size)
			}
			ed, _ := ev.json(t)["detail"].(string)
			sd, _ := st.json(t)["detail"].(string)
			// The details differ only in the member names.
			norm := strings.NewReplacer("/buyer/locationEvidence", "/locationEvidence", "/buyer/address", "/consumerAddress", "buyer/postalCode", "consumerPostalCode", "buyer/country", "consumerCountry")
			if norm.Replace(ed) != sd {
				t.Errorf("details differ:\n event      %s\n settlement %s", ed, sd)
			}
		})
	}
}
