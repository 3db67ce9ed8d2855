package ubl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Greek sellers under Peppol BIS 3.0.21 (PEPPOL-EN16931-UBL.xslt, patterns
// of GR-R-001 … GR-R-010; https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-peppol/):
//
//   - GR-R-001-1..7: the invoice number (BT-1) has six segments separated
//     by "|": the seller's TIN, the issue date as DD/MM/YYYY, the branch
//     (installation) number, the myDATA document type (1.1, 1.6, 2.1, 2.4,
//     5.1, 5.2), the series and the sequential number. GreekInvoiceNumber
//     builds it.
//   - GR-R-002, GR-R-005: both parties' full names in PartyName; written
//     automatically from Party.Name.
//   - GR-R-003, GR-S-011: the seller's VAT identifier is EL + a valid TIN.
//   - GR-R-004-1/2, GR-S-008-1, GR-R-008-2/3: the M.AR.K and the invoice URL
//     that myDATA assigns (Invoice.MyDATA), for a seller with postal
//     address in Greece.
//   - GR-R-009, GR-R-010: the electronic addresses of a Greek seller (and
//     of its Greek buyer) are the TIN under scheme 9933, without EL.
//   - GR-R-006: a Greek seller's Greek buyer has an EL VAT identifier with
//     a valid TIN.
//
// "Greek" is decided as the artefact does: the prefix of the VAT
// identifier written for the party, else its postal country.

// The myDATA document types the Peppol Greek rules accept
// (greekDocumentType in the XSLT; AADE myDATA invoice types: 1.1 sales
// invoice, 1.6 supplementary sales invoice, 2.1 invoice for services,
// 2.4 supplementary services invoice, 5.1 credit invoice referring to an
// invoice, 5.2 credit invoice not referring to one).
var greekDocTypes = []string{"1.1", "1.6", "2.1", "2.4", "5.1", "5.2"}

// Document types for what this product sells: services (2.1) and their
// refunds, which always refer to the invoice (5.1).
const (
	GreekDocTypeServices   = "2.1"
	GreekDocTypeCreditNote = "5.1"
)

const (
	greekMARKDescription = "##M.AR.K##"
	greekURLDescription  = "##INVOICE|URL##"
	greekURLReferenceID  = "INVOICE-URL" // BT-122 of the URL reference; any identifier (BR-52)
)

var (
	reMARK = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// greekTINOK is u:TinVerification: 9 digits, the weighted sum of the first
// eight (weights 256, 128, …, 2) mod 11 mod 10 equals the ninth.
func greekTINOK(tin string) bool {
	if !hasShape(tin, shapeDigits9) {
		return false
	}
	sum := 0
	for i := range 8 {
		sum += digit(tin[i]) << (8 - i)
	}
	return sum%11%10 == digit(tin[8])
}

// GreekInvoiceNumber builds the invoice number of a Greek seller in the
// form GR-R-001 requires, e.g.
//
//	GreekInvoiceNumber("094259216", "2026-11-20", 0, GreekDocTypeServices, "F402", "000123")
//	= "094259216|20/11/2026|0|2.1|F402|000123"
//
// tin is the seller's TIN (its VAT identifier without EL), issueDate the
// invoice's IssueDate (YYYY-MM-DD), branch the myDATA installation number
// (0 for the head office), docType a myDATA document type, series and
// number the invoice series and its sequential number (Art. 226(2)); none
// of them may contain "|". It returns a *ValidationError naming the
// offending argument.
func GreekInvoiceNumber(tin, issueDate string, branch int, docType, series, number string) (string, error) {
	c := &checker{}
	if c.code("tin", "GR-R-001-2", tin) && !greekTINOK(tin) {
		c.addf("tin", "GR-R-001-2", ErrFormat, "%q is not a valid Greek TIN", tin)
	}
	c.date("issueDate", "GR-R-001-3", issueDate)
	if branch < 0 {
		c.addf("branch", "GR-R-001-4", ErrRange, "%d is negative", branch)
	}
	if c.code("docType", "GR-R-001-5", docType) && !containsString(greekDocTypes, docType) {
		c.addf("docType", "GR-R-001-5", ErrCode, "%q is not one of %v", docType, greekDocTypes)
	}
	for _, a := range []struct{ name, rule, v string }{{"series", "GR-R-001-6", series}, {"number", "GR-R-001-7", number}} {
		if c.identifier(a.name, a.rule, a.v) && strings.Contains(a.v, "|") {
			c.addf(a.name, a.rule, ErrFormat, "%q contains the segment separator |", a.v)
		}
	}
	if err := c.err(); err != nil {
		return "", err
	}
	return tin + "|" + issueDate[8:10] + "/" + issueDate[5:7] + "/" + issueDate[:4] + "|" +
		strconv.Itoa(branch) + "|" + docType + "|" + series + "|" + number, nil
}

// checkGreekID applies GR-R-001-1..7 to the invoice number of a Greek
// seller whose VAT identifier is vat (EL + TIN). It is stricter than the
// artefact where the artefact is lax: the date must be DD/MM/YYYY exactly,
// and the document type must fit the document (5.x, credit invoices, for
// a credit note; an invoice type otherwise), as myDATA classifies them.
func checkGreekID(c *checker, field, id, vat, issueDate string, kind docKind) {
	seg := strings.Split(id, "|")
	if len(seg) != 6 {
		c.addf(field, "GR-R-001-1", ErrFormat, "%q has %d segments separated by |, not 6 (TIN|DD/MM/YYYY|branch|type|series|number; see GreekInvoiceNumber)", id, len(seg))
		return
	}
	if !greekTINOK(seg[0]) || len(vat) < 11 || seg[0] != vat[2:11] {
		c.addf(field, "GR-R-001-2", ErrFormat, "first segment %q is not the seller's TIN (%s without EL)", seg[0], vat)
	}
	if len(issueDate) == 10 && seg[1] != issueDate[8:10]+"/"+issueDate[5:7]+"/"+issueDate[:4] {
		c.addf(field, "GR-R-001-3", ErrFormat, "second segment %q is not the issue date %s as DD/MM/YYYY", seg[1], issueDate)
	}
	if !isDigits(seg[2]) || len(seg[2]) > 9 {
		c.addf(field, "GR-R-001-4", ErrFormat, "third segment %q is not a branch number (an integer >= 0)", seg[2])
	}
	switch {
	case !containsString(greekDocTypes, seg[3]):
		c.addf(field, "GR-R-001-5", ErrCode, "fourth segment %q is not a myDATA document type %v", seg[3], greekDocTypes)
	case (kind == kindCreditNote) != strings.HasPrefix(seg[3], "5."):
		c.addf(field, "GR-R-001-5", ErrMismatch, "fourth segment %q: myDATA types 5.1 and 5.2 are credit invoices, the others invoices", seg[3])
	}
	if seg[4] == "" {
		c.add(field, "GR-R-001-6", ErrRequired, "fifth segment (series) is empty")
	}
	if seg[5] == "" {
		c.add(field, "GR-R-001-7", ErrRequired, "sixth segment (number) is empty")
	}
}

// checkGreek applies the Peppol Greek rules to a Greek seller's document.
func checkGreek(c *checker, p *prepared) {
	inv := p.inv
	seller, buyer := inv.Seller, inv.Buyer
	vat := ""
	if p.writeVAT {
		vat = seller.VATNumber
	}
	vatOK := strings.HasPrefix(vat, "EL") && greekTINOK(vat[2:])
	switch {
	case !p.writeVAT:
		c.add("Lines", "GR-S-011", ErrUnsupported, "a Greek seller's invoice states its VAT identifier, which a category-O invoice may not carry (BR-O-02)")
	case !vatOK:
		c.addf("Seller.VATNumber", "GR-R-003", ErrFormat, "a Greek seller's VAT identifier is EL and a valid 9-digit TIN, not %q", vat)
	}
	if vatOK && !p.draft {
		checkGreekID(c, "ID", inv.ID, vat, inv.IssueDate, p.kind)
	}
	if seller.Country == "GR" && inv.MyDATA == nil {
		c.add("MyDATA", "GR-R-004-1", ErrRequired, "a Greek seller's invoice carries the M.AR.K and invoice URL assigned by myDATA (GR-R-004-1, GR-S-008-1)")
	}
	if p.seller.id != "" && (p.seller.scheme != "9933" || !greekTINOK(p.seller.id)) {
		c.addf("Seller.EndpointID", "GR-R-009", ErrFormat, "a Greek seller's electronic address is its TIN under scheme 9933, not %s:%s", p.seller.scheme, p.seller.id)
	}
	bvat := ""
	if p.writeVAT {
		bvat = buyer.VATNumber
	}
	customerCountry := buyer.Country
	if len(bvat) >= 2 {
		customerCountry = strings.ToUpper(bvat[:2])
	}
	if customerCountry == "GR" || customerCountry == "EL" {
		if !strings.HasPrefix(bvat, "EL") || !greekTINOK(bvat[2:]) {
			c.addf("Buyer.VATNumber", "GR-R-006", ErrFormat, "a Greek seller's Greek buyer has an EL VAT identifier with a valid TIN, not %q", bvat)
		}
		if p.buyer.id != "" && (p.buyer.scheme != "9933" || !greekTINOK(p.buyer.id)) {
			c.addf("Buyer.EndpointID", "GR-R-010", ErrFormat, "a Greek buyer's electronic address is its TIN under scheme 9933, not %s:%s", p.buyer.scheme, p.buyer.id)
		}
	}
}

// isGreekSupplier is $isGreekSender of the artefact: the supplier country
// (VAT prefix when a VAT identifier is written, else postal) is GR or EL.
func isGreekSupplier(p *prepared) bool {
	sc := supplierCountry(p)
	return sc == "GR" || sc == "EL"
}

// supplierCountry is the XSLT parameter supplierCountry: the prefix of the
// seller VAT identifier when one is written, else the postal country.
func supplierCountry(p *prepared) string {
	if p.writeVAT && len(p.inv.Seller.VATNumber) >= 2 {
		return strings.ToUpper(p.inv.Seller.VATNumber[:2])
	}
	return strings.ToUpper(p.inv.Seller.Country)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func lineField(i int, name string) string { return fmt.Sprintf("Lines[%d].%s", i, name) }

func itoa(i int) string { return strconv.Itoa(i) }
