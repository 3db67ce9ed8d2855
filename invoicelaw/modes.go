package invoicelaw

import (
	"cmp"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// The national rules the invoicing modes of an account rely on (package
// fiscal, invoicemode.go): where a summary invoice of a calendar month is
// allowed, where a private individual needs no invoice.

// SummaryRule cites the national rule of country (the state whose
// invoicing rules apply, Art. 219a) allowing a summary invoice for the
// supplies of a calendar month (Art. 223 Directive 2006/112/EC); "" where
// none is on file. A state missing here is not assumed: its supplies are
// invoiced per payment (Art. 223 obliges every state to allow monthly
// summaries, but the national conditions are unverified here).
func SummaryRule(country string) string { return summaryRules[country] }

// NoInvoiceRule cites the national rule of country (a member state of
// identification) under which a supply to a private individual needs no
// invoice; "" where none is on file: the state is taken to require one.
func NoInvoiceRule(country string) string { return noInvoiceRules[country] }

var summaryRules = map[string]string{
	"IE": "Art. 223 " + Directive + "; Value-Added Tax Consolidation Act 2010 s. 66(1)(c) (https://revisedacts.lawreform.ie/eli/2010/act/31/section/66): a summary invoice detailing the supplies of a calendar month",
	"DE": "Art. 223 " + Directive + "; § 31(4) UStDV: the calendar month may be stated as the time of supply (BMF-Schreiben of 26.09.2005, IV A 5 - S 7280 a - 82/05)",
}

var noInvoiceRules = map[string]string{
	"IE": "Art. 219a(2)(b), 220(1) " + Directive + "; Value-Added Tax Consolidation Act 2010 s. 66(1)(a) requires an invoice to accountable persons, public bodies, persons carrying on exempt activities and persons other than individuals, not to a private individual (https://www.revenue.ie/en/vat/vat-records-invoices-credit-notes/invoices/who-must-issue-vat-invoice.aspx)",
	"DE": "Art. 219a(2)(b), 220(1) " + Directive + "; § 14(2) UStG requires an invoice to another entrepreneur for its business or to a legal person, and for work related to land, not to a private individual",
}

// The invoicing modes an account may choose other than per payment
// (fiscal.Seller.Invoicing), and what a supply is invoiced by under them
// (fiscal.RecordInvoicing.Invoice).
const (
	ModeNoneB2C        = "none_b2c"
	ModeSummaryMonthly = "summary_monthly"

	ByOwnInvoice = "per_payment"
	BySummary    = "summary"
	ByNone       = "none"
)

// InvoicedBy decides what invoices supply det, under invoicing law law,
// for an account whose mode is ModeNoneB2C or ModeSummaryMonthly: its own
// invoice (ByOwnInvoice), the summary invoice of its month and buyer
// (BySummary) or none (ByNone), and the rule relied on. buyerVATNumber
// says whether a business customer has a VAT number to be named by. Both
// recording (package fiscal) and the capability check (package catalog)
// decide by it; whether the month's summary for the buyer was already
// issued is the engine's to know.
func InvoicedBy(mode string, det vat.Determination, law Law, buyerVATNumber bool) (by, basis string) {
	b2b := det.BuyerTreatment == vat.TreatmentB2B
	switch {
	case b2b && mode == ModeNoneB2C:
		return ByOwnInvoice, "Art. 220(1)(1) " + Directive + ": a supply to a business customer is invoiced; none_b2c leaves it its own invoice"
	case b2b && !buyerVATNumber:
		return ByOwnInvoice, "a business customer without a VAT number cannot be named on a summary invoice; invoiced per payment"
	}
	switch mode {
	case ModeNoneB2C:
		rule := NoInvoiceRule(law.TaxCountry)
		switch {
		case det.Regime != vat.RegimeOSSB2C:
			return ByOwnInvoice, "none_b2c covers supplies to consumers under the One-Stop Shop (Art. 219a(2)(b)); this supply is " + det.Regime + ", invoiced per payment"
		case rule == "":
			return ByOwnInvoice, "the invoicing rules of " + law.TaxCountry + " (Art. 219a(2)(b)) may require an invoice to a consumer (Art. 221(1)) and are not on file; invoiced per payment"
		}
		return ByNone, rule
	case ModeSummaryMonthly:
		rule := SummaryRule(law.TaxCountry)
		cur, _ := ubl.NationalCurrency(law.TaxCountry)
		switch {
		case rule == "":
			return ByOwnInvoice, "no national rule on summary invoices (Art. 223) is on file for " + cmp.Or(law.TaxCountry, "this supply's invoicing state") + "; invoiced per payment"
		case det.Category == vat.CategoryOutsideScope:
			// One document cannot combine category O with another (EN
			// 16931 BR-O-11), and no EU VAT becomes chargeable on it.
			return ByOwnInvoice, "Art. 223 " + Directive + " summarises supplies whose VAT becomes chargeable in the month; this supply is not subject to EU VAT (" + det.Regime + "); invoiced per payment"
		case cur != "EUR":
			return ByOwnInvoice, "a summary invoice in a state outside the euro area must state its VAT in the national currency (Art. 230), which summaries do not yet do; invoiced per payment"
		case len(det.SupplyDate) < len("2006-01"):
			return ByOwnInvoice, "the supply has no date of supply; invoiced per payment"
		}
		if b2b {
			rule += "; Art. 220(1)(1): the business customer is invoiced by the summary invoice"
		}
		return BySummary, rule
	}
	return ByOwnInvoice, ""
}

// SummaryRefusal is why supply det, whose invoicing law is law, cannot
// be invoiced by a summary invoice under the invoicing rules of state
// (Art. 223 Directive 2006/112/EC), "" when it can: its law must be that
// state's (Art. 219a), and that law must put it on a summary as InvoicedBy
// decides under ModeSummaryMonthly (a national rule on file, a supply
// subject to EU VAT in a euro state, a date of supply). A summary invoice
// checks every supply it covers by it, not its latest alone: the rules
// (the seller's registrations on each day of supply) may change within
// the month.
func SummaryRefusal(det vat.Determination, law Law, state string) string {
	if law.TaxCountry != state {
		return "its invoicing rules are those of " + cmp.Or(law.TaxCountry, "no state") + " (" + law.Basis + "), not " + state + "'s"
	}
	// A business customer is on a summary by its VAT number, as the
	// summary's buyer names it.
	if by, basis := InvoicedBy(ModeSummaryMonthly, det, law, true); by != BySummary {
		return basis
	}
	return ""
}
