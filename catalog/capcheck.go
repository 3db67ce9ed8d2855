package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
)

// CapabilityCheckRequest is the body of POST /v1/capabilities/check (README
// "Checking a corridor before ingest"): a corridor (seller and buyer country, supply and buyer type) and a
// payment, checked before ingest. SupplyDate and Payment.Scheme are
// extensions, optional and documented in the OpenAPI document.
type CapabilityCheckRequest struct {
	SellerCountry string       `json:"seller_country"`
	BuyerCountry  string       `json:"buyer_country"`
	SupplyType    string       `json:"supply_type,omitempty"` // default "digital_service"
	BuyerType     string       `json:"buyer_type,omitempty"`  // "B2C" (default) or "B2B"
	Payment       CheckPayment `json:"payment"`
	SupplyDate    string       `json:"supply_date,omitempty"` // extension: YYYY-MM-DD or ISO-8601 UTC; default today
}

// CheckPayment is the payment of a capability check.
type CheckPayment struct {
	Protocol string `json:"protocol"`
	Network  string `json:"network,omitempty"` // CAIP-2
	Asset    string `json:"asset,omitempty"`   // default "USDC"
	Scheme   string `json:"scheme,omitempty"`  // extension: default the protocol's scheme
}

// Statuses of the aspects of a capability check. Each aspect has its own
// status and reasons; there is deliberately no overall "supported" flag
// (README "Checking a corridor before ingest"): a corridor can be ingested and determined while its receipt
// is experimental, or accepted for ingest and still need manual review.
const (
	// event_support, payment_support, jurisdiction_representation
	CheckSupported    = "supported"
	CheckExperimental = "experimental"
	CheckPlanned      = "planned"
	CheckUnsupported  = "unsupported"
	CheckOutsideScope = "outside_scope" // jurisdiction_representation: place of supply outside EU and UK VAT
	// determination_coverage
	CheckDetermined   = "determined"
	CheckManualReview = "manual_review"
	CheckNotEvaluated = "not_evaluated"
	// receipt_eligibility (also CheckExperimental)
	CheckEligible   = "eligible"
	CheckIneligible = "ineligible"
	// ingest route usability
	RouteUsable      = "usable"
	RouteNotUsable   = "not_usable"
	RouteConditional = "conditional"
)

// RouteRecordTransfer is the ingest route of a plain USDC transfer
// (protocol evm-transfer, ingest "library"): the Go call, there being no
// HTTP endpoint for it.
const RouteRecordTransfer = "library: ingest.Service.RecordTransfer"

// Reason codes of a capability check. Payment reasons are the error codes
// the ingest would answer with (UNSUPPORTED_NETWORK, ...); determination
// reasons are those of package vat.
const (
	ReasonBuyerTypeUnknown   = "buyer_type_unknown"
	ReasonSellerNotAccount   = "seller_not_account"
	ReasonNetworkMissing     = "network_missing"
	ReasonNoRecord           = "no_record"
	ReasonCorridorUnresolved = "corridor_unresolved"
	// ReasonInvoicingMode: the account's invoicing mode leaves the
	// supply without an invoice of its own (none required, or a summary
	// invoice covers it).
	ReasonInvoicingMode = "invoicing_mode"
)

// CapabilityCheck is the answer of a capability check: five aspects, each
// with its own status and reasons.
type CapabilityCheck struct {
	Corridor                   Corridor                   `json:"corridor"`
	CheckedAt                  string                     `json:"checked_at"`
	EventSupport               EventSupport               `json:"event_support"`
	PaymentSupport             PaymentSupport             `json:"payment_support"`
	JurisdictionRepresentation JurisdictionRepresentation `json:"jurisdiction_representation"`
	DeterminationCoverage      DeterminationCoverage      `json:"determination_coverage"`
	ReceiptEligibility         ReceiptEligibility         `json:"receipt_eligibility"`
}

// Corridor is the checked request, normalised (upper-case countries,
// defaults filled in).
type Corridor struct {
	SellerCountry string       `json:"seller_country"`
	BuyerCountry  string       `json:"buyer_country"`
	SupplyType    string       `json:"supply_type"`
	BuyerType     string       `json:"buyer_type"`
	Payment       CheckPayment `json:"payment"`
	SupplyDate    string       `json:"supply_date"`
}

// EventSupport: can an event of this shape be ingested, and where.
type EventSupport struct {
	Status  string        `json:"status"` // supported | unsupported
	Reasons []vat.Reason  `json:"reasons,omitempty"`
	Ingest  []IngestRoute `json:"ingest"`
}

// IngestRoute is an endpoint that records such an event.
type IngestRoute struct {
	Endpoint  string `json:"endpoint"`
	Status    string `json:"status"` // usable | not_usable | conditional
	Condition string `json:"condition"`
}

// PaymentSupport: is the payment's protocol, network, asset and scheme one
// the service records.
type PaymentSupport struct {
	Status   string           `json:"status"` // supported | planned | unsupported
	Reasons  []vat.Reason     `json:"reasons,omitempty"`
	Protocol *PaymentProtocol `json:"protocol,omitempty"`
	Chain    *Chain           `json:"chain,omitempty"`
	Asset    *Asset           `json:"asset,omitempty"`
	Scheme   string           `json:"scheme,omitempty"`
}

