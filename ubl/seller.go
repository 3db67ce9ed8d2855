package ubl

import (
	"slices"

	"github.com/shopspring/decimal"
)

// SellerCheck says whether invoices can be rendered for a seller at all,
// per kind of sale, before any sale happens: each list holds the problems
// RenderInvoice would report for that kind of sale that stem from the
// seller's data (what the account must hold), with the field
// ("Seller.Contact.Email") and the rule ("DE-R-007", "BR-S-02",
// "VAT-Art362"). Empty lists mean the seller can be invoiced.
type SellerCheck struct {
	// B2C: a standard-rated sale to a consumer in the tax country (plain
	// EN 16931).
	B2C []*FieldError

	// B2BStandard: a standard-rated sale over Peppol to a business in the
	// tax country (the Peppol national rules of a domestic sale: DE-R-*,
	// NL-R-*, DK-R-*, GR-R-*, ...).
	B2BStandard []*FieldError

	// B2BReverseCharge: a reverse-charge sale over Peppol: to a business
	// in another member state when the tax country is in the EU, to a UK
	// business under the UK reverse charge when it is GB.
	B2BReverseCharge []*FieldError

	// PerInvoice lists data that is not account data but that every Peppol
	// invoice of this seller must carry, such as a Greek seller's myDATA
	// M.AR.K and invoice URL (GR-R-004-1, GR-S-008-1). The B2B lists above
	// assume the engine supplies it; an engine that cannot must treat a
	// non-empty PerInvoice as blocking B2B sales.
	PerInvoice []*FieldError
}

// OK reports whether the seller can be invoiced for every kind of sale.
func (s SellerCheck) OK() bool {
	return len(s.B2C) == 0 && len(s.B2BStandard) == 0 && len(s.B2BReverseCharge) == 0
}

// CheckSeller tells, at account creation, what stops a seller from being
// invoiced, by rendering a synthetic sale of each kind with complete buyer
// data, so that every problem it reports is the seller's. taxCountry is the
// country whose invoicing law applies (Invoice.TaxCountry; empty means the
// seller's country). The seller is given as it will appear on invoices
// under that law: for a UK invoice with its GB VRN, for EU business sales
// without a non-Union OSS number (VAT-Art362), and so on; a seller with
// several registrations is checked once per tax country.
//
// The synthetic sales are in EUR with the tax currency of the country
// (Art. 230), dated 2026-11-20, paid in full; their payment means are
// those StablecoinPaymentMeans chooses.
func CheckSeller(seller Party, taxCountry string) SellerCheck {
	if taxCountry == "" {
		taxCountry = seller.Country
	}
	var res SellerCheck
	if _, ok := NationalCurrency(taxCountry); !ok {
		p := []*FieldError{{Field: "TaxCountry", Err: ErrUnsupported, Detail: "no invoicing rules known for " + taxCountry}}
		return SellerCheck{B2C: p, B2BStandard: p, B2BReverseCharge: p}
	}
	synth := func(profile Profile, buyer Party, l Line) Invoice {
		inv := Invoice{
			Profile: profile, ID: "CHECK-1", IssueDate: "2026-11-20", SupplyDate: "2026-11-20", Currency: "EUR",
			TaxCountry: taxCountry, BuyerReference: "check",
			Seller: seller, Buyer: buyer, Lines: []Line{l}, PaidInFull: true,
			PaymentMeans: StablecoinPaymentMeans(seller.Country, buyer.Country, "0x00"),
		}
		if cur, _ := NationalCurrency(taxCountry); cur != "EUR" {
			inv.TaxCurrency = &TaxCurrency{Code: cur, Rate: decimal.New(1, 0), RateDate: "2026-11-19", RateSource: "check"}
		}
		if greekPostal(seller) {
			inv.MyDATA = &MyDATA{MARK: "1", URL: "https://example.invalid/1"}
			if vat := seller.VATNumber; len(vat) == 11 {
				if id, err := GreekInvoiceNumber(vat[2:], inv.IssueDate, 0, GreekDocTypeServices, "CHECK", "1"); err == nil {
					inv.ID = id
				}
			}
		}
		return inv
	}
	rate := decimal.New(20, 0)
	if seller.Country == "SE" {
		rate = decimal.New(25, 0) // SE-R-006: 25, 12 or 6
	}
	std := Line{Name: "check", Quantity: decimal.New(1, 0), PriceAmount: decimal.New(100, 0), NetAmount: decimal.New(100, 0), Category: "S", RatePercent: rate}
	rc := std
	rc.Category, rc.RatePercent = "AE", decimal.Zero

	res.B2C = sellerProblems(synth(ProfileEN16931, Party{Name: "Consumer", Country: taxCountry}, std))
	res.B2BStandard = sellerProblems(synth(ProfilePeppol, checkBuyer(taxCountry, ""), std))
	rcBuyer := checkBuyer("DE", "DE987654321")
	switch {
	case taxCountry == "GB":
		rcBuyer = checkBuyer("GB", "GB123456782")
	case taxCountry == "DE":
		rcBuyer = checkBuyer("AT", "ATU13585627")
	}
	res.B2BReverseCharge = sellerProblems(synth(ProfilePeppol, rcBuyer, rc))
	if greekPostal(seller) {
		res.PerInvoice = []*FieldError{{Field: "MyDATA", Rule: "GR-R-004-1", Err: ErrRequired,
			Detail: "every Peppol invoice of a Greek seller carries the M.AR.K and invoice URL that myDATA assigns when the invoice is transmitted (GR-R-004-1, GR-S-008-1)"}}
	}
	return res
}

