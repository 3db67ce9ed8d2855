package ubl

import (
	"github.com/beevik/etree"
	"github.com/shopspring/decimal"
)

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
// aggregate components; research/ubl.md §2 lists it with the business terms.
func (p *prepared) render() ([]byte, error) {
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

	cbc(root, "CustomizationID", string(inv.Profile))
	if inv.Profile == ProfilePeppol {
		cbc(root, "ProfileID", peppolProfileID)
	}
	cbc(root, "ID", inv.ID)
	cbc(root, "IssueDate", inv.IssueDate)
	cbc(root, typeName, typeCode)
	optional(root, "cbc:Note", inv.Note)
	cbc(root, "DocumentCurrencyCode", inv.Currency)
	optional(root, "cbc:BuyerReference", inv.BuyerReference)
	if p.cn != nil {
		ref := root.CreateElement("cac:BillingReference").CreateElement("cac:InvoiceDocumentReference")
		cbc(ref, "ID", p.cn.InvoiceRef)
		optional(ref, "cbc:IssueDate", p.cn.InvoiceIssueDate)
	}
	p.party(root.CreateElement("cac:AccountingSupplierParty"), inv.Seller, p.seller)
	p.party(root.CreateElement("cac:AccountingCustomerParty"), inv.Buyer, p.buyer)
	if pm := inv.PaymentMeans; pm != nil {
		e := root.CreateElement("cac:PaymentMeans")
		code := cbc(e, "PaymentMeansCode", pm.Code)
		if pm.Name != "" {
			code.CreateAttr("name", pm.Name)
		}
		optional(e, "cbc:PaymentID", pm.PaymentID)
	}
	p.taxTotal(root)
	p.monetaryTotal(root)
	for i, l := range inv.Lines {
		p.line(root.CreateElement("cac:"+lineName), qtyName, p.lineIDs[i], l)
	}

	doc.IndentWithSettings(&etree.IndentSettings{Spaces: 2, PreserveLeafWhitespace: true})
	return doc.WriteToBytes()
}

// party writes cac:Party (BG-4 / BG-7) in the order of the XSD PartyType:
// EndpointID, PostalAddress, PartyTaxScheme, PartyLegalEntity, Contact.
func (p *prepared) party(parent *etree.Element, pt Party, ep endpoint) {
	e := parent.CreateElement("cac:Party")
	if ep.id != "" {
		cbc(e, "EndpointID", ep.id).CreateAttr("schemeID", ep.scheme)
	}
	addr := e.CreateElement("cac:PostalAddress")
	optional(addr, "cbc:StreetName", pt.Street)
	optional(addr, "cbc:CityName", pt.City)
	optional(addr, "cbc:PostalZone", pt.PostalCode)
	cbc(addr.CreateElement("cac:Country"), "IdentificationCode", pt.Country)
	if p.writeVAT && pt.VATNumber != "" {
		ts := e.CreateElement("cac:PartyTaxScheme")
		cbc(ts, "CompanyID", pt.VATNumber)
		vatScheme(ts)
	}
	if pt.TaxRegistrationID != "" {
		// BT-32: any TaxScheme/ID other than VAT marks it (CEN rule
		// context PartyTaxScheme[cac:TaxScheme/cbc:ID != 'VAT']).
		ts := e.CreateElement("cac:PartyTaxScheme")
		cbc(ts, "CompanyID", pt.TaxRegistrationID)
		cbc(ts.CreateElement("cac:TaxScheme"), "ID", "TAX")
	}
	le := e.CreateElement("cac:PartyLegalEntity")
	cbc(le, "RegistrationName", pt.Name)
	if pt.LegalID != "" {
		id := cbc(le, "CompanyID", pt.LegalID)
		if pt.LegalIDScheme != "" {
			id.CreateAttr("schemeID", pt.LegalIDScheme)
		}
	}
	if pt.Contact != (Contact{}) {
		ct := e.CreateElement("cac:Contact")
		optional(ct, "cbc:Name", pt.Contact.Name)
		optional(ct, "cbc:Telephone", pt.Contact.Telephone)
		optional(ct, "cbc:ElectronicMail", pt.Contact.Email)
	}
}