// JurisdictionRepresentation: which of the service's jurisdictions
// represents the corridor, and how far.
type JurisdictionRepresentation struct {
	Status         string       `json:"status"` // supported | experimental | outside_scope | unsupported
	Reasons        []vat.Reason `json:"reasons,omitempty"`
	Jurisdiction   string       `json:"jurisdiction,omitempty"`
	RulesetVersion string       `json:"ruleset_version,omitempty"`
	PlaceOfSupply  string       `json:"place_of_supply,omitempty"`
	Determination  Support      `json:"determination,omitempty"`
	Artifacts      Support      `json:"artifacts,omitempty"`
}

// DeterminationCoverage: what vat.Determine, the function the engine runs
// on ingest, answers for the corridor.
type DeterminationCoverage struct {
	Status         string             `json:"status"` // determined | manual_review | not_evaluated
	Reasons        []vat.Reason       `json:"reasons,omitempty"`
	Classification *vat.Determination `json:"classification,omitempty"` // as on a record, reasons moved up
	Assumptions    []vat.Reason       `json:"assumptions"`
	Alternatives   []Alternative      `json:"alternatives,omitempty"`
}

// Alternative is the determination under another assumption about facts the
// check cannot know (e.g. the seller's Art. 59c threshold).
type Alternative struct {
	Assumption     vat.Reason        `json:"assumption"`
	Classification vat.Determination `json:"classification"`
}

// ReceiptEligibility: would the record carry a production receipt, of which
// version, and in which review state.
type ReceiptEligibility struct {
	Status       string       `json:"status"` // eligible | experimental | ineligible
	Reasons      []vat.Reason `json:"reasons,omitempty"`
	Spec         string       `json:"spec,omitempty"`
	Version      string       `json:"version,omitempty"`
	Environment  string       `json:"environment,omitempty"`
	ReviewStatus string       `json:"review_status,omitempty"` // the record's expected reviewStatus
	Invoice      bool         `json:"invoice"`                 // a UBL invoice is bound to the record (PROCESSED only)
}

// checkInput is a validated capability check.
type checkInput struct {
	corridor Corridor
	date     time.Time
}

// validate normalises the request; only malformed input is an error (400).
// Unknown protocols, networks, assets, buyer types and supply types are
// answers of the check, not errors.
func (req CapabilityCheckRequest) validate(now time.Time) (checkInput, error) {
	var in checkInput
	var err error
	if req.SellerCountry == "" {
		return in, badRequest("/seller_country", "is required (ISO 3166-1 alpha-2)")
	}
	// The codes a fiscal event's seller.country takes (IC, EA beyond ISO
	// 3166-1), so that the check answers what recording does.
	if in.corridor.SellerCountry, err = parties.ParseSellerCountry("/seller_country", req.SellerCountry); err != nil {
		return in, err
	}
	if req.BuyerCountry == "" {
		return in, badRequest("/buyer_country", "is required (ISO 3166-1 alpha-2)")
	}
	if in.corridor.BuyerCountry, err = wire.Country("/buyer_country", req.BuyerCountry); err != nil {
		// The codes vat.Buyer documents beyond ISO 3166-1 (IC, EA, UK), as
		// POST /settlements accepts them for consumerCountry.
		u := strings.ToUpper(strings.TrimSpace(req.BuyerCountry))
		if _, ok := vat.BuyerCountry(u); !ok || len(u) != 2 {
			return in, fiscal.InputError(err)
		}
		in.corridor.BuyerCountry = u
	}
	in.corridor.SupplyType = vat.KindDigitalService
	if req.SupplyType != "" {
		if in.corridor.SupplyType, err = parseToken("/supply_type", req.SupplyType); err != nil {
			return in, err
		}
	}
	in.corridor.BuyerType = vat.TreatmentB2C
	if req.BuyerType != "" {
		if in.corridor.BuyerType, err = parseLabel("/buyer_type", req.BuyerType); err != nil {
			return in, err
		}
		in.corridor.BuyerType = strings.ToUpper(in.corridor.BuyerType)
	}
	p := req.Payment
	if p.Protocol == "" {
		return in, badRequest("/payment/protocol", "is required (e.g. %q)", ProtocolX402)
	}
	for _, f := range []struct{ field, v string }{{"/payment/protocol", p.Protocol}, {"/payment/network", p.Network}, {"/payment/asset", p.Asset}, {"/payment/scheme", p.Scheme}} {
		if _, err := parseLabel(f.field, f.v); err != nil {
			return in, err
		}
	}
	in.corridor.Payment = CheckPayment{Protocol: strings.ToLower(p.Protocol), Network: p.Network, Asset: p.Asset, Scheme: p.Scheme}
	if in.corridor.Payment.Asset == "" {
		in.corridor.Payment.Asset = AssetUSDC
	}
	in.date = now
	if req.SupplyDate != "" {
		if in.date, err = parseSupplyDate(req.SupplyDate, now); err != nil {
			return in, err
		}
	}
	in.corridor.SupplyDate = in.date.Format(time.DateOnly)
	return in, nil
}

