package vat

import "strings"

// Electronic interfaces (Art. 9a Implementing Regulation (EU) No 282/2011,
// https://datenbank.nwb.de/Dokument/495230_Article9a).
//
// Where electronically supplied services are supplied through a
// telecommunications network, an interface or a portal such as a
// marketplace for applications, a taxable person taking part in that
// supply is presumed to act in its own name but on behalf of the provider
// (Art. 9a(1) first subparagraph), so that under Art. 28 Directive
// 2006/112/EC it is deemed to have received and supplied the service
// itself: it is the supplier to the customer and its own VAT profile
// decides the treatment. A marketplace of APIs or agent tools is such an
// interface.
//
// The presumption is rebutted only if the provider is explicitly indicated
// as the supplier and the contracts reflect it, and (second subparagraph)
// (a) the invoice issued or made available by each taxable person taking
// part identifies the services and their supplier and (b) the bill or
// receipt issued or made available to the customer does too. Under the
// third subparagraph a taxable person that authorises the charge to the
// customer or the delivery of the services, or sets the general terms and
// conditions of the supply, cannot indicate another person as the supplier.
// Seller.Art9aRebutted is the account's attestation of all of that.
//
// Art. 9a(3): a taxable person that only processes payments and does not
// otherwise take part in the supply is not such an interface; a payment
// processor does not declare Seller.ElectronicInterface.

// Provider identifies the underlying provider of a service sold through an
// electronic interface.
type Provider struct {
	Name      string `json:"name"`
	Country   string `json:"country,omitempty"`   // ISO 3166-1 alpha-2, informational
	VATNumber string `json:"vatNumber,omitempty"` // informational
}

// Supplier roles (SupplierRole.Role).
const (
	// SupplierRoleDeemed: the account is an electronic interface deemed to
	// supply the service in its own name (Art. 28 Directive 2006/112/EC,
	// Art. 9a(1) Implementing Regulation 282/2011).
	SupplierRoleDeemed = "deemed_supplier"
	// SupplierRoleIntermediary: the account is an electronic interface
	// that rebutted the presumption; the underlying provider is the
	// supplier.
	SupplierRoleIntermediary = "intermediary"
)

// SupplierRole is the Art. 9a section of a determination, present for an
// account that declares it is an electronic interface.
type SupplierRole struct {
	Role               string    `json:"role"`
	UnderlyingProvider *Provider `json:"underlyingProvider,omitempty"`
	LegalBasis         string    `json:"legalBasis"`
}

// Reason codes of Art. 9a.
const (
	ReasonUnderlyingProviderMissing    = "underlying_provider_missing"     // review: an interface's record must name the provider
	ReasonUnderlyingProviderIsSupplier = "underlying_provider_is_supplier" // review: presumption rebutted; the provider's VAT is not the interface's to determine
)

// suppliesInOwnName reports whether the account's own profile decides the
// treatment: always, except for an electronic interface that rebutted the
// Art. 9a(1) presumption.
func (r *rules) suppliesInOwnName() bool {
	return !(r.in.Seller.ElectronicInterface && r.in.Seller.Art9aRebutted)
}

// electronicInterface writes the Art. 9a section.
func (r *rules) electronicInterface() {
	s := r.in.Seller
	if !s.ElectronicInterface {
		return
	}
	sr := &SupplierRole{}
	name := "the underlying provider"
	if p := r.in.Supply.Provider; p != nil && strings.TrimSpace(p.Name) != "" {
		cp := *p
		sr.UnderlyingProvider = &cp
		name = strings.TrimSpace(p.Name)
	} else {
		r.b.review(ReasonUnderlyingProviderMissing, "The seller is an electronic interface, so the record must name the underlying provider of the service (Supply.Provider.Name), which is missing.")
	}
	if s.Art9aRebutted {
		sr.Role = SupplierRoleIntermediary
		sr.LegalBasis = "Art. 9a(1) second and third subparagraphs Implementing Regulation (EU) No 282/2011: the provider is explicitly indicated as the supplier, and the interface neither authorises the charge or the delivery nor sets the general terms and conditions"
		r.b.review(ReasonUnderlyingProviderIsSupplier, "The account attests that the Art. 9a(1) presumption is rebutted, so %s is the supplier and accounts for the VAT on this service; it is not determined from the interface's profile and no VAT is charged in the interface's name.", name)
	} else {
		sr.Role = SupplierRoleDeemed
		sr.LegalBasis = "Art. 28 " + directive + " and Art. 9a(1) Implementing Regulation (EU) No 282/2011: the electronic interface taking part in the supply is presumed to act in its own name on behalf of " + name
	}
	r.b.d.Supplier = sr
}
