package invoicelaw_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestCheck: what an account lacks is told before any sale, with
// the seller's field and the rule.
func TestCheck(t *testing.T) {
	full := map[string]invoicelaw.Seller{}
	for _, s := range fiscaltest.LawSellers() {
		full[s.ID] = s.Seller.ForInvoiceLaw()
	}
	type want struct{ country, sale, field, rule string }
	for _, c := range []struct {
		name   string
		seller invoicelaw.Seller
		want   []want // nil: invoiceable throughout
	}{
		{"full German", full["de-full"], nil},
		{"full Polish", full["pl-full"], nil},
		{"full Swedish", full["se-full"], nil},
		{"full Danish", full["dk-full"], nil},
		{"German without contact", invoicelaw.Seller{LegalName: "X GmbH", Country: "DE", VATNumber: "DE812847601", Address: invoicelaw.Address{Street: "a", City: "Berlin", PostalCode: "10115"}},
			[]want{{"DE", invoicelaw.SaleB2BDomestic, "/seller/contact", "DE-R-002"}, {"DE", invoicelaw.SaleB2BDomestic, "/seller/contact/name", "DE-R-005"},
				{"DE", invoicelaw.SaleB2BDomestic, "/seller/contact/telephone", "DE-R-006"}, {"DE", invoicelaw.SaleB2BDomestic, "/seller/contact/email", "DE-R-007"}}},
		{"Irish without VAT number", invoicelaw.Seller{LegalName: "X Ltd", Country: "IE"},
			[]want{{"IE", invoicelaw.SaleB2C, "/seller/vatNumber", "BR-S-02"}, {"IE", invoicelaw.SaleB2C, "/seller/legalId", "BR-CO-26"}}},
		{"Dutch KvK without scheme", invoicelaw.Seller{LegalName: "X BV", Country: "NL", VATNumber: "NL123456789B13", LegalID: "12345678",
			Address: invoicelaw.Address{Street: "a", City: "Amsterdam", PostalCode: "1012 LG"}},
			[]want{{"NL", invoicelaw.SaleB2BDomestic, "/seller/legalIdScheme", "NL-R-003"}, {"NL", invoicelaw.SaleB2BReverseCharge, "/seller/legalIdScheme", "NL-R-003"}}},
		{"Greek", full["gr-full"], []want{{"GR", invoicelaw.SaleEveryB2B, "MyDATA", "GR-R-004-1"}, {"GR", invoicelaw.SaleEveryB2B, "ID", "GR-R-001"}}},
		{"UK VRN without HMRC agreement", invoicelaw.Seller{LegalName: "X Ltd", Country: "GB", VATNumber: "GB980780684", LegalID: "CRN 1"},
			[]want{{"GB", invoicelaw.SaleB2C, "/seller/ukRateAgreement", "VAT-Art230"}}},
		{"non-Union OSS without legal id", invoicelaw.Seller{LegalName: "X Inc", Country: "US", VATNumber: "EU372022452",
			Registrations: []vat.Registration{{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372022452"}}},
			[]want{{"IE", invoicelaw.SaleB2C, "/seller/legalId", "BR-CO-26"}}},
	} {
		err := invoicelaw.Check(c.seller)
		var ie *invoicelaw.Error
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v, want problems", c.name, err)
			continue
		}
		var got []want
		for _, p := range ie.Problems {
			got = append(got, want{p.TaxCountry, p.Sale, p.Field, p.Rule})
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

// TestNationalCurrencyReason: what the capability check predicts about the
// national currency agrees with what recording gives.
func TestNationalCurrencyReason(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC)
	synthetic := fiscaltest.SyntheticFX(t)
	embedded, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	det := func(seller, buyer string) vat.Determination {
		return vat.Determine(vat.Input{Seller: vat.Seller{Country: seller, OverThreshold: true}, Buyer: vat.Buyer{Country: buyer},
			Supply: vat.Supply{Kind: vat.KindDigitalService, Date: at}})
	}
	agreed := invoicelaw.Seller{Country: "US", UKRateAgreement: "ref 1"}
	for _, c := range []struct {
		name   string
		det    vat.Determination
		seller invoicelaw.Seller
		src    fx.Source
		want   string
	}{
		{"PL domestic, ECB feed", det("PL", "PL"), invoicelaw.Seller{Country: "PL"}, synthetic, ""},
		{"PL domestic, USD only", det("PL", "PL"), invoicelaw.Seller{Country: "PL"}, embedded, invoicelaw.ReasonNationalRateUnavailable},
		{"IE OSS to PL: Irish rules, euro", det("IE", "PL"), invoicelaw.Seller{Country: "IE"}, embedded, ""},
		// Denmark accepts the VAT amount in euro (momsbekendtgørelsen § 97,
		// stk. 2): an invoice in euro needs no DKK, so no DKK rate is awaited.
		{"DK domestic, USD only: the euro is accepted", det("DK", "DK"), invoicelaw.Seller{Country: "DK"}, embedded, ""},
		{"SE domestic, USD only", det("SE", "SE"), invoicelaw.Seller{Country: "SE"}, embedded, invoicelaw.ReasonNationalRateUnavailable},
		{"UK B2C without agreement", det("US", "GB"), invoicelaw.Seller{Country: "US"}, synthetic, invoicelaw.ReasonNationalRateRequired},
		{"UK B2C with HMRC's agreement", det("US", "GB"), agreed, synthetic, ""},
	} {
		r, err := invoicelaw.NationalCurrencyReason(ctx, c.src, "", c.det, c.seller, at)
		got := ""
		if r != nil {
			got = r.Code
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		}
	}
}

// TestNationalCurrencyReasonRateOfTheDay: under the "rate of the day"
// (fx.ForDayOrPrevious; Art. 91(2) third subparagraph Directive
// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// the national rate is the one of the supply's day in the taxing state, as
// the EUR amount's (Art. 230: "using the conversion mechanism provided for
// in Article 91"). A Romanian sale at 21:30 UTC on 13 April 2026, the last
// day of the SYNTHETIC feed, is on 14 April in Bucharest: its RON rate is
// not out, which the check must predict (national_rate_unavailable), not
// find 13 April's. Under the latest published at the instant, 13 April's
// applies.
func TestNationalCurrencyReasonRateOfTheDay(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 4, 13, 21, 30, 0, 0, time.UTC)
	det := vat.Determine(vat.Input{Seller: vat.Seller{Country: "RO", OverThreshold: true}, Buyer: vat.Buyer{Country: "RO"},
		Supply: vat.Supply{Kind: vat.KindDigitalService, Date: at}})
	if det.SupplyDate != "2026-04-14" {
		t.Fatalf("supply date %s (%s), want 2026-04-14 in Bucharest", det.SupplyDate, det.TimeZone)
	}
	for _, c := range []struct {
		policy fx.Policy
		want   string
	}{
		{fx.ForDayOrPrevious, invoicelaw.ReasonNationalRateUnavailable},
		{fx.LatestPublishedAt, ""},
	} {
		r, err := invoicelaw.NationalCurrencyReason(ctx, fiscaltest.SyntheticFX(t), c.policy, det, invoicelaw.Seller{Country: "RO"}, at)
		got := ""
		if r != nil {
			got = r.Code
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.policy, got, err, c.want)
		}
	}
}
