package invoicelaw

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
