package ubl

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// reITTaxID is the form IT-R-001 requires of an Italian seller's BT-32.
var reITTaxID = regexp.MustCompile(`^[A-Z0-9]{11,16}$`)

// Swedish VAT rates accepted by SE-R-006.
var (
	dec25 = decimal.New(25, 0)
	dec12 = decimal.New(12, 0)
	dec6  = decimal.New(6, 0)
)

// checkPeppolNational applies the national rules of Peppol BIS Billing
// 3.0.21 (PEPPOL-EN16931-UBL.xslt, patterns for DE, DK, GR, IS, IT, NL, NO,
// SE) that can fire on what this renderer writes. Each check names the rule
// it guards; the conditions mirror the rule contexts of the XSLT:
//
//   - "supplier country" for NO, IT and GR is the prefix of the seller VAT
//     identifier when one is written, else the seller's postal country
//     (XSLT parameter supplierCountry);
//   - DE, DK, IS, NL and SE rules use the postal countries.
//
// Rules about elements never written here (allowances, attachments, payment
// accounts, invoice periods, tax representatives, PartyIdentification) cannot
// fire and are not listed. Warnings (e.g. NO-R-002, DE-R-017) are not errors.
func checkPeppolNational(c *checker, p *prepared) {
	inv := p.inv
	seller, buyer := inv.Seller, inv.Buyer
	supplierCountry := supplierCountry(p)

	// Greece: GR-R-001 … GR-R-010 (greece.go).
	if p.greekSeller {
		checkGreek(c, p)
	}

	// Norway: NO-R-001, the seller VAT identifier is NO + organisation number + MVA.
	if supplierCountry == "NO" && (!p.writeVAT || !noVATOK(seller.VATNumber)) {
		c.addf("Seller.VATNumber", "NO-R-001", ErrFormat, "a Norwegian seller's VAT identifier must be NO, a valid 9-digit organisation number and MVA; got %q", writtenVAT(p, seller))
	}

	// Italy: IT-R-002 .. IT-R-004, the seller's street, city and post code;
	// IT-R-001, a tax registration identifier (BT-32) is a codice fiscale
	// or partita IVA form: 11 to 16 upper-case letters or digits.
	if supplierCountry == "IT" {
		requireAddress(c, "Seller", seller, "IT-R-002", "IT-R-003", "IT-R-004")
		if id := seller.TaxRegistrationID; id != "" && !reITTaxID.MatchString(id) {
			c.addf("Seller.TaxRegistrationID", "IT-R-001", ErrFormat, "an Italian seller's tax registration identifier is 11 to 16 upper-case letters or digits, not %q", id)
		}
	}

	// Germany, both parties: DE-R-001 .. DE-R-016.
	if seller.Country == "DE" && buyer.Country == "DE" {
		if inv.PaymentMeans == nil {
			c.add("PaymentMeans", "DE-R-001", ErrRequired, "seller and buyer in Germany: payment instructions (BG-16) are required")
		}
		if seller.Contact == (Contact{}) {
			c.add("Seller.Contact", "DE-R-002", ErrRequired, "seller and buyer in Germany: the seller contact (BG-6) is required")
		}
		if seller.Contact.Name == "" {
			c.add("Seller.Contact.Name", "DE-R-005", ErrRequired, "")
		}
		if seller.Contact.Telephone == "" {
			c.add("Seller.Contact.Telephone", "DE-R-006", ErrRequired, "")
		}
		if seller.Contact.Email == "" {
			c.add("Seller.Contact.Email", "DE-R-007", ErrRequired, "")
		}
		requireField(c, "Seller.City", "DE-R-003", seller.City)
		requireField(c, "Seller.PostalCode", "DE-R-004", seller.PostalCode)
		requireField(c, "Buyer.City", "DE-R-008", buyer.City)
		requireField(c, "Buyer.PostalCode", "DE-R-009", buyer.PostalCode)
		if !p.writeVAT {
			// DE-R-014 wants a rate on every breakdown; BR-O-05..07 forbid
			// one for category O. The two cannot both hold.
			c.add("Lines", "DE-R-014", ErrUnsupported, "seller and buyer in Germany: DE-R-014 requires a VAT rate that category O may not have (BR-O-05)")
		}
	}

	// Netherlands: NL-R-002 .. NL-R-008.
	if seller.Country == "NL" {
		requireAddress(c, "Seller", seller, "NL-R-002", "NL-R-002", "NL-R-002")
		if seller.LegalID != "" && seller.LegalIDScheme != "0106" && seller.LegalIDScheme != "0190" {
			c.add("Seller.LegalIDScheme", "NL-R-003", ErrCode, "a Dutch seller's legal identifier is a KvK (0106) or OIN (0190) number")
		}
		if p.kind == kindInvoice && p.totals.Payable.IsPositive() && inv.PaymentMeans == nil {
			c.add("PaymentMeans", "NL-R-007", ErrRequired, "a Dutch seller's invoice with an amount due needs payment means")
		}
		if buyer.Country == "NL" {
			requireAddress(c, "Buyer", buyer, "NL-R-004", "NL-R-004", "NL-R-004")
			if buyer.LegalID != "" && buyer.LegalIDScheme != "0106" && buyer.LegalIDScheme != "0190" {
				c.add("Buyer.LegalIDScheme", "NL-R-005", ErrCode, "a Dutch buyer's legal identifier is a KvK (0106) or OIN (0190) number")
			}
			if inv.PaymentMeans != nil {
				// NL-R-008 allows only 30, 48, 49, 57, 58, 59: bank and card
				// codes that do not describe a stablecoin transfer.
				c.add("PaymentMeans", "NL-R-008", ErrForbidden, "between Dutch parties the payment means code must be a bank or card code (30, 48, 49, 57, 58, 59); omit PaymentMeans for a settled stablecoin payment")
			}
		}
	}

	// Denmark: DK-R-002, DK-R-014, DK-R-005, DK-R-017.
	if seller.Country == "DK" {
		if seller.LegalID == "" {
			c.add("Seller.LegalID", "DK-R-002", ErrRequired, "a Danish seller must give its CVR number as legal identifier")
		} else if seller.LegalIDScheme != "0184" {
			c.add("Seller.LegalIDScheme", "DK-R-014", ErrCode, "a Danish seller's legal identifier has scheme 0184 (CVR)")
		}
		if buyer.Country == "DK" {
			if pm := inv.PaymentMeans; pm != nil && pm.Code != "1" {
				c.addf("PaymentMeans.Code", "DK-R-005", ErrCode, "between Danish parties the payment means code %q is not allowed; use 1 (instrument not defined) or omit PaymentMeans", pm.Code)
			}
			if buyer.LegalID != "" && buyer.LegalIDScheme != "0184" {
				c.add("Buyer.LegalIDScheme", "DK-R-017", ErrCode, "a Danish buyer's legal identifier has scheme 0184 (CVR)")
			}
		}
	}

	// Iceland: IS-R-002 .. IS-R-005.
	if seller.Country == "IS" {
		if seller.LegalID == "" || seller.LegalIDScheme != "0196" {
			c.add("Seller.LegalID", "IS-R-002", ErrRequired, "an Icelandic seller must give its kennitala with scheme 0196")
		}
		requireField(c, "Seller.Street", "IS-R-003", seller.Street)
		requireField(c, "Seller.PostalCode", "IS-R-003", seller.PostalCode)
		if buyer.Country == "IS" {
			if buyer.LegalID == "" || buyer.LegalIDScheme != "0196" {
				c.add("Buyer.LegalID", "IS-R-004", ErrRequired, "between Icelandic parties the buyer's kennitala (scheme 0196) is required")
			}
			requireField(c, "Buyer.Street", "IS-R-005", buyer.Street)
			requireField(c, "Buyer.PostalCode", "IS-R-005", buyer.PostalCode)
		}
	}

	// Sweden: SE-R-001/002 (VAT number form), SE-R-006 (rates),
	// SE-R-003/004/013 (organisation number as legal identifier).
	if seller.Country == "SE" {
		seVAT := p.writeVAT && strings.HasPrefix(seller.VATNumber, "SE")
		if seVAT && !hasShape(seller.VATNumber, shapeSEVAT) {
			c.addf("Seller.VATNumber", "SE-R-001", ErrFormat, "a Swedish VAT number is SE followed by 12 digits; got %q", seller.VATNumber)
		}
		if seVAT {
			for i, l := range inv.Lines {
				if l.Category == "S" && !(l.RatePercent.Equal(dec25) || l.RatePercent.Equal(dec12) || l.RatePercent.Equal(dec6)) {
					c.addf("Lines["+strconv.Itoa(i)+"].RatePercent", "SE-R-006", ErrRange, "a Swedish seller's standard-rated VAT is 25, 12 or 6 percent, not %s", l.RatePercent.String())
				}
			}
		}
		// SE-R-005: with a legal identifier, a tax registration identifier
		// (BT-32) can only be the F-tax approval "Godkänd för F-skatt".
		if seller.LegalID != "" && seller.TaxRegistrationID != "" && strings.ToUpper(strings.Join(strings.Fields(seller.TaxRegistrationID), " ")) != "GODKÄND FÖR F-SKATT" {
			c.addf("Seller.TaxRegistrationID", "SE-R-005", ErrFormat, "a Swedish seller's tax registration identifier is \"Godkänd för F-skatt\", not %q", seller.TaxRegistrationID)
		}
		if seller.LegalID != "" && !seOrgnrOK(seller.LegalID) {
			c.addf("Seller.LegalID", "SE-R-013", ErrFormat, "a Swedish seller's legal identifier is a 10-digit organisation number with a valid check digit; got %q", seller.LegalID)
		}
	}
}

func writtenVAT(p *prepared, pt Party) string {
	if !p.writeVAT {
		return ""
	}
	return pt.VATNumber
}

func requireField(c *checker, field, rule, v string) {
	if v == "" {
		c.add(field, rule, ErrRequired, "")
	}
}

func requireAddress(c *checker, f string, pt Party, streetRule, cityRule, postRule string) {
	requireField(c, f+".Street", streetRule, pt.Street)
	requireField(c, f+".City", cityRule, pt.City)
	requireField(c, f+".PostalCode", postRule, pt.PostalCode)
}