// checkBuyer is a business buyer with everything any rule asks of a buyer:
// full address, an explicit electronic address (a GLN with a valid check
// digit; a Greek TIN under 9933 in Greece), a VAT identifier when given.
func checkBuyer(country, vat string) Party {
	b := Party{Name: "Check Buyer", VATNumber: vat, Street: "1 Check Street", City: "Check City", PostalCode: "1000", Country: country,
		EndpointID: "5790000435968", EndpointScheme: "0088"}
	switch country {
	case "GR":
		b.VATNumber, b.EndpointID, b.EndpointScheme = "EL800123456", "800123456", "9933" // GR-R-006, GR-R-010
	case "IS":
		b.LegalID, b.LegalIDScheme = "5501690339", "0196" // IS-R-004
	}
	return b
}

func greekPostal(p Party) bool { return p.Country == "GR" }

// sellerProblems renders inv and keeps the problems, without duplicates.
func sellerProblems(inv Invoice) []*FieldError {
	_, err := RenderInvoice(inv)
	ve, ok := err.(*ValidationError)
	if !ok {
		return nil
	}
	var out []*FieldError
	for _, p := range ve.Problems {
		if !slices.ContainsFunc(out, func(q *FieldError) bool { return q.Field == p.Field && q.Rule == p.Rule }) {
			out = append(out, p)
		}
	}
	return out
}

// StablecoinPaymentMeans returns the payment means (BG-16) for a settled
// stablecoin transfer that the Peppol national rules of the parties'
// countries accept: none between Dutch parties (NL-R-008 allows only bank
// and card codes; NL-R-007 needs none on a paid invoice), code 1
// "instrument not defined" between Danish parties (DK-R-005), otherwise
// ZZZ "mutually defined" (UNCL4461 has no crypto-asset code:
// https://docs.peppol.eu/poacc/billing/3.0/codelist/UNCL4461/),
// which DE-R-001 needs between German parties. txHash becomes the payment
// id (BT-83).
func StablecoinPaymentMeans(sellerCountry, buyerCountry, txHash string) *PaymentMeans {
	switch {
	case sellerCountry == "NL" && buyerCountry == "NL":
		return nil
	case sellerCountry == "DK" && buyerCountry == "DK":
		return &PaymentMeans{Code: "1", Name: "USDC stablecoin transfer", PaymentID: txHash}
	}
	return &PaymentMeans{Code: "ZZZ", Name: "USDC stablecoin transfer", PaymentID: txHash}
}
