package ubl

import (
	"github.com/beevik/etree"
	"github.com/shopspring/decimal"
)

// The etree renderer as it was before the direct writer (render.go)
// replaced it, frozen: it renders the document shapes of that time (no tax
// currency, delivery date, periods, document references, trading names or
// extra address lines). It is kept for two reasons: BenchmarkEtree* measure
// it against the direct writer on the same inputs, and TestDirectWriterMatchesEtree
// checks that both produce byte-identical output for every input it can
// render.

// render writes a prepared document. Element order follows the XSD
// sequences of UBL-Invoice-2.1.xsd / UBL-CreditNote-2.1.xsd and the common
// aggregate components; the Peppol BIS Billing 3.0 syntax binding lists it
// with the business terms (https://docs.peppol.eu/poacc/billing/3.0/syntax/ubl-invoice/tree/).
func (p *prepared) renderEtree() ([]byte, error) {
	inv := p.inv
	doc := etree.NewDocument()
	// CanonicalText escapes &, < and > (and CR as &#xD;, so it survives
	// parsing); CanonicalAttrVal escapes &, <, " and TAB/LF/CR in attributes,
	// which XML attribute-value normalisation would otherwise turn into spaces.
	doc.WriteSettings = etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true}
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)

	rootName, ns, typeName, typeCode, lineName, qtyName := "Invoice", nsInvoice, "InvoiceTypeCode", typeCommercialInvoice, "InvoiceLine", "InvoicedQuantity"
	if p.kind == kindCreditNote {
		rootName, ns, typeName, typeCode, lineName, qtyName = "CreditNote", nsCreditNote, "CreditNoteTypeCode", typeCreditNote, "CreditNoteLine", "CreditedQuantity"
	}
	root := doc.CreateElement(rootName)
	root.CreateAttr("xmlns", ns)
	root.CreateAttr("xmlns:cac", nsCAC)
	root.CreateAttr("xmlns:cbc", nsCBC)

	etreeCBC(root, "CustomizationID", string(inv.Profile))
	if inv.Profile == ProfilePeppol {
		etreeCBC(root, "ProfileID", peppolProfileID)
	}
	etreeCBC(root, "ID", inv.ID)
	etreeCBC(root, "IssueDate", inv.IssueDate)
	etreeCBC(root, typeName, typeCode)
	etreeOptional(root, "cbc:Note", inv.Note)
	etreeCBC(root, "DocumentCurrencyCode", inv.Currency)
	etreeOptional(root, "cbc:BuyerReference", inv.BuyerReference)
	if p.cn != nil {
		ref := root.CreateElement("cac:BillingReference").CreateElement("cac:InvoiceDocumentReference")
		etreeCBC(ref, "ID", p.cn.InvoiceRef)
		etreeOptional(ref, "cbc:IssueDate", p.cn.InvoiceIssueDate)
	}
	p.etreeParty(root.CreateElement("cac:AccountingSupplierParty"), inv.Seller, p.seller)
	p.etreeParty(root.CreateElement("cac:AccountingCustomerParty"), inv.Buyer, p.buyer)
	if pm := inv.PaymentMeans; pm != nil {
		e := root.CreateElement("cac:PaymentMeans")
		code := etreeCBC(e, "PaymentMeansCode", pm.Code)
		if pm.Name != "" {
			code.CreateAttr("name", pm.Name)
		}
		etreeOptional(e, "cbc:PaymentID", pm.PaymentID)
	}
	p.etreeTaxTotal(root)
	p.etreeMonetaryTotal(root)
	for i, l := range inv.Lines {
		p.etreeLine(root.CreateElement("cac:"+lineName), qtyName, p.lineIDs[i], l)
	}

	doc.IndentWithSettings(&etree.IndentSettings{Spaces: 2, PreserveLeafWhitespace: true})
	return doc.WriteToBytes()
}

// party writes cac:Party (BG-4 / BG-7) in the order of the XSD PartyType:
// EndpointID, PostalAddress, PartyTaxScheme, PartyLegalEntity, Contact.
func (p *prepared) etreeParty(parent *etree.Element, pt Party, ep endpoint) {
	e := parent.CreateElement("cac:Party")
	if ep.id != "" {
		etreeCBC(e, "EndpointID", ep.id).CreateAttr("schemeID", ep.scheme)
	}
	addr := e.CreateElement("cac:PostalAddress")
	etreeOptional(addr, "cbc:StreetName", pt.Street)
	etreeOptional(addr, "cbc:CityName", pt.City)
	etreeOptional(addr, "cbc:PostalZone", pt.PostalCode)
	etreeCBC(addr.CreateElement("cac:Country"), "IdentificationCode", pt.Country)
	if p.writeVAT && pt.VATNumber != "" {
		ts := e.CreateElement("cac:PartyTaxScheme")
		etreeCBC(ts, "CompanyID", pt.VATNumber)
		etreeVATScheme(ts)
	}
	if pt.TaxRegistrationID != "" {
		// BT-32: any TaxScheme/ID other than VAT marks it (CEN rule
		// context PartyTaxScheme[cac:TaxScheme/cbc:ID != 'VAT']).
		ts := e.CreateElement("cac:PartyTaxScheme")
		etreeCBC(ts, "CompanyID", pt.TaxRegistrationID)
		etreeCBC(ts.CreateElement("cac:TaxScheme"), "ID", "TAX")
	}
	le := e.CreateElement("cac:PartyLegalEntity")
	etreeCBC(le, "RegistrationName", pt.Name)
	if pt.LegalID != "" {
		id := etreeCBC(le, "CompanyID", pt.LegalID)
		if pt.LegalIDScheme != "" {
			id.CreateAttr("schemeID", pt.LegalIDScheme)
		}
	}
	if pt.Contact != (Contact{}) {
		ct := e.CreateElement("cac:Contact")
		etreeOptional(ct, "cbc:Name", pt.Contact.Name)
		etreeOptional(ct, "cbc:Telephone", pt.Contact.Telephone)
		etreeOptional(ct, "cbc:ElectronicMail", pt.Contact.Email)
	}
}

