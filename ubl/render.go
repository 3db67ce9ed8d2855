package ubl

import "github.com/shopspring/decimal"

// UBL 2.1 namespaces (OASIS UBL 2.1 OS, maindoc and common schemas).
const (
	nsInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	nsCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	nsCAC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	nsCBC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
)

// Document type codes, UNCL1001 (BR-CL-01; Peppol P0100, P0101).
const (
	typeCommercialInvoice = "380"
	typeCreditNote        = "381"
)

// RenderInvoice validates inv and renders it as a UBL 2.1 Invoice (type code
// 380). The output is UTF-8 with an XML declaration, elements in the order
// the UBL 2.1 XSD requires, two-space indentation and a final newline; equal
// inputs give byte-identical output. On any problem it returns a
// *ValidationError and no XML.
func RenderInvoice(inv Invoice) ([]byte, error) {
	p, err := prepare(&inv, nil)
	if err != nil {
		return nil, err
	}
	return p.render()
}

// RenderCreditNote validates cn and renders it as a UBL 2.1 CreditNote (type
// code 381) that references the invoice it corrects (BT-25, BT-26). Amounts
// are positive; the type code gives the sign. Output guarantees are those of
// RenderInvoice.
func RenderCreditNote(cn CreditNote) ([]byte, error) {
	p, err := prepare(&cn.Invoice, &cn)
	if err != nil {
		return nil, err
	}
	return p.render()
}

// render writes a prepared document. Element order follows the XSD
// sequences of UBL-Invoice-2.1.xsd / UBL-CreditNote-2.1.xsd and the common
// aggregate components; the Peppol BIS Billing 3.0 syntax binding lists it
// with the business terms (https://docs.peppol.eu/poacc/billing/3.0/syntax/ubl-invoice/tree/).
func (p *prepared) render() ([]byte, error) {
	inv := p.inv
	p.buf = p.renderer.buffer(4608 + 640*len(inv.Lines)) // one allocation for typical documents, none for a released draft's buffer
	w := newWriter(*p.buf)
	rootName, ns, typeName, typeCode, lineName, qtyName := "Invoice", nsInvoice, "cbc:InvoiceTypeCode", typeCommercialInvoice, "cac:InvoiceLine", "cbc:InvoicedQuantity"
	if p.kind == kindCreditNote {
		rootName, ns, typeName, typeCode, lineName, qtyName = "CreditNote", nsCreditNote, "cbc:CreditNoteTypeCode", typeCreditNote, "cac:CreditNoteLine", "cbc:CreditedQuantity"
	}
	w.root(rootName, ns)

	w.leaf("cbc:CustomizationID", string(inv.Profile))
	if inv.Profile == ProfilePeppol {
		w.leaf("cbc:ProfileID", peppolProfileID)
	}
	w.leaf("cbc:ID", inv.ID)
	w.leaf("cbc:IssueDate", inv.IssueDate)
	w.leaf(typeName, typeCode)
	w.optional("cbc:Note", p.note)
	w.leaf("cbc:DocumentCurrencyCode", inv.Currency)
	if tc := inv.TaxCurrency; tc != nil {
		w.leaf("cbc:TaxCurrencyCode", tc.Code) // BT-6
	}
	w.optional("cbc:BuyerReference", inv.BuyerReference)
	if inv.Period != nil {
		w.period(*inv.Period) // BG-14
	}
	if p.cn != nil {
		w.open("cac:BillingReference")
		w.open("cac:InvoiceDocumentReference")
		w.leaf("cbc:ID", p.cn.InvoiceRef)
		w.optional("cbc:IssueDate", p.cn.InvoiceIssueDate)
		w.close("cac:InvoiceDocumentReference")
		w.close("cac:BillingReference")
	}
	if m := inv.MyDATA; m != nil {
		// BG-24 entries the Peppol Greek rules key on by description
		// (GR-R-004-1, GR-S-008-1, GR-R-008-3).
		w.open("cac:AdditionalDocumentReference")
		w.leaf("cbc:ID", m.MARK)
		w.leaf("cbc:DocumentDescription", greekMARKDescription)
		w.close("cac:AdditionalDocumentReference")
		w.open("cac:AdditionalDocumentReference")
		w.leaf("cbc:ID", greekURLReferenceID)
		w.leaf("cbc:DocumentDescription", greekURLDescription)
		w.open("cac:Attachment")
		w.open("cac:ExternalReference")
		w.leaf("cbc:URI", m.URL)
		w.close("cac:ExternalReference")
		w.close("cac:Attachment")
		w.close("cac:AdditionalDocumentReference")
	}
	w.open("cac:AccountingSupplierParty")
	p.renderer.sellerParty(w, p)
	w.close("cac:AccountingSupplierParty")
	w.open("cac:AccountingCustomerParty")
	p.party(w, inv.Buyer, p.buyer)
	w.close("cac:AccountingCustomerParty")
	if inv.SupplyDate != "" {
		w.open("cac:Delivery")
		w.leaf("cbc:ActualDeliveryDate", inv.SupplyDate) // BT-72
		w.close("cac:Delivery")
	}
	if pm := inv.PaymentMeans; pm != nil {
		w.open("cac:PaymentMeans")
		if pm.Name != "" {
			w.leafAttr("cbc:PaymentMeansCode", "name", pm.Name, pm.Code)
		} else {
			w.leaf("cbc:PaymentMeansCode", pm.Code)
		}
		w.optional("cbc:PaymentID", pm.PaymentID)
		w.close("cac:PaymentMeans")
	}
	p.taxTotal(w)
	p.monetaryTotal(w)
	for i, l := range inv.Lines {
		p.line(w, lineName, qtyName, p.lineIDs[i], l)
	}
	return w.finish(rootName), nil
}