// parseLabel accepts a short printable identifier (a protocol, a CAIP-2 id,
// a contract address, a buyer type): at most 100 visible ASCII characters.
func parseLabel(field, v string) (string, error) {
	if len(v) > 100 || strings.IndexFunc(v, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) >= 0 {
		return "", badRequest(field, "must be at most 100 visible ASCII characters")
	}
	return v, nil
}

// parseSupplyDate accepts a calendar date (YYYY-MM-DD, meaning that UTC day)
// or an ISO-8601 UTC instant, no later than now plus MaxClockSkew.
func parseSupplyDate(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if t.After(now) {
			return time.Time{}, badRequest("/supply_date", "is in the future (the service date is %s)", now.Format(time.DateOnly))
		}
		if t.Year() < wire.MinYear {
			return time.Time{}, badRequest("/supply_date", "is before %d; no USDC settlement can be that old", wire.MinYear)
		}
		return t.Add(12 * time.Hour), nil // midday: the UTC day is what selects rates
	}
	if strings.Contains(v, "T") {
		// An instant: refused for its own reason (before 2015, a
		// fraction RFC 3339 does not allow, another zone, the future),
		// as settlements and the sandbox refuse it.
		t, err := wire.Timestamp("/supply_date", v, now)
		return t, fiscal.InputError(err)
	}
	return time.Time{}, badRequest("/supply_date", "must be a date (YYYY-MM-DD) or an ISO-8601 UTC timestamp, not in the future")
}

// CheckCapabilities answers a capability check for a corridor before
// ingest. accountID is the authenticated account, or "" for an anonymous
// check; with an account whose seller is established in seller_country,
// that seller's profile (threshold, establishments) is used, exactly as
// POST /settlements would. It writes nothing.
//
// The determination is the engine's rate table's Determine on the same inputs the engine builds
// on ingest, on the supply date (default: today by the engine clock), so
// the answer matches what the engine would do; facts a corridor cannot
// carry are stated as assumptions.
func (s *Service) CheckCapabilities(ctx context.Context, accountID string, req CapabilityCheckRequest) (*CapabilityCheck, error) {
	var acc *fiscal.Account
	var books *fiscal.Books
	if accountID != "" {
		b, err := s.e.Books(accountID)
		if err != nil {
			return nil, err
		}
		a := b.Account()
		acc, books = &a, b
	}
	now := s.e.Now().UTC()
	in, err := req.validate(now)
	if err != nil {
		return nil, err
	}
	c := &CapabilityCheck{Corridor: in.corridor, CheckedAt: now.Format(time.RFC3339)}
	sellerFromAccount := acc != nil && sameCountry(acc.Seller.Country, in.corridor.SellerCountry)
	c.EventSupport = s.eventSupport(in.corridor, acc, sellerFromAccount)
	c.PaymentSupport = s.paymentSupport(in.corridor.Payment)

	var det vat.Determination
	var dayDoubt *vat.Reason
	if c.EventSupport.Status == CheckSupported {
		// The account's own sale is decided on its Art. 59c running
		// totals, as recording decides it (read, never counted).
		var totals *vat.CrossBorderTotals
		if sellerFromAccount {
			if totals, err = parties.AccountTotals(ctx, books, parties.AccountSeller(*acc), in.date); err != nil {
				return nil, err
			}
		}
		det, c.DeterminationCoverage, dayDoubt = s.determinationCoverage(in, acc, sellerFromAccount, totals)
		c.JurisdictionRepresentation = representation(det)
	} else {
		c.DeterminationCoverage = DeterminationCoverage{Status: CheckNotEvaluated, Assumptions: []vat.Reason{},
			Reasons: []vat.Reason{{Code: ReasonBuyerTypeUnknown, Detail: "The corridor was not determined: the buyer type is not one the service records."}}}
		c.JurisdictionRepresentation = JurisdictionRepresentation{Status: CheckUnsupported,
			Reasons: []vat.Reason{{Code: ReasonCorridorUnresolved, Detail: "The jurisdiction cannot be resolved for a buyer type the service does not record."}}}
	}
	seller := fiscal.Seller{Country: in.corridor.SellerCountry}
	if sellerFromAccount {
		seller = acc.Seller
	}
	c.ReceiptEligibility, err = s.receiptEligibility(ctx, c, det, seller, in.date)
	if err != nil {
		return nil, err
	}
	if dayDoubt != nil && c.ReceiptEligibility.Status != CheckIneligible {
		c.ReceiptEligibility.Reasons = append(c.ReceiptEligibility.Reasons, *dayDoubt)
	}
	return c, nil
}

func sameCountry(a, b string) bool {
	norm := func(s string) string {
		switch s = strings.ToUpper(s); s {
		case "EL":
			return "GR"
		case "UK":
			return "GB"
		}
		return s
	}
	return norm(a) == norm(b)
}

