package fiscal

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/shopspring/decimal"
)

// Account is a seller the engine keeps books for: its id and the seller
// facts EU VAT needs (spec §5.3: "the key identifies the merchant account,
// including the seller establishment"). How a caller proves it acts for an
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
	// (F402-2026-000123).
	InvoicePrefix string `json:"invoicePrefix,omitempty"`
	// SupplyKind is the default supply kind of the account's sales; ""
	// means "digital_service".
	SupplyKind string `json:"supplyKind,omitempty"`
	// ItemName is the invoice line's item name when a settlement has no
	// description; "" means "Digital service".
	ItemName string `json:"itemName,omitempty"`
}

// Address is a postal address (BG-5 / BG-8 of EN 16931).
type Address struct {
	Street     string `json:"street,omitempty"`
	City       string `json:"city,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	Country    string `json:"country,omitempty"` // defaults to Seller.Country
}

var accountIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// normalised validates the account and returns it in its stored form.
func (a Account) normalised() (Account, error) {
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
	if _, err := parseText("/seller/legalName", s.LegalName); err != nil {
		return fmt.Errorf("seller.legalName: %w", err)
	}
	if _, err := parseCountry("/seller/country", s.Country); err != nil {
		return fmt.Errorf("seller.country: %w", err)
	}
	for _, c := range s.OtherEstablishments {
		if _, err := parseCountry("/seller/otherEstablishments", c); err != nil {
			return fmt.Errorf("seller.otherEstablishments: %w", err)
		}
	}
	if s.VATNumber != "" {
		if _, err := vat.ValidateNumber(s.VATNumber); err != nil {
			return fmt.Errorf("seller.vatNumber: %w", err)
		}
	}
	for i, g := range s.Registrations {
		switch g.Scheme {
		case vat.RegistrationOSSUnion, vat.RegistrationOSSNonUnion, vat.RegistrationIOSS, vat.RegistrationNational, vat.RegistrationUKVRN:
		default:
			return fmt.Errorf("seller.registrations[%d].scheme %q: want oss_union, oss_non_union, ioss, national or uk_vrn", i, g.Scheme)
		}
		if g.Country != "" {
			if _, err := parseCountry("/seller/registrations", g.Country); err != nil {
				return fmt.Errorf("seller.registrations[%d].country: %w", i, err)
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
	switch s.FXPolicy {
	case "", fx.LatestPublishedAt, fx.ForDayOrPrevious:
	default:
		return fmt.Errorf("seller.fxPolicy %q: want %q or %q", s.FXPolicy, fx.LatestPublishedAt, fx.ForDayOrPrevious)
	}
	if err := validInvoicePrefix(s.InvoicePrefix); err != nil {
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