// party writes cac:Party (BG-4 / BG-7) in the order of the XSD PartyType:
// EndpointID, PartyName, PostalAddress, PartyTaxScheme, PartyLegalEntity,
// Contact.
func (p *prepared) party(w *writer, pt Party, ep endpoint) {
	w.open("cac:Party")
	if ep.id != "" {
		w.leafAttr("cbc:EndpointID", "schemeID", ep.scheme, ep.id)
	}
	if p.greekSeller {
		// GR-R-002, GR-R-005: a Greek seller's invoice names both parties
		// in PartyName (BT-28 / BT-45) with their registered full name.
		w.open("cac:PartyName")
		w.leaf("cbc:Name", pt.Name)
		w.close("cac:PartyName")
	}
	w.open("cac:PostalAddress")
	w.optional("cbc:StreetName", pt.Street)
	w.optional("cbc:AdditionalStreetName", pt.AdditionalStreet)
	w.optional("cbc:CityName", pt.City)
	w.optional("cbc:PostalZone", pt.PostalCode)
	w.optional("cbc:CountrySubentity", pt.Subdivision)
	if pt.AddressLine3 != "" {
		w.open("cac:AddressLine")
		w.leaf("cbc:Line", pt.AddressLine3)
		w.close("cac:AddressLine")
	}
	w.open("cac:Country")
	w.leaf("cbc:IdentificationCode", pt.Country)
	w.close("cac:Country")
	w.close("cac:PostalAddress")
	if p.writeVAT && pt.VATNumber != "" {
		w.open("cac:PartyTaxScheme")
		w.leaf("cbc:CompanyID", pt.VATNumber)
		w.taxScheme("VAT")
		w.close("cac:PartyTaxScheme")
	}
	if pt.TaxRegistrationID != "" {
		// BT-32: any TaxScheme/ID other than VAT marks it (CEN rule
		// context PartyTaxScheme[cac:TaxScheme/cbc:ID != 'VAT']).
		w.open("cac:PartyTaxScheme")
		w.leaf("cbc:CompanyID", pt.TaxRegistrationID)
		w.taxScheme("TAX")
		w.close("cac:PartyTaxScheme")
	}
	w.open("cac:PartyLegalEntity")
	w.leaf("cbc:RegistrationName", pt.Name)
	if pt.LegalID != "" {
		if pt.LegalIDScheme != "" {
			w.leafAttr("cbc:CompanyID", "schemeID", pt.LegalIDScheme, pt.LegalID)
		} else {
			w.leaf("cbc:CompanyID", pt.LegalID)
		}
	}
	w.close("cac:PartyLegalEntity")
	if pt.Contact != (Contact{}) {
		w.open("cac:Contact")
		w.optional("cbc:Name", pt.Contact.Name)
		w.optional("cbc:Telephone", pt.Contact.Telephone)
		w.optional("cbc:ElectronicMail", pt.Contact.Email)
		w.close("cac:Contact")
	}
	w.close("cac:Party")
}