func (s *Service) eventSupport(cor Corridor, acc *fiscal.Account, sellerFromAccount bool) EventSupport {
	es := EventSupport{Status: CheckSupported}
	if !slices.Contains(BuyerTypes(), cor.BuyerType) {
		es.Status = CheckUnsupported
		es.Reasons = append(es.Reasons, vat.Reason{Code: ReasonBuyerTypeUnknown, Detail: fmt.Sprintf("Buyer type %s is not recorded; the service records %s.", shown.Quote(cor.BuyerType), strings.Join(BuyerTypes(), " and "))})
	}
	settlements := IngestRoute{Endpoint: "POST /settlements", Status: RouteConditional,
		Condition: "The seller is the authenticated account's seller (its establishment decides the VAT treatment); send X-Service-Key with this check to know."}
	switch {
	case acc != nil && sellerFromAccount:
		settlements.Status = RouteUsable
		settlements.Condition = fmt.Sprintf("The seller is account %s, established in %s.", acc.ID, acc.Seller.Country)
	case acc != nil:
		settlements.Status = RouteNotUsable
		settlements.Condition = fmt.Sprintf("Account %s's seller is established in %s, not in %s; record this corridor with POST /v1/fiscal-events, seller in the body.", acc.ID, acc.Seller.Country, cor.SellerCountry)
		es.Reasons = append(es.Reasons, vat.Reason{Code: ReasonSellerNotAccount, Detail: settlements.Condition})
	}
	fiscalEvents := IngestRoute{Endpoint: "POST /v1/fiscal-events", Status: RouteUsable,
		Condition: "Seller and buyer in the body, from any ISO 3166-1 country; a production receipt only where the EU VAT production invariants hold."}
	if es.Status != CheckSupported {
		settlements.Status, fiscalEvents.Status = RouteNotUsable, RouteNotUsable
	}
	es.Ingest = []IngestRoute{settlements, fiscalEvents}
	if cor.Payment.Protocol == ProtocolX402 {
		// The SDK's documents, for the key's account as POST
		// /settlements; x402 carries no settlement time, so the payment
		// is read and dated from the chain, which needs the network's
		// verification.
		x := IngestRoute{Endpoint: "POST /v1/x402/settlements", Status: settlements.Status,
			Condition: "The x402 settle response, requirements and payload as the SDK has them, verified and dated on chain. " + settlements.Condition}
		if s.set.Chain == nil || s.set.Chain.Mode(cor.Payment.Network) != evmverify.ModeRequired {
			x.Status = RouteNotUsable
			x.Condition = fmt.Sprintf("Chain verification is off for %s on this service: the x402 documents carry no settlement time, so this endpoint answers 422 CHAIN_VERIFICATION_REQUIRED; record the payment with POST /settlements.", shown.Quote(cor.Payment.Network))
		}
		es.Ingest = append(es.Ingest, x)
	}
	if cor.Payment.Protocol == ProtocolEVMTransfer {
		// POST /settlements and POST /v1/fiscal-events record every
		// payment as x402 "exact" (settlement.Request.Payment): a plain
		// transfer is recorded by the library's RecordTransfer alone,
		// for the account's seller as POST /settlements records.
		transfer := IngestRoute{Endpoint: RouteRecordTransfer, Status: settlements.Status,
			Condition: "Go library only (payment protocols: ingest \"library\"): the transfer is read from the chain and recorded for the seller of Transfer.Account."}
		switch {
		case acc != nil && sellerFromAccount:
			transfer.Condition += fmt.Sprintf(" The seller is account %s, established in %s.", acc.ID, acc.Seller.Country)
		case acc != nil:
			transfer.Condition += fmt.Sprintf(" Account %s's seller is established in %s, not in %s.", acc.ID, acc.Seller.Country, cor.SellerCountry)
			for i, r := range es.Reasons {
				if r.Code == ReasonSellerNotAccount {
					es.Reasons[i].Detail = transfer.Condition // not POST /v1/fiscal-events: it records x402
				}
			}
		default:
			transfer.Condition += " Send X-Service-Key with this check to know whether that seller is established in the corridor's seller country."
		}
		es.Ingest = []IngestRoute{transfer}
	}
	return es
}