// taxTotal writes the one cac:TaxTotal with its breakdown (BT-110, BG-23;
// PEPPOL-EN16931-R053). No second TaxTotal: there is no tax currency (BT-6).
func (p *prepared) etreeTaxTotal(root *etree.Element) {
	tt := root.CreateElement("cac:TaxTotal")
	p.etreeAmount(tt, "TaxAmount", p.totals.Tax)
	for _, s := range p.totals.Subtotals {
		st := tt.CreateElement("cac:TaxSubtotal")
		p.etreeAmount(st, "TaxableAmount", s.TaxableAmount)
		p.etreeAmount(st, "TaxAmount", s.TaxAmount)
		cat := st.CreateElement("cac:TaxCategory")
		etreeCBC(cat, "ID", s.Category)
		if s.Category != "O" { // BR-O-05 .. BR-O-07: no rate for O
			etreeCBC(cat, "Percent", s.RatePercent.String())
		}
		etreeOptional(cat, "cbc:TaxExemptionReasonCode", s.ExemptionCode)
		etreeOptional(cat, "cbc:TaxExemptionReason", s.ExemptionReason)
		etreeVATScheme(cat)
	}
}

// monetaryTotal writes cac:LegalMonetaryTotal (BG-22).
func (p *prepared) etreeMonetaryTotal(root *etree.Element) {
	t := p.totals
	m := root.CreateElement("cac:LegalMonetaryTotal")
	p.etreeAmount(m, "LineExtensionAmount", t.LineExtension)
	p.etreeAmount(m, "TaxExclusiveAmount", t.TaxExclusive)
	p.etreeAmount(m, "TaxInclusiveAmount", t.TaxInclusive)
	if p.inv.PaidInFull {
		p.etreeAmount(m, "PrepaidAmount", t.Prepaid)
	}
	p.etreeAmount(m, "PayableAmount", t.Payable)
}

// line writes cac:InvoiceLine / cac:CreditNoteLine (BG-25).
func (p *prepared) etreeLine(e *etree.Element, qtyName, id string, l Line) {
	etreeCBC(e, "ID", id)
	etreeCBC(e, qtyName, l.Quantity.String()).CreateAttr("unitCode", "C62") // UN/ECE Rec 20 "one"
	p.etreeAmount(e, "LineExtensionAmount", l.NetAmount)
	item := e.CreateElement("cac:Item")
	etreeCBC(item, "Name", l.Name)
	ct := item.CreateElement("cac:ClassifiedTaxCategory")
	etreeCBC(ct, "ID", l.Category)
	if l.Category != "O" {
		etreeCBC(ct, "Percent", l.RatePercent.String())
	}
	etreeVATScheme(ct)
	p.etreeAmountNoRound(e.CreateElement("cac:Price"), "PriceAmount", l.PriceAmount)
}

// cbc adds a basic component with text.
func etreeCBC(parent *etree.Element, name, text string) *etree.Element {
	e := parent.CreateElement("cbc:" + name)
	e.SetText(text)
	return e
}

// optional adds an element only when text is set.
func etreeOptional(parent *etree.Element, name, text string) {
	if text != "" {
		parent.CreateElement(name).SetText(text)
	}
}

func etreeVATScheme(parent *etree.Element) {
	etreeCBC(parent.CreateElement("cac:TaxScheme"), "ID", "VAT")
}

// amount writes a money amount with 2 decimals in the document currency
// (PEPPOL-EN16931-R051). Values are already 2-decimal (validated or computed
// from validated values), so StringFixed only pads.
func (p *prepared) etreeAmount(parent *etree.Element, name string, d decimal.Decimal) {
	etreeCBC(parent, name, d.StringFixed(2)).CreateAttr("currencyID", p.inv.Currency)
}

// amountNoRound writes an amount that BR-DEC does not limit (BT-146), at
// least 2 decimals for readability, more when given.
func (p *prepared) etreeAmountNoRound(parent *etree.Element, name string, d decimal.Decimal) {
	s := d.StringFixed(2)
	if !d.Truncate(2).Equal(d) {
		s = d.String() // all significant decimals, no rounding
	}
	etreeCBC(parent, name, s).CreateAttr("currencyID", p.inv.Currency)
}