// taxTotal writes the cac:TaxTotal with the breakdown (BT-110, BG-23;
// PEPPOL-EN16931-R053) and, with a tax currency, a second one holding only
// BT-111 in that currency (BR-53, PEPPOL-EN16931-R054, R055).
func (p *prepared) taxTotal(w *writer) {
	cur := p.inv.Currency
	w.open("cac:TaxTotal")
	w.amount("cbc:TaxAmount", cur, p.totals.Tax)
	for _, s := range p.totals.Subtotals {
		w.open("cac:TaxSubtotal")
		w.amount("cbc:TaxableAmount", cur, s.TaxableAmount)
		w.amount("cbc:TaxAmount", cur, s.TaxAmount)
		w.open("cac:TaxCategory")
		w.leaf("cbc:ID", s.Category)
		if s.Category != "O" { // BR-O-05 .. BR-O-07: no rate for O
			w.number("cbc:Percent", s.RatePercent)
		}
		w.optional("cbc:TaxExemptionReasonCode", s.ExemptionCode)
		w.optional("cbc:TaxExemptionReason", s.ExemptionReason)
		w.taxScheme("VAT")
		w.close("cac:TaxCategory")
		w.close("cac:TaxSubtotal")
	}
	w.close("cac:TaxTotal")
	if tc := p.inv.TaxCurrency; tc != nil {
		w.open("cac:TaxTotal")
		w.amount("cbc:TaxAmount", tc.Code, p.totals.TaxCurrencyTax)
		w.close("cac:TaxTotal")
	}
}

// monetaryTotal writes cac:LegalMonetaryTotal (BG-22).
func (p *prepared) monetaryTotal(w *writer) {
	t, cur := p.totals, p.inv.Currency
	w.open("cac:LegalMonetaryTotal")
	w.amount("cbc:LineExtensionAmount", cur, t.LineExtension)
	w.amount("cbc:TaxExclusiveAmount", cur, t.TaxExclusive)
	w.amount("cbc:TaxInclusiveAmount", cur, t.TaxInclusive)
	if p.inv.PaidInFull {
		w.amount("cbc:PrepaidAmount", cur, t.Prepaid)
	}
	w.amount("cbc:PayableAmount", cur, t.Payable)
	w.close("cac:LegalMonetaryTotal")
}

// line writes cac:InvoiceLine / cac:CreditNoteLine (BG-25).
func (p *prepared) line(w *writer, lineName, qtyName, id string, l Line) {
	cur := p.inv.Currency
	w.open(lineName)
	w.leaf("cbc:ID", id)
	w.openAttr(qtyName, "unitCode", "C62") // UN/ECE Rec 20 "one"
	w.b = appendString(w.b, l.Quantity)
	w.end(qtyName)
	w.amount("cbc:LineExtensionAmount", cur, l.NetAmount)
	if l.Period != nil {
		w.period(*l.Period) // BG-26
	}
	w.open("cac:Item")
	w.leaf("cbc:Name", l.Name)
	w.open("cac:ClassifiedTaxCategory")
	w.leaf("cbc:ID", l.Category)
	if l.Category != "O" {
		w.number("cbc:Percent", l.RatePercent)
	}
	w.taxScheme("VAT")
	w.close("cac:ClassifiedTaxCategory")
	w.close("cac:Item")
	w.open("cac:Price")
	w.openAttr("cbc:PriceAmount", "currencyID", cur)
	w.b = appendPrice(w.b, l.PriceAmount)
	w.end("cbc:PriceAmount")
	w.close("cac:Price")
	w.close(lineName)
}

// priceString writes an amount that BR-DEC does not limit (BT-146), at
// least 2 decimals for readability, more when given, never rounded.
func priceString(d decimal.Decimal) string {
	if !d.Truncate(2).Equal(d) {
		return d.String() // all significant decimals, no rounding
	}
	return d.StringFixed(2)
}