func (s *Service) paymentSupport(p CheckPayment) PaymentSupport {
	ps := PaymentSupport{Status: CheckUnsupported}
	unsupported := func(code fiscal.Code, format string, args ...any) PaymentSupport {
		ps.Reasons = append(ps.Reasons, vat.Reason{Code: string(code), Detail: fmt.Sprintf(format, args...)})
		return ps
	}
	proto, ok := paymentProtocol(p.Protocol)
	if !ok {
		var known []string
		for _, pp := range PaymentProtocols() {
			known = append(known, pp.Protocol)
		}
		return unsupported(codeUnsupportedProtocol, "Payment protocol %s is not known; the table lists %s.", shown.Quote(p.Protocol), strings.Join(known, ", "))
	}
	ps.Protocol = &proto
	if proto.Status == Planned {
		ps.Status = CheckPlanned
		return unsupported(codeUnsupportedProtocol, "Payment protocol %q is planned, not yet recorded.", p.Protocol)
	}
	if p.Network == "" {
		ps.Reasons = append(ps.Reasons, vat.Reason{Code: ReasonNetworkMissing, Detail: "No payment.network was given; supported: " + describeNetworks() + "."})
		return ps
	}
	if settlement.USDCContract(p.Network) == "" {
		return unsupported(fiscal.CodeUnsupportedNetwork, "Network %s is not supported; supported: %s.", shown.Quote(p.Network), describeNetworks())
	}
	for _, ch := range s.Chains() {
		if ch.Network == p.Network {
			ps.Chain = &ch
		}
	}
	if p.Asset != "" && p.Asset != AssetUSDC && !strings.EqualFold(p.Asset, settlement.USDCContract(p.Network)) {
		return unsupported(fiscal.CodeUnsupportedAsset, "Asset %s is not supported on %s; supported: %s (contract %s).", shown.Quote(p.Asset), p.Network, AssetUSDC, settlement.USDCContract(p.Network))
	}
	for _, a := range SupportedAssets() {
		if a.Network == p.Network {
			ps.Asset = &a
		}
	}
	ps.Scheme = proto.Schemes[0]
	if p.Scheme != "" {
		if !slices.Contains(proto.Schemes, p.Scheme) {
			return unsupported(fiscal.CodeUnsupportedScheme, "Scheme %s is not supported for %s; supported: %s.", shown.Quote(p.Scheme), proto.Protocol, strings.Join(proto.Schemes, ", "))
		}
		ps.Scheme = p.Scheme
	}
	if proto.Protocol == ProtocolEVMTransfer && (ps.Chain == nil || ps.Chain.Verification != string(evmverify.ModeRequired)) {
		// A plain transfer is recorded from the chain alone (package
		// ingest, RecordTransfer), which needs the network's verification.
		return unsupported(fiscal.CodeChainVerifyRequired, "Protocol %q is recorded from the chain, but chain verification is off for %s on this service; only merchant-attested facts (POST /settlements) can be recorded there.", proto.Protocol, p.Network)
	}
	ps.Status = string(proto.Status)
	return ps
}

// Assumption codes of a determination coverage.
const (
	AssumeSupplyDate          = "supply_date"
	AssumeBuyerLocation       = "buyer_location_attested"
	AssumeNoPostalCode        = "buyer_postal_code_not_considered"
	AssumeSellerProfile       = "seller_profile_from_account"
	AssumeSellerOverThreshold = "seller_over_threshold"
	AssumeSellerBelow         = "seller_below_threshold"
	AssumeVATNumberConfirmed  = "buyer_vat_number_confirmed"
	AssumeBuyerNameAddress    = "buyer_name_address_given"
	AssumeNoRegistry          = "no_vat_number_registry"
)

