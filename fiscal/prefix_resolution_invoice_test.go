package fiscal_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// buyerParty is the invoice's buyer (BG-7) as written.
var buyerParty = regexp.MustCompile(`(?s)<cac:AccountingCustomerParty>.*</cac:AccountingCustomerParty>`)

// buyerIDs are the identifiers of a buyer party: its electronic address
// (BT-49) and VAT identifier (BT-48).
var buyerIDs = regexp.MustCompile(`<cbc:EndpointID schemeID="[0-9]{4}">([^<]*)</cbc:EndpointID>|<cac:PartyTaxScheme>\s*<cbc:CompanyID>([^<]*)</cbc:CompanyID>`)

// TestInvoiceAfterResolutionOfPrefixlessNumber: a business customer gives
// its VAT number without its country prefix and the record waits for
// review; a person's resolution then changes the buyer. The invoice the
// resolution issues must identify the buyer by the number the registry
// confirmed, prefix included (Art. 226(4) Directive 2006/112/EC: the
// customer's VAT identification number, Art. 215: its prefix names the
// issuing state; EN 16931 BT-48, and Peppol's electronic address derived
// from it), and the revision must keep the note that the prefix was the
// engine's reading, with the number as the customer gave it. Three
// resolutions: a new name; a move to another country with a new number
// given without its prefix (read under the new country); the same digits
// given again with the country corrected (read under the corrected one).
func TestInvoiceAfterResolutionOfPrefixlessNumber(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	valid := func(n string) vies.Result {
		return vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: n[:2], Number: n[2:], RequestIdentifier: "WAPI-" + n, RequestDate: now,
			Name: "Kunde " + n, Address: "Hauptstr. 1, 10115 Berlin"}
	}
	cases := []struct {
		name                  string
		country, given        string // at the sale
		res                   fiscal.ResolutionBuyer
		wantNumber, wantGiven string
		wantCountry           string
	}{
		{"new name", "DE", "136695976", fiscal.ResolutionBuyer{Name: "Beispiel Handels GmbH"}, "DE136695976", "136695976", "DE"},
		{"moved, new prefix-less number", "DE", "136695976",
			fiscal.ResolutionBuyer{Country: "AT", VATNumber: "U13585627", Address: &fiscal.Address{Street: "Mariahilfer Straße 1", City: "Wien", PostalCode: "1060"}},
			"ATU13585627", "U13585627", "AT"},
		{"country corrected, digits given again", "AT", "136695976",
			fiscal.ResolutionBuyer{Country: "DE", VATNumber: "136695976", Address: &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}},
			"DE136695976", "136695976", "DE"},
	}
	dir := t.TempDir()
	var files []string
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fiscaltest.Config(t, now, irishSeller)
			fake := fiscaltest.NewHookVIES()
			fake.Set("DE136695976", recheckBusy) // the sale waits for review
			fake.Set("ATU13585627", valid("ATU13585627"))
			atBusy := recheckBusy
			atBusy.CountryCode = "AT"
			fake.Set("AT136695976", atBusy)
			cfg.VIES = fake
			cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
			e := fiscaltest.Engine(t, cfg)
			b := fiscaltest.Books(t, e, 0)
			ctx := context.Background()
			req := request(100+i, "100.00", c.country, "2026-04-10T14:30:00Z")
			req.ConsumerVATNumber = c.given
			req.ConsumerName = "Beispiel GmbH"
			req.ConsumerAddress = &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}
			if c.country == "AT" {
				req.ConsumerAddress.PostalCode = "1060"
			}
			sale, err := b.Settle(ctx, req, "")
			if err != nil {
				t.Fatal(err)
			}
			if sale.Record.ReviewStatus != fiscal.StatusPendingReview {
				t.Fatalf("sale: %s %v; want pending review", sale.Record.ReviewStatus, sale.Record.ReviewReasons)
			}
			fake.Set("DE136695976", valid("DE136695976"))
			rb := c.res
			res, err := b.Resolve(ctx, sale.Record.ID, fiscal.Resolution{ResolvedBy: "ops-1", Buyer: &rb}, "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil || r.Classification.Regime != vat.RegimeReverseChargeB2B {
				t.Fatalf("resolution: %s %s %v; want processed under the reverse charge with an invoice", r.ReviewStatus, r.Classification.Regime, r.ReviewReasons)
			}
			if r.Buyer.VATNumber != c.wantNumber || r.Buyer.VATNumberAsGiven != c.wantGiven || r.Buyer.Country != c.wantCountry {
				t.Errorf("record: buyer %s number %q given %q; want %s, %q given %q", r.Buyer.Country, r.Buyer.VATNumber, r.Buyer.VATNumberAsGiven, c.wantCountry, c.wantNumber, c.wantGiven)
			}
			if !slices.Contains(codes(r.Classification.Reasons), vat.ReasonVATNumberPrefixSupplied) {
				t.Errorf("reasons %v; want the note %s", codes(r.Classification.Reasons), vat.ReasonVATNumberPrefixSupplied)
			}
			doc, _, err := b.Invoice(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			party := buyerParty.Find(doc)
			ids := buyerIDs.FindAllSubmatch(party, -1)
			if len(ids) == 0 {
				t.Fatalf("the invoice names no buyer identifier:\n%s", party)
			}
			for _, m := range ids {
				if got := string(m[1]) + string(m[2]); got != c.wantNumber {
					t.Errorf("the invoice identifies the buyer as %q; want %s:\n%s", got, c.wantNumber, party)
				}
			}
			f := filepath.Join(dir, r.ID+".xml")
			if err := os.WriteFile(f, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		})
	}
	validateUBL(t, files, true)
}
