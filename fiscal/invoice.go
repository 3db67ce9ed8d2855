package fiscal

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// networkNames are the human names of the supported networks, for the
// invoice note.
var networkNames = map[string]string{
	evmverify.NetworkBase:     "Base",
	evmverify.NetworkEthereum: "Ethereum",
}

// invoiceFor builds the UBL invoice of a processed record: one line, EUR,
// paid in full by the USDC settlement (research/ubl.md §5 option A, §7).
// B2C invoices use plain EN 16931; business buyers get Peppol BIS 3.0
// (research/ubl.md §6).
func invoiceFor(r *Record, net, tax decimal.Decimal, issued time.Time) (ubl.Invoice, error) {
	det := r.Classification
	rate := decimal.Zero
	if det.RatePercent != nil {
		rate = det.RatePercent.Decimal()
	}
	seller := ubl.Party{
		Name:       r.Seller.LegalName,
		LegalID:    r.Seller.LegalID,
		Street:     r.Seller.Address.Street,
		City:       r.Seller.Address.City,
		PostalCode: r.Seller.Address.PostalCode,
		Country:    isoCountry(r.Seller.Address.Country),
	}
	buyer := ubl.Party{
		Name:       buyerName(r),
		PostalCode: r.Buyer.PostalCode,
		Country:    isoCountry(r.Buyer.Country),
	}
	// A non-Union OSS number ("EU" + 9 digits, Art. 362 VAT Directive) is
	// not a VAT identifier in the EN 16931 sense (BR-CO-09): it goes into
	// the seller's tax registration identifier (BT-32).
	if strings.HasPrefix(r.Seller.VATNumber, "EU") {
		seller.TaxRegistrationID = r.Seller.VATNumber
	} else {
		seller.VATNumber = r.Seller.VATNumber
	}
	if det.BuyerTreatment == "B2B" && r.Buyer.Registry != nil {
		buyer.VATNumber = r.Buyer.Registry.CountryCode + r.Buyer.Registry.Number
	}
	profile := invoiceProfile(det, seller, buyer)
	line := ubl.Line{
		ID:              "1",
		Name:            r.Supply.Description,
		Quantity:        decimal.NewFromInt(1),
		PriceAmount:     net,
		NetAmount:       net,
		Category:        det.Category,
		RatePercent:     rate,
		ExemptionCode:   det.VATEX,
		ExemptionReason: det.ExemptionReason,
	}
	note, err := settlementNote(r, det)
	if err != nil {
		return ubl.Invoice{}, err
	}
	issueDate := issued.UTC().Format("2006-01-02")
	// The date of supply (BT-72) is the local day of the chargeable event
	// in the taxing territory (vat: Determination.SupplyDate); Art. 226(7)
	// Directive 2006/112/EC requires it where it differs from the date of
	// issue.
	var supplyDate string
	if det.SupplyDate != "" && det.SupplyDate != issueDate {
		supplyDate = det.SupplyDate
	}
	return ubl.Invoice{
		Profile:        profile,
		ID:             r.ID,
		IssueDate:      issueDate,
		SupplyDate:     supplyDate,
		Currency:       "EUR",
		Note:           note,
		BuyerReference: r.ID,
		Seller:         seller,
		Buyer:          buyer,
		Lines:          []ubl.Line{line},
		Subtotals: []ubl.TaxSubtotal{{
			Category:        det.Category,
			RatePercent:     rate,
			TaxableAmount:   net,
			TaxAmount:       tax,
			ExemptionCode:   det.VATEX,
			ExemptionReason: det.ExemptionReason,
		}},
		PaymentMeans: &ubl.PaymentMeans{Code: "ZZZ", Name: "USDC stablecoin transfer", PaymentID: r.Settlement.TxHash},
		PaidInFull:   true,
	}, nil
}

// invoiceProfile picks the customisation: business buyers get Peppol BIS
// Billing 3.0 when both parties have a Peppol address derivable from their
// VAT numbers (research/ubl.md §6); everything else, and every consumer, is
// plain EN 16931, which Peppol would reject for lack of a buyer endpoint
// (PEPPOL-EN16931-R010) but which is the right document outside Peppol.
func invoiceProfile(det vat.Determination, seller, buyer ubl.Party) ubl.Profile {
	if det.BuyerTreatment != "B2B" || det.OmitVATIDs() {
		return ubl.ProfileEN16931
	}
	if _, ok := ubl.EASForVATNumber(seller.VATNumber); !ok {
		return ubl.ProfileEN16931
	}
	if _, ok := ubl.EASForVATNumber(buyer.VATNumber); !ok {
		return ubl.ProfileEN16931
	}
	return ubl.ProfilePeppol
}

// settlementNote states the USDC settlement and the conversion in the one
// note the invoice may carry (Peppol R002; research/ubl.md §5), followed by
// the VAT mention the determination requires ("Reverse charge", Art. 226(11a)).
func settlementNote(r *Record, det vat.Determination) (string, error) {
	rt := r.FX.USDPerEUR
	note, err := ubl.SettlementNote("EUR", ubl.Settlement{
		PaidOn:       r.Settlement.Timestamp[:len("2006-01-02")],
		Amount:       r.Settlement.AmountUSDC,
		Asset:        r.Settlement.Asset,
		Network:      r.Settlement.Network + " (" + networkNames[r.Settlement.Network] + ")",
		TxHash:       r.Settlement.TxHash,
		Rate:         rt.Raw,
		RateCurrency: rt.Quote,
		RateDate:     rt.RateDate,
		RateSource:   fmt.Sprintf("ECB euro foreign exchange reference rate %s, policy %s; 1 USDC taken as %s USD (%s)", rt.Source, rt.Policy, r.FX.USDCUSD.Rate, r.FX.USDCUSD.Source),
		Sandbox:      r.Environment == receipt.EnvSandbox,
	})
	if err != nil {
		return "", err
	}
	if det.InvoiceNote != "" {
		note += " " + det.InvoiceNote
	}
	return note, nil
}

// buyerName is the buyer's name on the invoice (BT-44 is mandatory, BR-07):
// the registry's name for a confirmed business when it discloses one, else
// the name the merchant attested, else a neutral label.
func buyerName(r *Record) string {
	if reg := r.Buyer.Registry; reg != nil && r.Classification.BuyerTreatment == "B2B" && reg.Name != "" && reg.Name != "---" {
		return reg.Name
	}
	if r.Buyer.Name != "" {
		return r.Buyer.Name
	}
	if r.Classification.BuyerTreatment == "B2B" {
		return "Business customer"
	}
	return "Private customer"
}

// isoCountry maps the VAT prefixes that are not ISO 3166-1 codes to the
// country of the address: EL → GR (Greece), XI → GB (Northern Ireland).
// EN 16931 BR-CL-14 requires ISO 3166-1 codes in addresses.
func isoCountry(c string) string {
	switch c {
	case "EL":
		return "GR"
	case "XI":
		return "GB"
	}
	return c
}
