package refunds_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestSweepOfTheOtherMemberStates is a conformance sweep of what the
// invoicing-law table (fiscaltest.LawSellers) leaves out: sellers
// established in the twelve member states it has no seller of, each
// selling one atomic unit of USDC (0.000001) to a consumer of its own
// state, a reverse-charge service to an Austrian business (Art. 44, 196,
// 226(11a) Directive 2006/112/EC) and a sale into a special territory or
// outside the EU: the Canary Islands and a US consumer (outside the EU VAT
// territory, Art. 6(1)(b); category O), the Azores and Madeira (Portugal
// with rates of their own), a Monegasque business (Monaco is treated as
// France, Art. 7(1)) and a business in Northern Ireland (XI: services
// follow UK rules). Every sale is PROCESSED and refunded in full; every
// invoice and credit note passes XSD, CEN EN 16931 and, for business
// customers, Peppol BIS 3.0; a reverse-charge document states "Reverse
// charge" and both VAT numbers (Art. 226(3), (4), (11a)), and a credit
// note names the invoice it corrects (Art. 219).
func TestSweepOfTheOtherMemberStates(t *testing.T) {
	sellers := []struct{ country, vatNumber string }{
		{"BE", "BE0428759497"}, {"CY", "CY10259033P"}, {"EE", "EE100594102"}, {"FI", "FI20774740"},
		{"HR", "HR33392005961"}, {"LT", "LT119511515"}, {"LU", "LU15027442"}, {"LV", "LV40003521600"},
		{"MT", "MT11679112"}, {"PT", "PT501964843"}, {"SI", "SI50223054"}, {"SK", "SK2022749619"},
	}
	type buyer struct {
		name, country, postalCode, vatNumber string
		category                             string // UNCL5305 of the supply
	}
	austria := buyer{"AT business", "AT", "1060", "ATU13585627", "AE"}
	territories := []buyer{
		{"Canary Islands consumer", "ES", "35001", "", "O"},
		{"Azores consumer", "PT", "9500-001", "", "S"},
		{"Monaco business", "MC", "98000", "FR40303265045", "AE"},
		{"Northern Ireland business", "XI", "BT1 1AA", "XI980780684", "AE"},
		{"US consumer", "US", "10001", "", "O"},
		{"Madeira consumer", "PT", "9000-001", "", "S"},
	}
	var accounts []fiscal.Account
	for _, s := range sellers {
		accounts = append(accounts, fiscal.Account{ID: strings.ToLower(s.country), Seller: fiscal.Seller{
			LegalName: "Example " + s.country + " Seller", Country: s.country, VATNumber: s.vatNumber, OverThreshold: true,
			LegalID: "REG " + s.country + " 123456",
			Address: fiscal.Address{Street: "1 Example Street", City: "Example City", PostalCode: "1000"},
			Contact: fiscal.Contact{Name: "Accounts", Telephone: "+32 2 1234567", Email: "accounts@example.com"},
			// UK sales state the VAT in sterling at the ECB rate HMRC
			// agreed to (VAT tertiary legislation on valuation).
			UKRateAgreement: "HMRC VWET agreement 2026/0001 (test)",
			Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: s.country},
				{Scheme: vat.RegistrationOSSUnion, Country: s.country}, {Scheme: vat.RegistrationUKVRN, Country: "GB", Number: "GB100190874"}},
		}})
	}
	cfg := fiscaltest.Config(t, lawNow)
	cfg.Accounts = accounts
	cfg.FX = fiscaltest.SyntheticFX(t)
	registry := fiscaltest.LawVIES(lawNow)
	for number, r := range map[string]struct{ registry, name, address string }{
		"FR40303265045": {vies.RegistryVIES, "EXEMPLE MONACO SARL", "1 AVENUE DE LA COSTA\n98000 MONACO"},
		"XI980780684":   {vies.RegistryHMRC, "EXAMPLE NI CUSTOMER LTD", "1 CUSTOMER ROAD\nBELFAST\nBT1 1AA"},
	} {
		registry.Set(number, vies.Result{Status: vies.StatusValid, Registry: r.registry, CountryCode: number[:2], Number: number[2:],
			Name: r.name, Address: r.address, RequestIdentifier: "WAPI-" + number, RequestDate: lawNow})
	}
	cfg.VIES = registry
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	dir := t.TempDir()
	var en16931, peppol []string
	keep := func(name string, doc []byte, profile string) {
		f := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(f, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(profile, "peppol") {
			peppol = append(peppol, f)
		} else {
			en16931 = append(en16931, f)
		}
	}
	n := 0
	for i, a := range accounts {
		books := lawBooks(t, e, a.ID)
		sales := []struct {
			b      buyer
			amount string
		}{
			{buyer{"own consumer", a.Seller.Country, "", "", "S"}, "0.000001"},
			{austria, "119.00"},
			{territories[i%len(territories)], "119.00"},
		}
		for _, sale := range sales {
			n++
			what := fmt.Sprintf("%s seller → %s", a.Seller.Country, sale.b.name)
			req := fiscaltest.Request(4000+n, sale.amount, sale.b.country, "2026-04-10T14:30:00Z")
			req.ConsumerVATNumber, req.ConsumerPostalCode = sale.b.vatNumber, sale.b.postalCode
			req.ConsumerName = "Customer " + sale.b.name
			req.ConsumerAddress = &fiscal.Address{Street: "2 Customer Street", City: "Customer Town", PostalCode: sale.b.postalCode}
			r := settleOK(t, books, req)
			if r.ReviewStatus != fiscal.StatusProcessed {
				t.Errorf("%s: %s %v", what, r.ReviewStatus, r.ReviewReasons)
				continue
			}
			if r.Classification.Category != sale.b.category {
				t.Errorf("%s: category %s, want %s", what, r.Classification.Category, sale.b.category)
			}
			inv, _, err := books.Invoice(ctx, r.ID)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			res, err := refunds.Create(ctx, books, r.ID, refunds.Request{Reason: "service not delivered"}, "")
			if err != nil {
				t.Fatalf("%s: refund: %v", what, err)
			}
			cn, _, err := refunds.CreditNote(ctx, books, r.ID, res.Refund.ID)
			if err != nil {
				t.Fatalf("%s: credit note: %v", what, err)
			}
			if !bytes.Contains(cn, []byte("<cac:InvoiceDocumentReference>\n      <cbc:ID>"+r.Invoice.ID+"</cbc:ID>")) {
				t.Errorf("%s: the credit note does not name invoice %s", what, r.Invoice.ID)
			}
			for kind, doc := range map[string][]byte{"invoice": inv, "credit note": cn} {
				if sale.b.category != "AE" {
					continue
				}
				for _, want := range []string{"Reverse charge", "<cbc:CompanyID>" + sale.b.vatNumber + "</cbc:CompanyID>"} {
					if !bytes.Contains(doc, []byte(want)) {
						t.Errorf("%s: the %s lacks %q (Art. 226(4), (11a))", what, kind, want)
					}
				}
			}
			keep(r.ID, inv, r.Invoice.Profile)
			keep(res.Refund.ID, cn, res.Refund.CreditNote.Profile)
		}
	}
	fiscaltest.ValidateUBL(t, en16931, false)
	fiscaltest.ValidateUBL(t, peppol, true)
}
