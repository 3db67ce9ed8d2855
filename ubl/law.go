package ubl

import (
	"slices"
	"strings"
)

// Rule identifiers of the invoicing-law checks (Invoice.TaxCountry set).
// They are not EN 16931 or Peppol rule ids: each names the provision it
// applies, so that a review record can cite it.
const (
	// RuleArt226_5: the customer's full name and address on a business
	// sale. Art. 226(5) Directive 2006/112/EC; a simplified invoice, which
	// may omit them (Art. 226b), is ruled out for reverse-charge and
	// intra-Community supplies by Art. 220a(2).
	RuleArt226_5 = "VAT-Art226(5)"

	// RuleArt226_7: the date of the supply when it differs from the issue
	// date, Art. 226(7); the renderer requires the engine to state it
	// (SupplyDate or Period) and writes it as BT-72 / BG-14.
	RuleArt226_7 = "VAT-Art226(7)"

	// RuleArt230: the VAT payable in the national currency of the member
	// state where it is due, converted under Art. 91 (Art. 230); for GB,
	// the VAT in sterling (VAT Regulations 1995 reg. 14(1), HMRC VATREC5060
	// https://www.gov.uk/hmrc-internal-manuals/vat-trader-records/vatrec5060;
	// VAT Notice 700 §16.3).
	RuleArt230 = "VAT-Art230"

	// RuleArt362: the identification number of the non-Union scheme
	// (Art. 362, "EU" + 9 digits) identifies the trader only for the
	// supplies declared under that scheme (Art. 358a: services to
	// non-taxable persons); it is not printed on a business invoice.
	RuleArt362 = "VAT-Art362"

	// RuleUKReg14: a UK VAT invoice carries the supplier's UK VAT
	// registration number (VAT Regulations 1995, SI 1995/2518, reg. 14(1);
	// https://www.legislation.gov.uk/uksi/1995/2518/regulation/14) and no
	// code of the EU VATEX list, which names provisions of EU law.
	RuleUKReg14 = "UK-VATReg14"
)

// euroArea are the member states whose currency is the euro, so that
// Art. 230 needs no second currency: the 21 of the euro area since
// Bulgaria joined on 1 January 2026 (Council of the EU, 8 July 2025, final
// legal acts for Bulgaria's adoption of the euro; ECB, "Our money",
// https://www.ecb.europa.eu/euro/intro/html/index.en.html).
var euroArea = []string{
	"AT", "BE", "BG", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR",
	"IE", "IT", "LT", "LU", "LV", "MT", "NL", "PT", "SI", "SK",
}

// nationalCurrency is the currency of the member states outside the euro
// area (ISO 4217) and of the United Kingdom: the currency Art. 230 (or UK
// reg. 14) requires the VAT payable to be stated in.
var nationalCurrency = map[string]string{
	"CZ": "CZK", "DK": "DKK", "HU": "HUF", "PL": "PLN", "RO": "RON", "SE": "SEK",
	"GB": "GBP",
}

// alsoAccepted are the currencies besides its own in which a state accepts
// the VAT amount of an invoice: Denmark, DKK or euro (momsbekendtgørelsen,
// BEK nr. 1435 af 29/11/2023, § 97, stk. 2,
// https://elov.dk/momsbekendtgorelsen/paragraf/97/).
var alsoAccepted = map[string][]string{"DK": {"EUR"}}

// bulgariaEuro is the day Bulgaria adopted the euro (Council Decision (EU)
// 2025/1407 of 8 July 2025, https://eur-lex.europa.eu/eli/dec/2025/1407/oj):
// its supplies before it were taxed in leva.
const bulgariaEuro = "2026-01-01"

// nationalCurrencyOn is NationalCurrency for a supply on day (YYYY-MM-DD,
// "" for today's currency): BGN for Bulgaria before bulgariaEuro.
func nationalCurrencyOn(country, day string) string {
	if country == "BG" && day != "" && day < bulgariaEuro {
		return "BGN"
	}
	c, _ := NationalCurrency(country)
	return c
}

// supplyDay is the day the invoice dates its supply by: the date of supply
// (BT-72), else the end of the invoicing period (BT-74), else its start,
// else the issue date.
func supplyDay(inv *Invoice) string {
	if inv.SupplyDate != "" {
		return inv.SupplyDate
	}
	if inv.Period != nil {
		if inv.Period.End != "" {
			return inv.Period.End
		}
		return inv.Period.Start
	}
	return inv.IssueDate
}

