package invoicelaw_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestBuyerPartyCountryFromEvidence: a customer located by items of
// location evidence alone (Art. 24b(d) Implementing Regulation (EU) No
// 282/2011: two non-contradictory items of Art. 24f, no consumerCountry)
// lives where the items settle, and the invoice's buyer address states that
// country (BT-55, required by BR-11). BuyerParty left it empty, so every such
// sale, decided and taxed where the items place the customer, went to review
// with invoice_rules_failed (BR-11). The country is the ISO 3166-1 code of the
// settled place of supply (a special territory's state, as for IC or EA
// given as the country), and a country the buyer states still wins.
func TestBuyerPartyCountryFromEvidence(t *testing.T) {
	at := time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC)
	items := func(cc string) []vat.Evidence {
		return []vat.Evidence{
			{Kind: vat.EvidenceBillingAddress, Country: cc, Source: vat.EvidenceSourceCustomer},
			{Kind: vat.EvidenceIPAddress, Country: cc, Source: vat.EvidenceSourceMerchant},
		}
	}
	for _, c := range []struct {
		evidence, country string // the items' country, the buyer's stated one
		want              string
	}{
		{"DE", "", "DE"},
		{"EL", "", "GR"},
		{"IC", "", "ES"}, // Canary Islands: Spain in ISO 3166-1 (BR-CL-14)
		{"AX", "", "AX"},
		{"XI", "", "GB"},
		{"DE", "DE", "DE"},
	} {
		det := vat.Determine(vat.Input{
			Seller: vat.Seller{Country: "IE", OverThreshold: true},
			Buyer:  vat.Buyer{Country: c.country, Evidence: items(c.evidence)},
			Supply: vat.Supply{Kind: vat.KindDigitalService, Date: at},
		})
		if det.LocationEvidence == nil || det.LocationEvidence.Country == "" {
			t.Fatalf("%s: the items settle no location: %+v", c.evidence, det)
		}
		p, _ := invoicelaw.BuyerParty(det, invoicelaw.Buyer{Country: c.country})
		if p.Country != c.want {
			t.Errorf("items in %s, buyer country %q: invoice country %q, want %q (settled %s)", c.evidence, c.country, p.Country, c.want, det.LocationEvidence.Country)
		}
	}
}

// TestAddressReasonWithoutRegistry: a business customer whose number no
// registry was asked about (a number outside VIES and HMRC, such as a
// Swiss UID) and who gave no address: the reason says no registry was
// asked. It said "the registry () disclosed no address", naming an empty
// registry as if one had answered.
func TestAddressReasonWithoutRegistry(t *testing.T) {
	r := invoicelaw.AddressReason(invoicelaw.Buyer{Country: "CH", Registry: &vies.Result{Status: vies.StatusInvalid, Number: "CHE116281710", Fault: "SYNTAX"}}, []string{"name", "street", "town"})
	if strings.Contains(r.Detail, "()") || !strings.Contains(r.Detail, "no registry") {
		t.Errorf("detail %q: want it to say that no registry was asked", r.Detail)
	}
}

// TestBuyerFactsDiffer names the business terms two customer parties
// state differently, in the order of EN 16931 BG-7, none when alike.
func TestBuyerFactsDiffer(t *testing.T) {
	a := ubl.Party{Name: "A", VATNumber: "DE136695976", Street: "1 Road", City: "Berlin", PostalCode: "10115", Country: "DE"}
	if got := invoicelaw.BuyerFactsDiffer(a, a); len(got) != 0 {
		t.Fatalf("one party against itself: %v", got)
	}
	b := a
	b.Name, b.Country = "B", "AT"
	if got := strings.Join(invoicelaw.BuyerFactsDiffer(a, b), "; "); got != "name (BT-44); country (BT-55)" {
		t.Fatalf("differing name and country: %q", got)
	}
}
