// Package invoicelaw decides which invoicing rules of which member state
// apply to one supply and what the invoice must therefore say (issue 18).
//
// A determination (package vat) says what VAT is due; the invoice must also
// follow the invoicing rules of one state: which state (For: Art. 219a
// Directive 2006/112/EC), in which currency the VAT is stated (NationalVAT:
// Art. 230), which VAT number the seller invoices under (Art. 226(3)), what
// the customer's details must be (BuyerParty: Art. 226(5)), by when a
// reverse-charge invoice is due (ReverseChargeDeadline: Art. 222). It
// builds the parties package ubl renders (ubl.Invoice.TaxCountry turns on
// its law checks); whatever the invoice still lacks is a review reason
// (AddressReason, RulesReason, the Reason constants), never a
// non-compliant invoice and never a 500. Check tells, before any sale,
// which invoices of a seller could not be issued.
//
// Its inputs are plain: the seller's facts the rules read (Seller), the
// buyer's (Buyer) and the determination. It imports the leaves vat, vies,
// fx and ubl, no sibling above them; package fiscal builds its records'
// invoices with it.
package invoicelaw