// NationalCurrency returns the currency in which VAT due under the law of
// country must be stated (Art. 230): EUR for the euro area, the national
// currency for CZ, DK, HU, PL, RO, SE and GB. ok is false for any other
// code, including EL (use GR) and countries outside the EU and the UK.
func NationalCurrency(country string) (currency string, ok bool) {
	if c, found := nationalCurrency[country]; found {
		return c, true
	}
	if inList(euroArea, country) {
		return "EUR", true
	}
	return "", false
}

// isBusinessSale reports whether the invoice is to a taxable person: any
// reverse-charge line, a buyer VAT identifier, or the Peppol profile (which
// this package uses for business buyers).
func isBusinessSale(p *prepared) bool {
	inv := p.inv
	if inv.Profile == ProfilePeppol || inv.Buyer.VATNumber != "" {
		return true
	}
	for _, s := range p.totals.Subtotals {
		if s.Category == "AE" {
			return true
		}
	}
	return false
}

// checkLaw applies the invoicing rules of the VAT Directive (or UK law for
// TaxCountry GB) that the renderer can check from its input. It runs in
// the second pass, after the breakdown is known.
func checkLaw(c *checker, p *prepared) {
	inv := p.inv
	country := inv.TaxCountry
	business := isBusinessSale(p)

	// Art. 230: the VAT in the national currency of the taxing state, on
	// the day of the supply.
	if want := nationalCurrencyOn(country, supplyDay(inv)); want != inv.Currency {
		switch {
		case inv.TaxCurrency == nil && slices.Contains(alsoAccepted[country], inv.Currency):
			// The state accepts the VAT amount in the invoice's currency.
		case inv.TaxCurrency == nil:
			c.addf("TaxCurrency", RuleArt230, ErrRequired, "VAT due under %s law must also be stated in %s (invoice currency %s)", country, want, inv.Currency)
		case inv.TaxCurrency.Code != want:
			c.addf("TaxCurrency.Code", RuleArt230, ErrMismatch, "VAT due under %s law is stated in %s, not %s", country, want, inv.TaxCurrency.Code)
		}
	}

	// Art. 226(7): the date of supply. The engine states it always; BT-72
	// (or the period of a summary invoice) carries it.
	if inv.SupplyDate == "" && inv.Period == nil {
		c.add("SupplyDate", RuleArt226_7, ErrRequired, "the date of the supply (or the invoicing period of a summary invoice) must be stated")
	}

	// Art. 226(5), Art. 220a(2): the customer's full address on a business
	// sale. A street and a town are the least that identifies an address.
	if business {
		requireField(c, "Buyer.Street", RuleArt226_5, inv.Buyer.Street)
		requireField(c, "Buyer.City", RuleArt226_5, inv.Buyer.City)
	}

	// Art. 362: the non-Union scheme number only on the scheme's B2C supplies.
	if id := inv.Seller.TaxRegistrationID; hasShape(id, shapeEUOSS) && (business || country == "GB") {
		c.addf("Seller.TaxRegistrationID", RuleArt362, ErrForbidden,
			"%s is a non-Union OSS number: it identifies the seller only for B2C supplies declared under that scheme, not on a business or UK invoice; give the VAT number of the taxing state or the seller's local tax number (BT-32) instead", id)
	}

	if country == "GB" {
		// UK VAT Regulations 1995 reg. 14(1): the supplier's UK VRN.
		if p.writeVAT && !strings.HasPrefix(inv.Seller.VATNumber, "GB") && !strings.HasPrefix(inv.Seller.VATNumber, "XI") {
			c.addf("Seller.VATNumber", RuleUKReg14, ErrRequired, "a UK invoice carries the seller's UK VAT registration number (GB…), not %q", inv.Seller.VATNumber)
		}
		// No EU VATEX code (they cite EU law); BR-AE-10 and BR-O-10 are
		// met by the reason text alone.
		for i, l := range inv.Lines {
			if strings.HasPrefix(l.ExemptionCode, "VATEX-EU-") {
				c.addf(lineField(i, "ExemptionCode"), RuleUKReg14, ErrForbidden, "%s cites EU law; a UK invoice states the reverse charge in text only", l.ExemptionCode)
			}
		}
		for i, s := range inv.Subtotals {
			if strings.HasPrefix(s.ExemptionCode, "VATEX-EU-") {
				c.addf("Subtotals["+itoa(i)+"].ExemptionCode", RuleUKReg14, ErrForbidden, "%s cites EU law; a UK invoice states the reverse charge in text only", s.ExemptionCode)
			}
		}
	}
}