func (s *Service) determinationCoverage(in checkInput, acc *fiscal.Account, sellerFromAccount bool, totals *vat.CrossBorderTotals) (vat.Determination, DeterminationCoverage, *vat.Reason) {
	rates := s.set.Rates // the engine's table, as Settle decides on it
	cor := in.corridor
	dc := DeterminationCoverage{Assumptions: []vat.Reason{
		{Code: AssumeSupplyDate, Detail: fmt.Sprintf("The supply date is %s (the rate in force that day; send supply_date to check another day).", cor.SupplyDate)},
		{Code: AssumeBuyerLocation, Detail: "The buyer's country is as the merchant attests it, from two non-contradictory items of location evidence (Art. 24b(d) and 24f Implementing Regulation 282/2011)."},
		{Code: AssumeNoPostalCode, Detail: "No postal code is considered; on ingest, consumerPostalCode reveals special territories outside EU VAT (Canary Islands, Åland, ...) or with own rates (Azores, Madeira)."},
	}}
	seller := vat.Seller{Country: cor.SellerCountry, OverThreshold: true}
	supply := vat.Supply{Kind: cor.SupplyType, Date: in.date}
	if sellerFromAccount {
		// The whole profile recording uses: registrations, the account's
		// choices for territories and Art. 9a, its attested rate conditions.
		s := acc.Seller
		seller = vat.Seller{Country: s.Country, OtherEstablishments: s.OtherEstablishments, VATNumber: s.VATNumber, OverThreshold: s.OverThreshold, OptedForDestination: s.OptedForDestination,
			Registrations: s.Registrations, ElectronicInterface: s.ElectronicInterface, Art9aRebutted: s.Art9aRebutted, ReviewSpecialTerritories: s.ReviewSpecialTerritories,
			CrossBorder: totals}
		supply.Conditions = s.RateConditions
		dc.Assumptions = append(dc.Assumptions, vat.Reason{Code: AssumeSellerProfile, Detail: fmt.Sprintf("The seller profile (Art. 59c threshold and running totals, establishments, registrations, territory and electronic-interface choices, attested rate conditions) is account %s's.", acc.ID)})
		if totals != nil {
			// Counting a supply needs its value; the check has none and
			// counts the smallest sale, one cent.
			supply.GrossEUR = decimal.New(1, -2)
			dc.Assumptions = append(dc.Assumptions, vat.Reason{Code: AssumeSellerProfile, Detail: "The Art. 59c position is the account's running totals as they stand now, with a sale of EUR 0.01; a sale that takes the year's total over EUR 10,000 is taxed where the consumer is (Art. 59c(2) Directive 2006/112/EC)."})
		}
		if s.ElectronicInterface {
			supply.Provider = &vat.Provider{Name: "the underlying provider named on ingest"}
			dc.Assumptions = append(dc.Assumptions, vat.Reason{Code: AssumeSellerProfile, Detail: "The account is an electronic interface: the request names the underlying provider (underlyingProvider); without it the record waits for review (underlying_provider_missing)."})
		}
	}
	buyer, buyerAssumption := s.checkBuyer(cor)
	confirmable := buyer.Registry == nil || buyer.Registry.Status == vat.RegistryValid
	if buyerAssumption != nil {
		dc.Assumptions = append(dc.Assumptions, *buyerAssumption)
	}
	if buyer.Business {
		dc.Assumptions = append(dc.Assumptions, vat.Reason{Code: AssumeBuyerNameAddress, Detail: "The request gives the customer's full name and address (consumerName, consumerAddress), or the registry discloses them: a business sale's invoice must state them (Art. 226(5) Directive 2006/112/EC; Art. 220a(2) rules out a simplified invoice for a reverse charge). VIES does not disclose them for some member states (Germany, Spain, ...); without them the record is PENDING_MANUAL_REVIEW (buyer_address_missing)."})
	}
	determine := func(s vat.Seller) vat.Determination {
		d := rates.Determine(vat.Input{Seller: s, Buyer: buyer, Supply: supply})
		return cleanCheckReasons(d, confirmable)
	}
	det := determine(seller)
	if !sellerFromAccount {
		below := seller
		below.OverThreshold = false
		alt := determine(below)
		if alt.Regime != det.Regime || alt.TaxingCountry != det.TaxingCountry || alt.Status != det.Status {
			dc.Assumptions = append(dc.Assumptions, vat.Reason{Code: AssumeSellerOverThreshold, Detail: "The seller's cross-border B2C supplies exceed EUR 10,000 this or last year, or it opted for destination taxation (Art. 59c(1) and (3) Directive 2006/112/EC)."})
			dc.Alternatives = append(dc.Alternatives, Alternative{
				Assumption:     vat.Reason{Code: AssumeSellerBelow, Detail: "The seller is established in one member state only, below the EUR 10,000 threshold and not opted: the place of supply stays in its member state (Art. 59c(1))."},
				Classification: alt,
			})
		}
	}
	dc.Reasons = det.Reasons
	classification := det
	classification.Reasons = nil
	dc.Classification = &classification
	dc.Status = CheckManualReview
	if det.Determined() {
		dc.Status = CheckDetermined
	}
	var dayDoubt *vat.Reason
	if sellerFromAccount && totals != nil {
		dayDoubt = rateDayInDoubt(cmp.Or(acc.Seller.FXPolicy, s.set.FXPolicy), det, supply, func(sp vat.Supply) vat.Determination {
			return rates.Determine(vat.Input{Seller: seller, Buyer: buyer, Supply: sp})
		})
	}
	return det, dc, dayDoubt
}

// rateDayInDoubt predicts Settle's fx_rate_day_in_doubt (fiscal
// ReasonFXRateDayInDoubt) for the account's sale the check stands for.
// Under the "rate of the day" (fx.ForDayOrPrevious; Art. 91(2) third
// subparagraph Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// the rate is the one of the supply's calendar day in the taxing state;
// while the account is within the Art. 59c(1)(c) threshold, a sale whose
// value takes the total over is taxed where the consumer is, and when that
// state's day at the instant is not the seller's, the day's rate decides
// the place and the place the day: Settle sends such a sale, one whose
// value crosses on one day's rate and not on the other's, to review. The
// check has no amount (it counts a sale of EUR 0.01), so it names the
// case: nil unless the policy is the rate of the day, the cent's
// determination is within the threshold, and a crossing sale (decided on
// det's own inputs with the value of the threshold itself) is taxed in
// another state on another day.
func rateDayInDoubt(policy fx.Policy, det vat.Determination, supply vat.Supply, determine func(vat.Supply) vat.Determination) *vat.Reason {
	if policy != fx.ForDayOrPrevious || !det.Determined() || det.Threshold == nil || det.Threshold.Rule != vat.ThresholdWithin {
		return nil
	}
	supply.GrossEUR = det.Threshold.Limit.Add(decimal.New(1, -2)) // over the limit whatever the total before
	cross := determine(supply)
	if !cross.Determined() || cross.TaxingCountry == det.TaxingCountry || cross.SupplyDate == det.SupplyDate {
		return nil
	}
	return &vat.Reason{Code: fiscal.ReasonFXRateDayInDoubt, Detail: fmt.Sprintf(
		"Under the rate of the day (policy %s, Art. 91(2) Directive 2006/112/EC) a sale whose value takes the account's Art. 59c total over EUR %s (Art. 59c(1)(c)) on the ECB rate of one of the days %s (%s, %s) and %s (%s, %s) but not on the other's would be PENDING_MANUAL_REVIEW: the threshold places it where the day is the other one, and a person decides the place, the day and its rate.",
		policy, det.Threshold.Limit, det.SupplyDate, det.TaxingCountry, det.TimeZone, cross.SupplyDate, cross.TaxingCountry, cross.TimeZone)}
}

