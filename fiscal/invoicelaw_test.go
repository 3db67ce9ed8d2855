package fiscal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// lawBooks are the books of the table's seller id on e.
func lawBooks(t *testing.T, e *fiscal.Engine, id string) *fiscal.Books {
	t.Helper()
	b, err := e.Books(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lawBuyer(country string) fiscaltest.LawBuyer {
	for _, b := range fiscaltest.LawBuyers() {
		if b.Country == country {
			return b
		}
	}
	panic(country)
}

// settleOK settles req and returns the record, failing on an error.
func settleOK(t *testing.T, b *fiscal.Books, req fiscal.SettlementRequest) *fiscal.Record {
	t.Helper()
	res, err := b.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Record
}

// invoiceOf returns a PROCESSED record's invoice and writes it to dir.
func invoiceOf(t *testing.T, b *fiscal.Books, r *fiscal.Record, dir string) (string, string) {
	t.Helper()
	if r.ReviewStatus != fiscal.StatusProcessed || r.Invoice == nil {
		t.Fatalf("%s: %s %v", r.ID, r.ReviewStatus, r.ReviewReasons)
	}
	doc, _, err := b.Invoice(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, r.ID+".xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return string(doc), f
}

// excerpt returns the lines of doc that match any of the patterns, for the
// test log (and the issue's closing note).
func excerpt(doc string, patterns ...string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		for _, p := range patterns {
			if strings.Contains(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// element returns the text of the first <tag>...</tag> after from in doc.
func element(doc, from, tag string) string {
	i := strings.Index(doc, from)
	if i < 0 {
		return ""
	}
	m := regexp.MustCompile(`<` + regexp.QuoteMeta(tag) + `[^>]*>([^<]*)</` + regexp.QuoteMeta(tag) + `>`).FindStringSubmatch(doc[i:])
	if m == nil {
		return ""
	}
	return m[1]
}

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// TestVATInPLN: a Polish seller's domestic sale at 23 % states the VAT in
// PLN (Art. 230; Polish VAT Act art. 106e(11)) at the ECB rate published
// for the last day before the supply (art. 31a(2)), computed here from the
// SYNTHETIC rate table: the record's exact figures are the exact EUR net
// and VAT times that rate, the invoice's BT-111 is its exact VAT times the
// rate rounded once (not its VAT in cents converted: rounded twice), and
// the invoice passes the validators.
func TestVATInPLN(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := lawEngine(t)
		b := lawBooks(t, e, "pl-full")
		r := settleOK(t, b, fiscaltest.LawRequest(1, lawBuyer("PL"), false, true))
		doc, f := invoiceOf(t, b, r, t.TempDir())
		n := r.FX.National
		if n == nil || r.Invoice.TaxCountry != "PL" || r.Classification.RatePercent.String() != "23" {
			t.Fatalf("national %+v, tax country %s, rate %v", n, r.Invoice.TaxCountry, r.Classification.RatePercent)
		}
		// The supply is on Friday 2026-04-10 (Warsaw): the rate is the one
		// the ECB published for Thursday 2026-04-09.
		rate := fiscaltest.SyntheticRate("PLN", "2026-04-09")
		if n.Currency != "PLN" || n.Rate.RateDate != "2026-04-09" || !n.Rate.Value.Equal(rate) || n.Rule.ID != "pl-vat-31a-2-ecb" || n.Rate.Source != "ECB:EXR.D.PLN.EUR.SP00.A" {
			t.Fatalf("rate %+v rule %s, want %s of 2026-04-09", n.Rate, n.Rule.ID, rate)
		}
		if !mustDec(n.VATExact).Equal(mustDec(r.FX.VATEURExact).Mul(rate)) || !mustDec(n.NetExact).Equal(mustDec(r.FX.NetEURExact).Mul(rate)) {
			t.Errorf("exact %s / %s PLN, want %s / %s", n.NetExact, n.VATExact, mustDec(r.FX.NetEURExact).Mul(rate), mustDec(r.FX.VATEURExact).Mul(rate))
		}
		wantVAT := mustDec(r.FX.VATEURExact).Mul(rate).Round(2).StringFixed(2)
		if n.VAT != wantVAT || !strings.Contains(doc, `<cbc:TaxAmount currencyID="PLN">`+wantVAT+`</cbc:TaxAmount>`) || !strings.Contains(doc, "<cbc:TaxCurrencyCode>PLN</cbc:TaxCurrencyCode>") {
			t.Errorf("BT-111 %s PLN, want %s", n.VAT, wantVAT)
		}
		t.Logf("PLN invoice excerpt (%s):\n%s", r.ID, excerpt(doc, "TaxCurrencyCode", "currencyID=\"PLN\"", "VAT in PLN", "ActualDeliveryDate", "<cbc:IssueDate>", "<cbc:Percent>"))
		validateUBL(t, []string{f}, false)
	})
}

// TestVATInGBP: under UK law the VAT is stated in sterling (VAT
// Regulations 1995 reg. 14; VAT tertiary legislation on valuation). A
// seller with HMRC's written agreement to the ECB rate (option (c)) gets a
// GBP figure at the ECB rate of the publication its EUR conversion used;
// the invoice carries its UK VRN, never its EU number, and no EU VATEX
// code. A UK reverse charge by an Irish seller registered in the UK too.
func TestVATInGBP(t *testing.T) {
	e := lawEngine(t)
	dir := t.TempDir()
	var files, peppolFiles []string
	for _, c := range []struct {
		seller string
		b2b    bool
		vrn    string
		regime string
	}{
		{"gb-full", false, "GB980780684", vat.RegimeUKDomestic},
		{"ie-full", false, "GB100190874", vat.RegimeUKB2C},
		{"ie-full", true, "GB100190874", vat.RegimeUKReverseCharge},
	} {
		b := lawBooks(t, e, c.seller)
		r := settleOK(t, b, fiscaltest.LawRequest(len(files)+len(peppolFiles)+10, lawBuyer("GB"), c.b2b, true))
		doc, f := invoiceOf(t, b, r, dir)
		n := r.FX.National
		if r.Classification.Regime != c.regime || n == nil || n.Currency != "GBP" || r.Invoice.TaxCountry != "GB" || n.Rule.ID != "gb-hmrc-agreed-ecb" || !strings.Contains(n.Rule.Law, "HMRC VWET agreement 2026/0001") {
			t.Fatalf("%s: %s national %+v", c.seller, r.Classification.Regime, n)
		}
		if want := fiscaltest.SyntheticRate("GBP", r.FX.USDPerEUR.RateDate); !n.Rate.Value.Equal(want) || n.Rate.RateDate != r.FX.USDPerEUR.RateDate {
			t.Errorf("%s: GBP rate %s of %s, want %s of %s", c.seller, n.Rate.Raw, n.Rate.RateDate, want, r.FX.USDPerEUR.RateDate)
		}
		seller := doc[strings.Index(doc, "<cac:AccountingSupplierParty>"):strings.Index(doc, "</cac:AccountingSupplierParty>")]
		if !strings.Contains(seller, "<cbc:CompanyID>"+c.vrn+"</cbc:CompanyID>") || strings.Contains(seller, "IE1234567T") || strings.Contains(doc, "VATEX-EU") {
			t.Errorf("%s: the UK invoice's seller is not identified by its VRN %s alone, or carries an EU VATEX code:\n%s", c.seller, c.vrn, seller)
		}
		if wantVAT := mustDec(r.FX.VATEURExact).Mul(n.Rate.Value).Round(2).StringFixed(2); !strings.Contains(doc, `<cbc:TaxAmount currencyID="GBP">`+wantVAT+`</cbc:TaxAmount>`) {
			t.Errorf("%s: BT-111 is not %s GBP", c.seller, wantVAT)
		}
		if c.b2b {
			peppolFiles = append(peppolFiles, f)
		} else {
			files = append(files, f)
		}
		if c.seller == "gb-full" {
			t.Logf("GBP invoice excerpt (%s):\n%s", r.ID, excerpt(doc, "TaxCurrencyCode", "currencyID=\"GBP\"", "VAT in GBP", "<cbc:CompanyID>GB"))
		}
		if c.regime == vat.RegimeUKReverseCharge {
			t.Logf("UK reverse charge (%s):\n%s", r.ID, excerpt(doc, "<cbc:Note>", "TaxExemptionReason", "<cbc:ID>AE", "currencyID=\"GBP\""))
		}
	}
	validateUBL(t, files, false)
	validateUBL(t, peppolFiles, true)
}

// TestReverseChargeWithCustomerAddress: an Irish seller's sale to an
// Austrian business (VIES confirmed and returned the address) carries the
// customer's registered name and address (Art. 226(5)); a German
// business, whose address VIES does not disclose, gets the address the
// request gives. A reverse-charge invoice issued after the 15th of the
// month following the supply is flagged (Art. 222).
func TestReverseChargeWithCustomerAddress(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := lawEngine(t)
		b := lawBooks(t, e, "ie-full")
		dir := t.TempDir()
		at := settleOK(t, b, fiscaltest.LawRequest(1, lawBuyer("AT"), true, false))
		doc, f1 := invoiceOf(t, b, at, dir)
		buyer := doc[strings.Index(doc, "<cac:AccountingCustomerParty>"):strings.Index(doc, "</cac:AccountingCustomerParty>")]
		for _, want := range []string{"<cbc:StreetName>MARIAHILFER STRASSE 1</cbc:StreetName>", "<cbc:CityName>1060 WIEN</cbc:CityName>",
			"<cbc:RegistrationName>BEISPIEL HANDELS GMBH</cbc:RegistrationName>", "<cbc:CompanyID>ATU13585627</cbc:CompanyID>", "<cbc:IdentificationCode>AT</cbc:IdentificationCode>"} {
			if !strings.Contains(buyer, want) {
				t.Errorf("the Austrian customer's party lacks %s:\n%s", want, buyer)
			}
		}
		if strings.Contains(doc, "Business customer") {
			t.Error("a business invoice names its customer \"Business customer\"")
		}
		if at.Invoice.TaxCountry != "IE" || at.Invoice.IssueDeadline != "2026-05-15" || at.Invoice.IssuedLate {
			t.Errorf("invoice ref %+v: want tax country IE, deadline 2026-05-15, in time", at.Invoice)
		}
		t.Logf("reverse charge to AT with the customer's address (%s):\n%s", at.ID, buyer)

		req := fiscaltest.LawRequest(2, lawBuyer("DE"), true, true)
		req.Timestamp = "2026-02-10T10:00:00Z" // invoiced on 2026-04-13, after 15 March
		de := settleOK(t, b, req)
		doc, f2 := invoiceOf(t, b, de, dir)
		if !strings.Contains(doc, "<cbc:StreetName>2 Customer Street</cbc:StreetName>") || !strings.Contains(doc, "<cbc:RegistrationName>Customer in DE</cbc:RegistrationName>") {
			t.Error("the German customer's address from the request is not on the invoice")
		}
		if de.Invoice.IssueDeadline != "2026-03-15" || !de.Invoice.IssuedLate || de.Invoice.IssueDate != "2026-04-13" ||
			element(doc, "<cac:Delivery>", "cbc:ActualDeliveryDate") != "2026-02-10" {
			t.Errorf("invoice ref %+v: want issued 2026-04-13, late after 2026-03-15, supply 2026-02-10", de.Invoice)
		}
		if de.Buyer.Address == nil || de.Buyer.Address.City != "Customer Town" || de.Buyer.Address.Country != "DE" {
			t.Errorf("record buyer address %+v", de.Buyer.Address)
		}
		validateUBL(t, []string{f1, f2}, true)
	})
}

// TestRenderFailuresAreReviewed: the cases the review found answering 500
// each store a record PENDING_MANUAL_REVIEW naming the rules (and read
// back, with a receipt that verifies); a business sale without the
// customer's address is resolved by giving it.
func TestRenderFailuresAreReviewed(t *testing.T) {
	fake := fiscaltest.LawVIES(lawNow)
	deNoContact := fiscal.Seller{LegalName: "Beispiel Verkauf GmbH", Country: "DE", VATNumber: "DE812847601", LegalID: "HRB 1",
		Address: fiscal.Address{Street: "Hauptstraße 1", City: "Berlin", PostalCode: "10115"}, OverThreshold: true}
	greek := fiscal.Seller{LegalName: "Paradeigma AE", Country: "GR", VATNumber: "EL094259216", LegalID: "GEMI 1",
		Address: fiscal.Address{Street: "Stadiou 1", City: "Athina", PostalCode: "10564"}, OverThreshold: true}
	dutch := fiscal.Seller{LegalName: "Voorbeeld BV", Country: "NL", VATNumber: "NL123456789B13", LegalID: "12345678",
		Address: fiscal.Address{Street: "Damrak 1", City: "Amsterdam", PostalCode: "1012 LG"}, OverThreshold: true}
	irishNoVAT := fiscal.Seller{LegalName: "No Number Ltd", Country: "IE", OverThreshold: true}
	cfg := fiscaltest.Config(t, lawNow, deNoContact, greek, dutch, irishNoVAT)
	cfg.VIES, cfg.Recheck = fake, fiscal.RecheckPolicy{Interval: -1}
	e := fiscaltest.Engine(t, cfg)
	jwks, _ := e.JWKS()
	for i, c := range []struct {
		account int
		buyer   string
		b2b     bool
		rules   []string
	}{
		{0, "DE", true, []string{"DE-R-002", "DE-R-005", "DE-R-006", "DE-R-007"}},
		{1, "AT", true, []string{"GR-R-004-1"}},
		{1, "GR", true, []string{"GR-R-004-1"}},
		{2, "AT", true, []string{"NL-R-003"}},
		{3, "DE", false, []string{"BR-S-02", "BR-CO-26"}},
	} {
		b := fiscaltest.Books(t, e, c.account)
		r := settleOK(t, b, fiscaltest.LawRequest(100+i, lawBuyer(c.buyer), c.b2b, true))
		var detail string
		for _, reason := range r.ReviewReasons {
			if reason.Code == invoicelaw.ReasonInvoiceRulesFailed {
				detail = reason.Detail
			}
		}
		if r.ReviewStatus != fiscal.StatusPendingReview || r.Invoice != nil || detail == "" {
			t.Errorf("case %d: %s %v", i, r.ReviewStatus, r.ReviewReasons)
			continue
		}
		for _, rule := range c.rules {
			if !strings.Contains(detail, rule) {
				t.Errorf("case %d: %q does not name %s", i, detail, rule)
			}
		}
		stored, _, err := b.Record(context.Background(), r.ID)
		if err != nil || stored.ReviewStatus != fiscal.StatusPendingReview || stored.History[0].EventType != fiscal.EventSettlementPendingReview {
			t.Errorf("case %d: stored %v %+v", i, err, stored)
		}
		rc, _ := e.Receipt(context.Background(), r.Receipt.ID)
		if claims, err := receipt.Verify(rc, jwks, e.LogVerifierKey()); err != nil || claims.ReviewStatus != receipt.ReviewPending || claims.Invoice != nil {
			t.Errorf("case %d: receipt %v %+v", i, err, claims)
		}
	}

	// buyer_address_missing, then resolved with the address.
	b := fiscaltest.Books(t, e, 2)
	r := settleOK(t, b, fiscaltest.LawRequest(200, lawBuyer("DE"), true, false))
	if r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != invoicelaw.ReasonBuyerAddressMissing ||
		!strings.Contains(r.ReviewReasons[0].Detail, "name, street, town") || !strings.Contains(r.ReviewReasons[0].Detail, "disclosed no address") {
		t.Fatalf("%s %v", r.ReviewStatus, r.ReviewReasons)
	}
	res, err := b.Resolve(context.Background(), r.ID, fiscal.Resolution{ResolvedBy: "ops@example.com", Buyer: &fiscal.ResolutionBuyer{
		Name: "Beispiel GmbH", Address: &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Record
	if got.Revision != 2 || got.Buyer.Address == nil || got.Buyer.Address.Street != "Musterstraße 1" || got.Buyer.Address.Country != "DE" {
		t.Fatalf("resolved: revision %d %s %v address %+v", got.Revision, got.ReviewStatus, got.ReviewReasons, got.Buyer.Address)
	}
	// The Dutch seller's invoice needs a KvK scheme besides: still
	// pending, now for that rule alone.
	if got.ReviewStatus != fiscal.StatusPendingReview || len(got.ReviewReasons) != 1 || !strings.Contains(got.ReviewReasons[0].Detail, "NL-R-003") {
		t.Fatalf("resolved: %s %v", got.ReviewStatus, got.ReviewReasons)
	}
}

// TestResolveWithAddressIssuesTheInvoice: a reverse charge pending for the
// customer's address is PROCESSED, with its invoice, once a person gives
// the address.
func TestResolveWithAddressIssuesTheInvoice(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := lawEngine(t)
		b := lawBooks(t, e, "ie-full")
		r := settleOK(t, b, fiscaltest.LawRequest(1, lawBuyer("ES"), true, false))
		if r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != invoicelaw.ReasonBuyerAddressMissing {
			t.Fatalf("%s %v", r.ReviewStatus, r.ReviewReasons)
		}
		_, err := b.Resolve(context.Background(), r.ID, fiscal.Resolution{ResolvedBy: "ops@example.com", Buyer: &fiscal.ResolutionBuyer{
			Name: "Ejemplo SL", Address: &fiscal.Address{Street: "Calle Mayor 1", City: "Madrid", Country: "PT"}}}, "")
		if fe := new(fiscal.Error); !errors.As(err, &fe) || fe.Field != "/buyer/consumerAddress/country" {
			t.Fatalf("an address in another country than the buyer's: %v", err)
		}
		res, err := b.Resolve(context.Background(), r.ID, fiscal.Resolution{ResolvedBy: "ops@example.com", Buyer: &fiscal.ResolutionBuyer{
			Name: "Ejemplo SL", Address: &fiscal.Address{Street: "Calle Mayor 1", City: "Madrid", PostalCode: "28013"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		doc, f := invoiceOf(t, b, res.Record, t.TempDir())
		if !strings.Contains(doc, "<cbc:StreetName>Calle Mayor 1</cbc:StreetName>") || res.Record.History[1].EventType != fiscal.EventSettlementReviewResolve {
			t.Errorf("resolved invoice without the address, or event %s", res.Record.History[1].EventType)
		}
		validateUBL(t, []string{f}, true)
	})
}

// TestNationalRateNeverGuessed: without a PLN rate (the embedded table
// holds USD only) a Polish sale waits for review, national_rate_unavailable,
// with no national figure and no invoice; the EUR figures stay.
func TestNationalRateNeverGuessed(t *testing.T) {
	pl := fiscaltest.LawSellerOf(t, "pl-full")
	e := testEngine(t, lawNow, pl)
	r := settleOK(t, fiscaltest.Books(t, e, 0), fiscaltest.LawRequest(1, lawBuyer("PL"), false, true))
	if r.ReviewStatus != fiscal.StatusPendingReview || len(r.ReviewReasons) != 1 || r.ReviewReasons[0].Code != invoicelaw.ReasonNationalRateUnavailable ||
		r.FX.National != nil || r.Invoice != nil || r.FX.VATEUR == "" || !strings.Contains(r.ReviewReasons[0].Detail, "pl-vat-31a-2-ecb") {
		t.Fatalf("%s %v national %+v invoice %v", r.ReviewStatus, r.ReviewReasons, r.FX.National, r.Invoice)
	}
}

// TestBulgariaLevThenEuro: Bulgaria adopted the euro on 1 January 2026
// (Council Decision (EU) 2025/1407). A Bulgarian sale of 15 December 2025
// owes its VAT in leva (Art. 230): the record states it in BGN at the ECB
// rate; but the currency code list of the CEN EN 16931 validation
// artefacts (1.3.16) no longer has BGN, so no invoice stating it passes
// BR-CL-05, and the sale waits for review naming that rule rather than
// getting an invoice in euro alone. A sale of 10 April 2026 is in euro
// only and is invoiced.
func TestBulgariaLevThenEuro(t *testing.T) {
	e := lawEngine(t)
	b := lawBooks(t, e, "bg-full")
	req := fiscaltest.LawRequest(1, lawBuyer("BG"), false, true)
	req.Timestamp = "2025-12-15T10:00:00Z"
	before := settleOK(t, b, req)
	n := before.FX.National
	if n == nil || n.Currency != "BGN" || !n.Rate.Value.Equal(fiscaltest.SyntheticRate("BGN", n.Rate.RateDate)) ||
		!mustDec(n.VATExact).Equal(mustDec(before.FX.VATEURExact).Mul(n.Rate.Value)) {
		t.Errorf("2025: national %+v", n)
	}
	if before.ReviewStatus != fiscal.StatusPendingReview || before.Invoice != nil || len(before.ReviewReasons) != 1 ||
		!strings.Contains(before.ReviewReasons[0].Detail, "BR-CL-05") {
		t.Errorf("2025: %s %v", before.ReviewStatus, before.ReviewReasons)
	}
	after := settleOK(t, b, fiscaltest.LawRequest(2, lawBuyer("BG"), false, true))
	doc, f := invoiceOf(t, b, after, t.TempDir())
	if after.FX.National != nil || strings.Contains(doc, "TaxCurrencyCode") {
		t.Errorf("2026: national %+v", after.FX.National)
	}
	validateUBL(t, []string{f}, false)
}

// TestReceiptSpecOfRecordIsServed: the record's receipt.spec is the spec
// of the receipt served for it and of the jurisdiction table (uk-vat:
// 2.0.0, eu-vat: 1.0.0), also when the record waits for review.
func TestReceiptSpecOfRecordIsServed(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := lawEngine(t)
		jwks, _ := e.JWKS()
		for i, c := range []struct{ seller, buyer, jurisdiction string }{
			{"ie-full", "GB", vat.JurisdictionUK},
			{"ie-bare", "GB", vat.JurisdictionUK}, // pending: national_rate_required
			{"ie-full", "DE", vat.JurisdictionEU},
		} {
			r := settleOK(t, lawBooks(t, e, c.seller), fiscaltest.LawRequest(i, lawBuyer(c.buyer), false, true))
			rc, err := e.Receipt(context.Background(), r.Receipt.ID)
			if err != nil {
				t.Fatal(err)
			}
			claims, err := receipt.Verify(rc, jwks, e.LogVerifierKey())
			if err != nil || claims.Spec != r.Receipt.Spec || r.Receipt.Spec != fiscal.ReceiptSpec(c.jurisdiction) {
				t.Errorf("%s → %s: record spec %s, served %v (%v), jurisdiction's %s", c.seller, c.buyer, r.Receipt.Spec, claims, err, fiscal.ReceiptSpec(c.jurisdiction))
			}
		}
	})
}

// TestSellerInvoicingDataValidated: the new seller fields are checked for
// form when an account is made.
func TestSellerInvoicingDataValidated(t *testing.T) {
	base := fiscal.Seller{LegalName: "X", Country: "DE", VATNumber: "DE812847601"}
	for _, c := range []struct {
		name   string
		change func(*fiscal.Seller)
		field  string
	}{
		{"e-mail", func(s *fiscal.Seller) { s.Contact.Email = "accounts example.com" }, "seller.contact.email"},
		{"e-mail with two @", func(s *fiscal.Seller) { s.Contact.Email = "a@b@c" }, "seller.contact.email"},
		{"scheme without legal id", func(s *fiscal.Seller) { s.LegalIDScheme = "0106" }, "seller.legalIdScheme"},
		{"scheme not four digits", func(s *fiscal.Seller) { s.LegalID, s.LegalIDScheme = "1", "KVK" }, "seller.legalIdScheme"},
		{"endpoint without scheme", func(s *fiscal.Seller) { s.ElectronicAddress = &fiscal.ElectronicAddress{ID: "1"} }, "seller.electronicAddress"},
		{"control character", func(s *fiscal.Seller) { s.Contact.Name = "a\x07b" }, "seller.contact.name"},
		{"address country", func(s *fiscal.Seller) { s.Address.Country = "XX" }, "seller.address.country"},
		{"registration scheme", func(s *fiscal.Seller) { s.Registrations = []vat.Registration{{Scheme: "moss", Country: "DE"}} }, "seller.registrations[0].scheme"},
		{"registration from a non-date", func(s *fiscal.Seller) {
			s.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "DE"}, {Scheme: vat.RegistrationOSSUnion, Country: "DE", ValidFrom: "01/07/2026"}}
		}, "seller.registrations[1].validFrom"},
		{"registration ending before it starts", func(s *fiscal.Seller) {
			s.Registrations = []vat.Registration{{Scheme: vat.RegistrationOSSUnion, Country: "DE", ValidFrom: "2026-07-01", ValidTo: "2026-06-30"}}
		}, "seller.registrations[0].validTo"},
	} {
		s := base
		c.change(&s)
		if _, err := s.Normalised(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.field)
		}
	}
	if _, err := base.Normalised(); err != nil {
		t.Fatal(err)
	}
}

// TestConsumerAddressRequest: the consumerAddress member is checked like
// the other buyer facts (package settlement's tests; here through Settle,
// as a BAD_REQUEST naming the field), its postal code joins the
// determination, and it is kept on the record.
func TestConsumerAddressRequest(t *testing.T) {
	now := lawNow
	e := testEngine(t, now, irishSeller)
	bad := fiscaltest.Request(1, "1.00", "DE", "2026-04-10T14:30:00Z")
	bad.ConsumerAddress = &fiscal.Address{Street: "a", City: "b", Country: "AT"}
	_, err := fiscaltest.Books(t, e, 0).Settle(context.Background(), bad, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/consumerAddress/country" || fe.Detail != `"AT" is not consumerCountry "DE"` {
		t.Errorf("another country: %v, want BAD_REQUEST at /consumerAddress/country", err)
	}
	// The address's postal code locates the customer: Las Palmas is in
	// the Canary Islands, outside the EU VAT area (Art. 6 Directive
	// 2006/112/EC).
	req := fiscaltest.Request(2, "10.00", "ES", "2026-04-10T14:30:00Z")
	req.ConsumerAddress = &fiscal.Address{Street: "Calle Triana 1", City: "Las Palmas de Gran Canaria", PostalCode: "35002"}
	r := settleOK(t, fiscaltest.Books(t, e, 0), req)
	if r.Classification.Regime != vat.RegimeOutsideScope || r.Buyer.PostalCode != "35002" || r.Buyer.Address == nil || r.Buyer.Address.City != "Las Palmas de Gran Canaria" {
		t.Errorf("%s postal %q address %+v", r.Classification.Regime, r.Buyer.PostalCode, r.Buyer.Address)
	}
}

// TestPaymentMeansByCountry: payment means the national rules accept
// (ubl.StablecoinPaymentMeans): none between Dutch parties (NL-R-008),
// code 1 between Danish parties (DK-R-005), ZZZ otherwise.
func TestPaymentMeansByCountry(t *testing.T) {
	e := lawEngine(t)
	for i, c := range []struct{ seller, buyer, want string }{
		{"nl-full", "NL", ""},
		{"dk-full", "DK", "1"},
		{"de-full", "DE", "ZZZ"},
	} {
		b := lawBooks(t, e, c.seller)
		r := settleOK(t, b, fiscaltest.LawRequest(i, lawBuyer(c.buyer), true, true))
		doc, _ := invoiceOf(t, b, r, t.TempDir())
		got := element(doc, "<cac:PaymentMeans>", "cbc:PaymentMeansCode")
		if !strings.Contains(doc, "<cac:PaymentMeans>") {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s → %s: payment means %q, want %q", c.seller, c.buyer, got, c.want)
		}
	}
}

// Example_consumerAddress shows a business sale with the customer's
// address given in the request: the invoice's customer party carries it.
func ExampleSettlementRequest_consumerAddress() {
	req := fiscal.SettlementRequest{
		AmountUSDC: "119.00", Network: "eip155:8453", Timestamp: "2026-04-10T14:30:00Z",
		TxHash:          "0x" + strings.Repeat("ab", 32),
		PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		ConsumerCountry: "DE", ConsumerVATNumber: "DE136695976", ConsumerName: "Beispiel GmbH",
		ConsumerAddress: &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"},
	}
	p, err := req.Payment(time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC))
	fmt.Println(err, p.Buyer.Address.Street, p.Buyer.Address.City, p.Buyer.Address.Country, p.Buyer.PostalCode)
	// Output: <nil> Musterstraße 1 Berlin DE 10115
}
