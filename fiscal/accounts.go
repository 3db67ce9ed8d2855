package fiscal

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/shopspring/decimal"
)

// Account is a seller the engine keeps books for: its id and the seller
// facts EU VAT needs (the ingest key identifies the merchant account,
// including the seller establishment). How a caller proves it acts for an
// account (API keys) is the HTTP layer's business, not the engine's.
type Account struct {
	ID     string `json:"id"`
	Seller Seller `json:"seller"`
}

// Seller is the account's seller profile: who issues the invoices and where it
// is established. Its zero values are documented per field.
type Seller struct {
	LegalName string  `json:"legalName"`           // required: BT-27 on every invoice
	VATNumber string  `json:"vatNumber,omitempty"` // with its country prefix; "" = not VAT-registered in the EU
	LegalID   string  `json:"legalId,omitempty"`   // company registration number (BT-30): an invoice to a buyer outside the EU may carry no VAT id (EN 16931 BR-O-02) and must identify the seller by it (BR-CO-26); without it such a sale waits for review
	Country   string  `json:"country"`             // ISO 3166-1 alpha-2 of the establishment (required)
	Address   Address `json:"address"`
	// OtherEstablishments are further EU member states with a fixed
	// establishment; a seller established in more than one state has no
	// Art. 59c threshold.
	OtherEstablishments []string `json:"otherEstablishments,omitempty"`
	// OverThreshold: the seller's cross-border B2C supplies of TBE services
	// plus distance sales exceeded EUR 10,000 this or last calendar year
	// (Art. 59c(1) VAT Directive). false (the zero value) means under it.
	OverThreshold bool `json:"overThreshold,omitempty"`
	// OptedForDestination: the Art. 59c(3) option to tax at destination.
	OptedForDestination bool `json:"optedForDestination,omitempty"`
	// Registrations lists where the seller is identified for VAT: the
	// Union or non-Union OSS with its member state of identification,
	// national registrations, a UK VRN. nil: not stated, and the seller is
	// taken to be registered wherever its sales are taxed; stated, a sale
	// needing a registration the list lacks is PENDING_MANUAL_REVIEW
	// (seller_not_registered), never a silently charged rate.
	Registrations []vat.Registration `json:"registrations,omitempty"`
	// ElectronicInterface: the account is an electronic interface (a
	// marketplace of APIs or agent tools) taking part in others'
	// electronically supplied services, presumed to be their supplier
	// (Art. 9a(1) Implementing Regulation 282/2011). A party that only
	// processes payments (an x402 facilitator) is not one (Art. 9a(3)).
	ElectronicInterface bool `json:"electronicInterface,omitempty"`
	// Art9aRebutted: the interface attests the conditions of Art. 9a(1)
	// second and third subparagraphs, so that the underlying provider is
	// the supplier. Only read with ElectronicInterface.
	Art9aRebutted bool `json:"art9aRebutted,omitempty"`
	// ReviewSpecialTerritories: a sale to a customer in a special
	// territory outside the EU VAT area (Canary Islands, Åland, ...) goes
	// to review instead of category O.
	ReviewSpecialTerritories bool `json:"reviewSpecialTerritories,omitempty"`
	// RateConditions are the legal conditions of reduced rates the seller
	// attests for all its sales (vat Condition codes, e.g.
	// "fr_press_cppap"); a conditional rate applies only when attested.
	RateConditions []string `json:"rateConditions,omitempty"`
	// FXPolicy chooses the ECB publication a sale is converted at: ""
	// means the engine's (fx.LatestPublishedAt: the latest rate published
	// at the time of the chargeable event, Art. 91(2) VAT Directive);
	// fx.ForDayOrPrevious is the "rate of the day" reading some member
	// states' guidance gives.
	FXPolicy fx.Policy `json:"fxPolicy,omitempty"`
	// OpeningTotals are the seller's cross-border B2C sales of
	// telecommunications, broadcasting and electronic services (EUR,
	// exclusive of VAT) made before it used the engine, per calendar year,
	// added to what the ledger holds for the Art. 59c threshold.
	OpeningTotals []OpeningTotal `json:"openingTotals,omitempty"`
	// InvoicePrefix opens the account's invoice numbers (numbering.go):
	// "" means "F402-"; the year and a six-digit sequential number follow
	// (F402-2026-000123). It may not end in "CN-", the mark of the
	// credit notes' series, nor open with "SANDBOX", the sandbox's
	// (invoicelaw.CheckInvoicePrefix).
	InvoicePrefix string `json:"invoicePrefix,omitempty"`
	// Invoicing is how the account's supplies are invoiced (invoicemode.go):
	// "" or "per_payment", "summary_monthly" (a summary invoice per buyer
	// and calendar month, Art. 223 Directive 2006/112/EC) or "none_b2c"
	// (no invoice to a consumer under the One-Stop Shop where the member
	// state of identification requires none). A business customer always
	// gets its own invoice.
	Invoicing string `json:"invoicing,omitempty"`
	// SupplyKind is the default supply kind of the account's sales; ""
	// means "digital_service".
	SupplyKind string `json:"supplyKind,omitempty"`
	// ItemName is the invoice line's item name when a settlement has no
	// description; "" means "Digital service".
	ItemName string `json:"itemName,omitempty"`

	// What the invoicing rules of some member states ask of the seller
	// (ubl.CheckSeller tells which, per tax country; invoicelaw.Check
	// runs it for the countries the seller's registrations imply). Each is
	// optional: a sale whose invoice needs one the account lacks is stored
	// PENDING_MANUAL_REVIEW (invoice_rules_failed) with the rule ids.

	// LegalIDScheme is the ISO 6523 ICD of LegalID (BT-30-1, BR-CL-11),
	// e.g. "0184" for a Danish CVR number (Peppol DK-R-014), "0106" for a
	// Dutch KvK number or "0190" for an OIN (NL-R-003). Needs LegalID.
	LegalIDScheme string `json:"legalIdScheme,omitempty"`
	// TaxRegistrationID is the seller's tax registration identifier
	// (BT-32) other than its VAT number, e.g. "Godkänd för F-skatt" for a
	// Swedish seller (Peppol SE-R-005) or an Italian codice fiscale
	// (IT-R-001). A non-Union OSS number on a B2C invoice of that scheme
	// takes its place (Art. 362).
	TaxRegistrationID string `json:"taxRegistrationId,omitempty"`
	// Contact is the seller's contact point (BG-6): Peppol requires name,
	// telephone and e-mail when seller and buyer are both in Germany
	// (DE-R-002, DE-R-005..007).
	Contact Contact `json:"contact,omitzero"`
	// ElectronicAddress is the seller's Peppol participant identifier
	// (BT-34). Without it one is derived from the VAT number where Peppol
	// has a scheme for its prefix (ubl.EASForVATNumber); DK, FI and SE
	// sellers, and a seller whose business invoices must carry no VAT
	// number, need it for Peppol invoices (DK-R-*, SE-R-*); without one
	// their business invoices are plain EN 16931.
	ElectronicAddress *ElectronicAddress `json:"electronicAddress,omitempty"`
	// UKRateAgreement is the reference of HMRC's written agreement that
	// the seller may convert to sterling at the ECB euro reference rate
	// (VAT tertiary legislation on valuation, originally VAT Notice 700,
	// option (c): "a rate ... which you use for commercial purposes but
	// which is not covered by (a) or (b)", with the agreement of HMRC's
	// VAT Written Enquiries Team,
	// https://www.gov.uk/guidance/vat-tertiary-legislation/valuation).
	// "": the seller has none, and an invoice under UK law, which must
	// state the VAT in sterling, waits for review
	// (national_rate_required): the engine has neither the UK market
	// selling rate (option (a)) nor HMRC's period rates (option (b)).
	UKRateAgreement string `json:"ukRateAgreement,omitempty"`
}