// checkBuyer builds the buyer the engine would see. A B2B corridor stands
// for a buyer who gives a VAT number of their country: with a registry
// configured, one the registry confirms (the only way to reverse charge);
// without one, a number that cannot be confirmed, exactly as on ingest.
func (s *Service) checkBuyer(cor Corridor) (vat.Buyer, *vat.Reason) {
	b := vat.Buyer{Country: cor.BuyerCountry}
	if cor.BuyerType != vat.TreatmentB2B {
		return b, nil
	}
	prefix := vatPrefix(cor.BuyerCountry)
	registry := vat.RegistryVIES
	if prefix == "GB" {
		registry = vat.RegistryHMRC
	}
	b.Business = true
	b.VATNumber = prefix + "000000000"
	if !s.canConfirm(registry) {
		b.Registry = &vat.RegistryCheck{Status: vat.RegistryUnavailable, Registry: registry, Number: b.VATNumber}
		return b, &vat.Reason{Code: AssumeNoRegistry, Detail: fmt.Sprintf("%s lookups are off on this service, so a business buyer's %s VAT number cannot be confirmed; on ingest such a record is PENDING_MANUAL_REVIEW (vat_number_unverified).", registry, prefix)}
	}
	b.Registry = &vat.RegistryCheck{Status: vat.RegistryValid, Registry: registry, Number: b.VATNumber,
		CheckedAt: s.e.Now().UTC(), RequestIdentifier: "capability-check"}
	return b, &vat.Reason{Code: AssumeVATNumberConfirmed, Detail: fmt.Sprintf("The buyer gives a %s VAT number that %s confirms valid when the payment is recorded (Art. 18(1) Implementing Regulation 282/2011); otherwise the sale is B2C or pending review.", prefix, registry)}
}

// vatPrefix is the VAT-number prefix a business established in country
// would give: EL for Greece (Art. 215 Directive 2006/112/EC), GB for the UK
// and the Isle of Man, FR for Monaco (treated as France).
func vatPrefix(country string) string {
	switch country {
	case "GR", "EL":
		return "EL"
	case "GB", "UK", "IM":
		return "GB"
	case "MC":
		return "FR"
	}
	return country
}

// cleanCheckReasons removes what only the check's stand-in VAT number
// causes (its check digits) and words a registry that is off as such.
func cleanCheckReasons(d vat.Determination, confirmable bool) vat.Determination {
	var out []vat.Reason
	for _, r := range d.Reasons {
		switch r.Code {
		case vat.ReasonCheckDigitsDisagree, vat.ReasonRegistryProofIncomplete:
			continue
		case vat.ReasonVATNumberUnverified:
			if !confirmable {
				r.Detail = "No registry that could confirm the buyer's VAT number answers on this service; reverse charge needs a confirmed number (Art. 18(1) Implementing Regulation 282/2011)."
			}
		}
		out = append(out, r)
	}
	d.Reasons = out
	return d
}

func representation(det vat.Determination) JurisdictionRepresentation {
	jr := JurisdictionRepresentation{Jurisdiction: det.Jurisdiction, RulesetVersion: det.Ruleset, PlaceOfSupply: det.PlaceOfSupply}
	j, ok := jurisdiction(det.Jurisdiction)
	if !ok {
		jr.Status = CheckUnsupported
		jr.RulesetVersion = ""
		if slices.ContainsFunc(det.Reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonCorridorNotCovered }) {
			// Placed, but outside both rulesets (vat.Coverage): the reason
			// names the law that governs the corridor.
			jr.Reasons = reviewReasonsOf(det)
			return jr
		}
		jr.Reasons = append([]vat.Reason{{Code: ReasonCorridorUnresolved, Detail: "Neither ruleset could place this supply."}}, reviewReasonsOf(det)...)
		return jr
	}
	jr.Determination, jr.Artifacts = j.Determination, j.Artifacts
	if det.Regime == vat.RegimeOutsideScope {
		jr.Status = CheckOutsideScope
		jr.Reasons = []vat.Reason{{Code: vat.ReasonLocalTaxNotAssessed, Detail: fmt.Sprintf("The place of supply %s is outside the VAT territory of %s: the record says the supply is not subject to that VAT; any local tax there is not assessed.", det.PlaceOfSupply, j.ID)}}
		return jr
	}
	jr.Status = string(j.Status)
	if j.Status == Experimental {
		jr.Reasons = []vat.Reason{{Code: vat.ReasonRulesetExperimental, Detail: fmt.Sprintf("Jurisdiction %s (ruleset %s) is experimental.", j.ID, j.RulesetVersion)}}
	}
	return jr
}

// reviewReasonsOf returns the reasons of a manual-review determination.
func reviewReasonsOf(det vat.Determination) []vat.Reason {
	if det.Determined() {
		return nil
	}
	return det.Reasons
}