// taxTotal writes the one cac:TaxTotal with its breakdown (BT-110, BG-23;
// PEPPOL-EN16931-R053). No second TaxTotal: there is no tax currency (BT-6).
func (p *prepared) taxTotal(root *etree.Element) {
	tt := root.CreateElement("cac:TaxTotal")
	p.amount(tt, "TaxAmount", p.totals.Tax)
	for _, s := range p.totals.Subtotals {
		st := tt.CreateElement("cac:TaxSubtotal")
		p.amount(st, "TaxableAmount", s.TaxableAmount)
		p.amount(st, "TaxAmount", s.TaxAmount)
		cat := st.CreateElement("cac:TaxCategory")
		cbc(cat, "ID", s.Category)
		if s.Category != "O" { // BR-O-05 .. BR-O-07: no rate for O
			cbc(cat, "Percent", s.RatePercent.String())
		}
		optional(cat, "cbc:TaxExemptionReasonCode", s.ExemptionCode)
		optional(cat, "cbc:TaxExemptionReason", s.ExemptionReason)
		vatScheme(cat)
	}
}

// monetaryTotal writes cac:LegalMonetaryTotal (BG-22).
func (p *prepared) monetaryTotal(root *etree.Element) {
	t := p.totals
	m := root.CreateElement("cac:LegalMonetaryTotal")
	p.amount(m, "LineExtensionAmount", t.LineExtension)
	p.amount(m, "TaxExclusiveAmount", t.TaxExclusive)
	p.amount(m, "TaxInclusiveAmount", t.TaxInclusive)
	if p.inv.PaidInFull {
		p.amount(m, "PrepaidAmount", t.Prepaid)
	}
	p.amount(m, "PayableAmount", t.Payable)
}

// line writes cac:InvoiceLine / cac:CreditNoteLine (BG-25).
func (p *prepared) line(e *etree.Element, qtyName, id string, l Line) {
	cbc(e, "ID", id)
	cbc(e, qtyName, l.Quantity.String()).CreateAttr("unitCode", "C62") // UN/ECE Rec 20 "one"
	p.amount(e, "LineExtensionAmount", l.NetAmount)
	item := e.CreateElement("cac:Item")
	cbc(item, "Name", l.Name)
	ct := item.CreateElement("cac:ClassifiedTaxCategory")
	cbc(ct, "ID", l.Category)
	if l.Category != "O" {
		cbc(ct, "Percent", l.RatePercent.String())
	}
	vatScheme(ct)
	p.amountNoRound(e.CreateElement("cac:Price"), "PriceAmount", l.PriceAmount)
}

// cbc adds a basic component with text.
func cbc(parent *etree.Element, name, text string) *etree.Element {
	e := parent.CreateElement("cbc:" + name)
	e.SetText(text)
	return e
}

// optional adds an element only when text is set.
func optional(parent *etree.Element, name, text string) {
	if text != "" {
		parent.CreateElement(name).SetText(text)
	}
}

func vatScheme(parent *etree.Element) {
	cbc(parent.CreateElement("cac:TaxScheme"), "ID", "VAT")
}

// amount writes a money amount with 2 decimals in the document currency
// (PEPPOL-EN16931-R051). Values are already 2-decimal (validated or computed
// from validated values), so StringFixed only pads.
func (p *prepared) amount(parent *etree.Element, name string, d decimal.Decimal) {
	cbc(parent, name, d.StringFixed(2)).CreateAttr("currencyID", p.inv.Currency)
}

// amountNoRound writes an amount that BR-DEC does not limit (BT-146), at
// least 2 decimals for readability, more when given.
func (p *prepared) amountNoRound(parent *etree.Element, name string, d decimal.Decimal) {
	s := d.StringFixed(2)
	if !d.Truncate(2).Equal(d) {
		s = d.String() // all significant decimals, no rounding
	}
	cbc(parent, name, s).CreateAttr("currencyID", p.inv.Currency)
}
