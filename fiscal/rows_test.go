package fiscal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestDecisionRowsThroughEngine drives the rows of the decision table (the
// README's "VAT rules"; the vat package cites each rule's article) through
// Engine.Settle, from the seller profile in the
// account and the buyer facts in the request, and runs every invoice through
// validate-ubl: XSD always, CEN EN 16931 when EN16931_XSLT is set, and Peppol
// BIS 3.0 for the business invoices when PEPPOL_XSLT is set. The expected
// outcomes are the table's.
func TestDecisionRowsThroughEngine(t *testing.T) {
	fake := vies.NewFake()
	confirmed := time.Date(2026, 4, 10, 14, 31, 0, 0, time.UTC)
	// VIES discloses the name and address of Irish and French businesses,
	// not of German ones ("---"); those come from the request.
	for _, n := range []struct{ number, name, address string }{
		{"DE136695976", "---", "---"},
		{"IE6433435F", "EXAMPLE IRISH CUSTOMER LIMITED", "1 CUSTOMER ROAD\nDUBLIN 2"},
		{"FR40303265045", "SA EXEMPLE", "12 RUE DE L'EXEMPLE\n75001 PARIS"},
	} {
		fake.Set(n.number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: n.number[:2], Number: n.number[2:],
			Name: n.name, Address: n.address, RequestIdentifier: "WAPI" + n.number, RequestDate: confirmed})
	}
	fake.Set("DE812847601", vies.Result{Status: vies.StatusInvalid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "812847601", Fault: vies.FaultInvalid, RequestDate: confirmed})

	underThreshold := irishSeller
	underThreshold.OverThreshold = false
	nonEU := fiscal.Seller{LegalName: "Example API Inc.", VATNumber: "EU372022452", LegalID: "EIN 12-3456789", Country: "US",
		Address: fiscal.Address{Street: "1 Market Street", City: "San Francisco", PostalCode: "94105"}}
	uk := fiscal.Seller{LegalName: "Example UK Ltd", VATNumber: "GB980780684", LegalID: "CRN 01234567", Country: "GB",
		Address: fiscal.Address{Street: "1 High Street", City: "London", PostalCode: "EC1A 1AA"}, UKRateAgreement: "HMRC VWET agreement 2026/0001 (test)"}
	ukNoRate := uk
	ukNoRate.UKRateAgreement = ""
	sellers := map[string]fiscal.Seller{"ie": irishSeller, "ie-under": underThreshold, "us": nonEU, "gb": uk, "gb-no-rate": ukNoRate}
	var list []fiscal.Account
	for _, id := range []string{"gb", "gb-no-rate", "ie", "ie-under", "us"} {
		list = append(list, fiscal.Account{ID: id, Seller: sellers[id]})
	}
	e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: list, VIES: fake, Rand: &fiscaltest.Rand{}, FX: fiscaltest.SyntheticFX(t),
		Clock: func() time.Time { return time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC) }, Recheck: fiscal.RecheckPolicy{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	cases := []struct {
		row, seller, country, postal, vatNumber, kind string
		status, regime, category, rate, taxing        string
		peppol                                        bool
		spec                                          string
		reason                                        string // of a record pending review: a reason it must give
	}{
		{"1 domestic B2C", "ie", "IE", "", "", "", "PROCESSED", "DOMESTIC", "S", "23", "IE", false, receipt.SpecV4, ""},
		{"1 domestic B2B", "ie", "IE", "", "IE6433435F", "", "PROCESSED", "DOMESTIC", "S", "23", "IE", true, receipt.SpecV4, ""},
		{"2 under the Art. 59c threshold", "ie-under", "DE", "", "", "", "PROCESSED", "DOMESTIC", "S", "23", "IE", false, receipt.SpecV4, ""},
		{"3 OSS union", "ie", "DE", "", "", "", "PROCESSED", "OSS_B2C", "S", "19", "DE", false, receipt.SpecV4, ""},
		{"3 OSS union, fractional rate", "ie", "FI", "", "", "", "PROCESSED", "OSS_B2C", "S", "25.5", "FI", false, receipt.SpecV4, ""},
		{"4 OSS non-union", "us", "FR", "", "", "", "PROCESSED", "OSS_B2C", "S", "20", "FR", false, receipt.SpecV4, ""},
		{"5 reverse charge", "ie", "DE", "", "DE136695976", "", "PROCESSED", "REVERSE_CHARGE_B2B", "AE", "0", "DE", true, receipt.SpecV4, ""},
		{"5 reverse charge into France", "ie", "FR", "", "FR40303265045", "", "PROCESSED", "REVERSE_CHARGE_B2B", "AE", "0", "FR", true, receipt.SpecV4, ""},
		// A seller identified only under the non-Union scheme has no
		// number for a business invoice (Art. 362), and EN 16931 wants
		// the seller's VAT identifier on a reverse charge (BR-AE-02).
		{"6 reverse charge, non-EU seller", "us", "DE", "", "DE136695976", "", "PENDING_MANUAL_REVIEW", "", "", "", "", false, receipt.SpecV4, invoicelaw.ReasonInvoiceRulesFailed},
		{"7 invalid number → B2C", "ie", "DE", "", "DE812847601", "", "PROCESSED", "OSS_B2C", "S", "19", "DE", false, receipt.SpecV4, ""},
		{"9 outside the EU", "ie", "US", "", "", "", "PROCESSED", "OUTSIDE_SCOPE", "O", "", "", false, receipt.SpecV4, ""},
		{"9 Canary Islands by postal code", "ie", "ES", "35001", "", "", "PROCESSED", "OUTSIDE_SCOPE", "O", "", "", false, receipt.SpecV4, ""},
		{"9 Åland by postal code", "ie", "FI", "22100", "", "", "PROCESSED", "OUTSIDE_SCOPE", "O", "", "", false, receipt.SpecV4, ""},
		{"Monaco is France", "ie", "MC", "", "", "", "PROCESSED", "OSS_B2C", "S", "20", "FR", false, receipt.SpecV4, ""},
		{"10 supply kind not covered", "ie", "DE", "", "", "consulting", "PENDING_MANUAL_REVIEW", "", "", "", "", false, receipt.SpecV4, ""},
		{"zero-rated e-book", "ie", "IE", "", "", "ebook", "PROCESSED", "DOMESTIC", "Z", "0", "IE", false, receipt.SpecV4, ""},
		{"U1 UK domestic", "gb", "GB", "", "", "", "PROCESSED", "UK_DOMESTIC", "S", "20", "GB", false, receipt.SpecV4, ""},
		{"U1 UK e-book zero-rated", "gb", "GB", "", "", "ebook", "PROCESSED", "UK_DOMESTIC", "Z", "0", "GB", false, receipt.SpecV4, ""},
		{"U5 UK seller to an EU consumer", "gb", "DE", "", "", "", "PROCESSED", "OSS_B2C", "S", "19", "DE", false, receipt.SpecV4, ""},
		{"U1 UK domestic, no rate HMRC accepts", "gb-no-rate", "GB", "", "", "", "PENDING_MANUAL_REVIEW", "", "", "", "", false, receipt.SpecV4, invoicelaw.ReasonNationalRateRequired},
	}
	dir := t.TempDir()
	var en16931, peppol []string
	for i, c := range cases {
		req := request(1000+i, "119.00", c.country, "2026-04-10T14:30:00Z")
		req.ConsumerPostalCode, req.ConsumerVATNumber, req.SupplyKind = c.postal, c.vatNumber, c.kind
		if strings.HasPrefix(c.vatNumber, "DE") {
			req.ConsumerName = "Beispiel GmbH"
			req.ConsumerAddress = &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}
		}
		books, err := e.Books(c.seller)
		if err != nil {
			t.Fatal(err)
		}
		res, err := books.Settle(context.Background(), req, "")
		if err != nil {
			t.Fatalf("row %s: %v", c.row, err)
		}
		r := res.Record
		rate := ""
		if r.Classification.RatePercent != nil {
			rate = r.Classification.RatePercent.String()
		}
		got := fmt.Sprint(r.ReviewStatus, " ", r.Classification.Regime, " ", r.Classification.Category, " ", rate, " ", r.Classification.TaxingCountry)
		want := fmt.Sprint(c.status, " ", c.regime, " ", c.category, " ", c.rate, " ", c.taxing)
		if c.status != "PROCESSED" {
			got = r.ReviewStatus
			want = c.status
		}
		if got != want {
			t.Errorf("row %s: got %s, want %s (review reasons %v)", c.row, got, want, r.ReviewReasons)
			continue
		}
		if c.reason != "" && !slices.ContainsFunc(r.ReviewReasons, func(x vat.Reason) bool { return x.Code == c.reason }) {
			t.Errorf("row %s: reasons %v, want %s", c.row, r.ReviewReasons, c.reason)
		}
		rc, err := e.Receipt(context.Background(), r.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		jwks, _ := e.JWKS()
		claims, err := receipt.Verify(rc, jwks, e.LogVerifierKey())
		if err != nil || claims.Spec != c.spec {
			t.Errorf("row %s: receipt %v, spec %v want %s", c.row, err, claims, c.spec)
		}
		if r.Invoice == nil {
			continue
		}
		if isPeppol := strings.Contains(r.Invoice.Profile, "peppol"); isPeppol != c.peppol {
			t.Errorf("row %s: Peppol invoice %v, want %v", c.row, isPeppol, c.peppol)
		}
		ubl, _, err := books.Invoice(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.category == "O" && (strings.Contains(string(ubl), "PartyTaxScheme") || strings.Contains(string(ubl), "IE1234567T")) {
			t.Errorf("row %s: an O invoice carries a VAT id (BR-O-02)", c.row)
		}
		f := filepath.Join(dir, fmt.Sprintf("%02d.xml", i))
		if err := os.WriteFile(f, ubl, 0o644); err != nil {
			t.Fatal(err)
		}
		if c.peppol {
			peppol = append(peppol, f)
		} else {
			en16931 = append(en16931, f)
		}
	}
	validateUBL(t, en16931, false)
	validateUBL(t, peppol, true)
}