// Contact, ElectronicAddress and Address are the types of the invoicing
// law (package invoicelaw): a contact point (BG-6 of EN 16931), a Peppol
// participant identifier (BT-34) and a postal address (BG-5 / BG-8).
type (
	Contact           = invoicelaw.Contact
	ElectronicAddress = invoicelaw.ElectronicAddress
	Address           = invoicelaw.Address
)

// ForInvoiceLaw is the seller as the invoicing rules read it
// (invoicelaw.For, invoicelaw.SellerParty, invoicelaw.Check).
func (s Seller) ForInvoiceLaw() invoicelaw.Seller {
	return invoicelaw.Seller{
		LegalName: s.LegalName, VATNumber: s.VATNumber, LegalID: s.LegalID, LegalIDScheme: s.LegalIDScheme,
		TaxRegistrationID: s.TaxRegistrationID, Country: s.Country, Address: s.Address,
		OtherEstablishments: s.OtherEstablishments, Registrations: s.Registrations,
		Contact: s.Contact, ElectronicAddress: s.ElectronicAddress, UKRateAgreement: s.UKRateAgreement}
}

var accountIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Normalised checks the account as New does (its id, then its seller) and
// returns it in its stored form: what a tool that writes accounts for an
// engine checks first, so that it never writes one New would refuse.
func (a Account) Normalised() (Account, error) {
	if !accountIDRE.MatchString(a.ID) {
		return a, fmt.Errorf("id %q must be 1-64 of [A-Za-z0-9_.-]", a.ID)
	}
	if err := a.Seller.validate(); err != nil {
		return a, fmt.Errorf("account %q: %w", a.ID, err)
	}
	a.Seller = a.Seller.normalised()
	return a, nil
}