func (s *Service) receiptEligibility(ctx context.Context, c *CapabilityCheck, det vat.Determination, seller fiscal.Seller, date time.Time) (ReceiptEligibility, error) {
	re := ReceiptEligibility{Status: CheckIneligible}
	if c.EventSupport.Status != CheckSupported || c.PaymentSupport.Status != CheckSupported {
		re.Reasons = []vat.Reason{{Code: ReasonNoRecord, Detail: "No record, and so no receipt, is made: the event or the payment is not one the service records."}}
		return re, nil
	}
	jID, spec := receiptFormat(det.Jurisdiction)
	j, _ := jurisdiction(jID)
	re.Spec, re.Version, re.Environment = spec, receiptVersionOf(spec), "production"
	switch j.receiptSupport(re.Version) {
	case Supported:
		re.Status = CheckEligible
	case Experimental:
		re.Status = CheckExperimental
		re.Reasons = append(re.Reasons, vat.Reason{Code: vat.ReasonRulesetExperimental, Detail: fmt.Sprintf("Receipts of %s use the experimental format %s.", j.ID, spec)})
	default:
		re.Reasons = append(re.Reasons, vat.Reason{Code: ReasonNoRecord, Detail: fmt.Sprintf("Jurisdiction %s has no receipt version.", j.ID)})
		return re, nil
	}
	re.ReviewStatus = fiscal.StatusProcessed
	if !det.Determined() {
		re.ReviewStatus = fiscal.StatusPendingReview
		re.Reasons = append(re.Reasons, reviewReasonsOf(det)...)
	}
	// The account's Art. 91(2) reading, as recording converts (fiscal
	// Prepare: the seller's fxPolicy, else the engine's), on the day
	// recording takes: under the "rate of the day" the supply's calendar
	// day in the taxing state, not the UTC date of the instant
	// (fx.RateOfTheDay; Art. 91(2) third subparagraph Directive
	// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
	policy := cmp.Or(seller.FXPolicy, s.set.FXPolicy)
	rateAt, _ := fx.RateOfTheDay(policy, date, det.SupplyDate)
	if _, err := s.set.FX.Rate(ctx, "USD", rateAt, policy); err != nil {
		if !errors.Is(err, fx.ErrNotYetPublished) && !errors.Is(err, fx.ErrNoRate) {
			return re, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "fx rate lookup failed", Err: err}
		}
		re.ReviewStatus = fiscal.StatusPendingReview
		re.Reasons = append(re.Reasons, vat.Reason{Code: fiscal.ReasonFXRateUnavailable, Detail: fmt.Sprintf("No ECB USD reference rate is known for %s under policy %s; the record would wait for it.", rateAt.Format(time.DateOnly), policy)})
	}
	if re.ReviewStatus == fiscal.StatusProcessed {
		// The VAT in the invoicing state's currency (Art. 230), at a rate
		// the state accepts, as recording would state it.
		reason, err := invoicelaw.NationalCurrencyReason(ctx, s.set.FX, policy, det, seller.ForInvoiceLaw(), date)
		if err != nil {
			return re, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "national-currency rate lookup failed", Err: err}
		}
		if reason != nil {
			re.ReviewStatus = fiscal.StatusPendingReview
			re.Reasons = append(re.Reasons, *reason)
		}
	}
	re.Invoice = re.ReviewStatus == fiscal.StatusProcessed
	if re.Invoice {
		if basis := notInvoicedPerPayment(det, seller, c.Corridor.BuyerType == vat.TreatmentB2B); basis != "" {
			re.Invoice = false
			re.Reasons = append(re.Reasons, vat.Reason{Code: ReasonInvoicingMode, Detail: basis})
		}
	}
	return re, nil
}

// notInvoicedPerPayment says why a processed supply of seller gets no
// invoice of its own under the account's invoicing mode, decided as
// recording decides it (invoicelaw.InvoicedBy; a business customer of the
// check is taken to have its VAT number); "" when it is invoiced per
// payment. A summary already issued for the month is not known here.
func notInvoicedPerPayment(det vat.Determination, seller fiscal.Seller, b2b bool) string {
	if seller.Invoicing != fiscal.InvoicingNoneB2C && seller.Invoicing != fiscal.InvoicingSummaryMonthly {
		return ""
	}
	by, basis := invoicelaw.InvoicedBy(seller.Invoicing, det, invoicelaw.For(det, seller.ForInvoiceLaw()), b2b)
	switch by {
	case invoicelaw.ByNone:
		return "The account invoices none_b2c: the record has no invoice (" + basis + ")."
	case invoicelaw.BySummary:
		return "The account invoices summary_monthly: the supply is invoiced by the summary invoice of its month and buyer (" + basis + "), not by one of its own, unless that summary was already issued."
	}
	return ""
}

// codeUnsupportedProtocol is package ingest's UNSUPPORTED_PROTOCOL, the
// code a check names for a protocol the engine does not read.
const codeUnsupportedProtocol fiscal.Code = "UNSUPPORTED_PROTOCOL"

// parseToken accepts a supply type as the engine accepts a supply kind: a
// lower-case token.
func parseToken(field, v string) (string, error) {
	if len(v) > 64 || strings.IndexFunc(v, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
		return "", badRequest(field, "must be a lower-case token such as \"digital_service\"")
	}
	return v, nil
}