// Normalised checks a seller profile as New does (a seller that cannot be
// invoiced is refused when its account is created, not at its first sale)
// and returns it in its stored form: upper-case countries, the default
// supply kind and item name filled in.
func (s Seller) Normalised() (Seller, error) {
	if err := s.validate(); err != nil {
		return s, err
	}
	return s.normalised(), nil
}

// OpeningTotal is a year's cross-border B2C total made before the seller
// used the engine.
type OpeningTotal struct {
	Year int    `json:"year"`
	EUR  string `json:"eur"` // decimal, exclusive of VAT
}

func (s Seller) validate() error {
	if strings.TrimSpace(s.LegalName) == "" {
		return fmt.Errorf("seller.legalName is required")
	}
	// A field error names its field (wire.FieldError): it is returned as
	// it is, so that the message says the field once.
	if _, err := wire.Text("/seller/legalName", s.LegalName); err != nil {
		return err
	}
	if _, err := wire.Country("/seller/country", s.Country); err != nil {
		return err
	}
	for i, c := range s.OtherEstablishments {
		if _, err := wire.Country(fmt.Sprintf("/seller/otherEstablishments/%d", i), c); err != nil {
			return err
		}
	}
	if s.VATNumber != "" {
		if _, err := vat.ValidateNumber(s.VATNumber); err != nil {
			return fmt.Errorf("seller.vatNumber: %w", err)
		}
	}
	for i, g := range s.Registrations {
		if err := g.Check(); err != nil {
			return fmt.Errorf("seller.registrations[%d].%w", i, err)
		}
		if g.Country != "" {
			if _, err := wire.Country(fmt.Sprintf("/seller/registrations/%d/country", i), g.Country); err != nil {
				return err
			}
		}
	}
	known := map[string]bool{}
	for _, c := range vat.Rates().Conditions() {
		known[c.Code] = true
	}
	for i, c := range s.RateConditions {
		if !known[c] {
			return fmt.Errorf("seller.rateConditions[%d] %q is not a rate condition this ruleset knows", i, c)
		}
	}
	if _, err := fx.RecordPolicy(s.FXPolicy); err != nil {
		return fmt.Errorf("seller.fxPolicy %w", err)
	}
	switch s.Invoicing {
	case "", InvoicingPerPayment, InvoicingSummaryMonthly, InvoicingNoneB2C:
	default:
		return fmt.Errorf("seller.invoicing %q: want %q, %q or %q", s.Invoicing, InvoicingPerPayment, InvoicingSummaryMonthly, InvoicingNoneB2C)
	}
	if err := invoicelaw.CheckInvoicePrefix(s.InvoicePrefix); err != nil {
		return err
	}
	if err := invoicelaw.CheckForm(s.ForInvoiceLaw()); err != nil {
		return err
	}
	years := map[int]bool{}
	for i, o := range s.OpeningTotals {
		d, err := decimal.NewFromString(o.EUR)
		if err != nil || d.IsNegative() || o.Year < 2015 || o.Year > 2100 || years[o.Year] {
			return fmt.Errorf("seller.openingTotals[%d]: want a year from 2015, once, and a non-negative decimal EUR amount", i)
		}
		years[o.Year] = true
	}
	return nil
}

func (s Seller) normalised() Seller {
	s.Country = strings.ToUpper(s.Country)
	if s.Address.Country == "" {
		s.Address.Country = s.Country
	}
	s.Address.Country = strings.ToUpper(s.Address.Country)
	if s.SupplyKind == "" {
		s.SupplyKind = "digital_service"
	}
	if s.ItemName == "" {
		s.ItemName = "Digital service"
	}
	return s
}
