package fiscal

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// EvaluateRequest is the body of POST /v1/compliance/evaluate (spec §4: a
// classification preview; the spec leaves its shape open). The seller may be
// established anywhere; the buyer must be an attested EU-27 customer; the
// amount is in USDC, converted at the ECB rate of Date.
//
//	{"seller": {"country": "US", "overThreshold": false},
//	 "buyer": {"country": "DE", "businessStatus": "B2C"},
//	 "supply": {"kind": "digital_service"},
//	 "amountUsdc": "11.90", "date": "2026-04-10"}
//
// seller may be left out when a key is sent: it is then the account's
// seller. currency may be left out and is otherwise "USDC" (spec §1: the
// currency of the preview is USDC). date is a YYYY-MM-DD UTC day or an
// RFC 3339 UTC instant, not in the future; it defaults to today (UTC).
type EvaluateRequest struct {
	Seller     *EventSeller `json:"seller,omitempty"`
	Buyer      EventBuyer   `json:"buyer"`
	Supply     EventSupply  `json:"supply"`
	AmountUSDC string       `json:"amountUsdc"`
	Currency   string       `json:"currency,omitempty"`
	Date       string       `json:"date,omitempty"`
}

// DecodeEvaluateRequest reads an EvaluateRequest as strictly as
// DecodeSettlementRequest.
func DecodeEvaluateRequest(r io.Reader) (EvaluateRequest, error) {
	var req EvaluateRequest
	err := decodeStrict(r, &req)
	return req, err
}

// Evaluation is the answer of Evaluate and the 200 body of POST
// /v1/compliance/evaluate. Nothing of it is recorded (recorded is always
// false): it is a sandbox preview, watermarked, and not a fiscal record.
type Evaluation struct {
	Object        string            `json:"object"`      // "compliance_evaluation"
	Environment   string            `json:"environment"` // "sandbox"
	Recorded      bool              `json:"recorded"`    // always false
	Watermark     string            `json:"watermark"`   // receipt.SandboxWatermark
	EvaluatedAt   string            `json:"evaluatedAt"`
	Date          string            `json:"date"` // the supply date the rates were taken for, YYYY-MM-DD
	Seller        FiscalEventSeller `json:"seller"`
	Buyer         FiscalEventBuyer  `json:"buyer"`
	Supply        EventSupply       `json:"supply"`
	Determination vat.Determination `json:"determination"`
	FX            RecordFX          `json:"fx"` // netEur and vatEur only when the determination is DETERMINED
	Quota         *Quota            `json:"-"`  // the agent's quota after this call; nil when not metered
}

// Evaluate previews the EU VAT classification of a supply, without writing
// any record: the determination of package vat (with the registry lookup of
// a buyer's VAT number when a registry is configured), the conversion of the
// USDC amount to EUR at the ECB rate of the date, and the VAT split. A buyer
// that is not an attested EU-27 customer is UNSUPPORTED_JURISDICTION (422).
//
// accountID is the authenticated account, "" for none. The call counts
// against agent's sandbox quota once the request is valid.
func (e *Engine) Evaluate(ctx context.Context, accountID string, agent Agent, req EvaluateRequest) (*Evaluation, error) {
	now := e.clock().UTC()
	var acc *Account
	if accountID != "" {
		a, ok := e.accounts.Get(accountID)
		if !ok {
			return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
		}
		acc = a
	}
	seller, buyer, err := evaluateParties(req, acc)
	if err != nil {
		return nil, err
	}
	kind, desc, err := parseEventSupply("/supply", req.Supply)
	if err != nil {
		return nil, err
	}
	amount, amountString, err := parseUSDCAmount("/amountUsdc", req.AmountUSDC)
	if err != nil {
		return nil, err
	}
	if req.Currency != "" && req.Currency != AssetUSDC {
		return nil, &Error{Code: CodeUnsupportedAsset, Field: "/currency", Detail: fmt.Sprintf("currency %q is not supported; the preview is in %s (spec §1)", req.Currency, AssetUSDC)}
	}
	date, err := parseEvaluateDate("/date", req.Date, now)
	if err != nil {
		return nil, err
	}
	quota, err := e.takeQuota(agent, now)
	if err != nil {
		return nil, err
	}

	reg := e.lookupVATNumber(ctx, buyer.VATNumber)
	regCheck := registryCheck(reg)
	det := determineWithUnknowns(seller, vat.Buyer{
		Country:    buyer.Country,
		PostalCode: buyer.PostalCode,
		Business:   buyer.BusinessStatus == BusinessStatusB2B,
		VATNumber:  buyer.VATNumber,
		Registry:   regCheck,
	}, vat.Supply{Kind: kind, Date: date})
	rfx, gross, _, err := e.convert(ctx, settlement{Amount: amount, AmountString: amountString, Timestamp: date})
	if err != nil {
		return nil, err
	}
	if rfx.GrossEUR != "" && det.Determined() {
		net, tax := splitGross(gross, det)
		rfx.NetEUR, rfx.VATEUR = net.StringFixed(2), tax.StringFixed(2)
	}
	return &Evaluation{
		Object:      "compliance_evaluation",
		Environment: receipt.EnvSandbox,
		Watermark:   receipt.SandboxWatermark,
		EvaluatedAt: now.Format(time.RFC3339Nano),
		Date:        date.Format(time.DateOnly),
		Seller: FiscalEventSeller{
			LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber,
			OtherEstablishments: seller.OtherEstablishments, OverThreshold: seller.OverThreshold,
			OptedForDestination: seller.OptedForDestination, AccountSeller: seller.IsAccount,
		},
		Buyer: FiscalEventBuyer{
			Country: buyer.Country, BusinessStatus: buyer.BusinessStatus, VATNumber: buyer.VATNumber,
			Name: buyer.Name, PostalCode: buyer.PostalCode, Attested: "merchant", Registry: reg,
		},
		Supply:        EventSupply{Kind: kind, Description: desc},
		Determination: det,
		FX:            rfx,
		Quota:         quota,
	}, nil
}

// evaluateParties validates the seller and the buyer of an evaluation. The
// buyer must be an attested EU-27 customer (spec §4): an absent country or
// one outside the EU-27 is UNSUPPORTED_JURISDICTION, a malformed one
// BAD_REQUEST.
func evaluateParties(req EvaluateRequest, acc *Account) (sellerFacts, partyBuyer, error) {
	var seller sellerFacts
	switch {
	case req.Seller != nil:
		s, err := parseEventSeller("/seller", *req.Seller, false)
		if err != nil {
			return seller, partyBuyer{}, err
		}
		seller = s
		if acc != nil {
			if m, ok, err := matchAccountSeller("/seller", s, acc); err != nil {
				return seller, partyBuyer{}, err
			} else if ok {
				seller = m
			}
		}
	case acc != nil:
		seller = accountSellerFacts(acc)
	default:
		return seller, partyBuyer{}, badRequest("/seller", "is required without a key (with a key it defaults to the account's seller)")
	}
	buyer, err := parseEventBuyer("/buyer", req.Buyer)
	if err != nil {
		return seller, buyer, err
	}
	if !inEU27(buyer.Country) {
		detail := "the buyer's country is not attested; the preview covers attested EU-27 customers only"
		if buyer.Country != "" {
			detail = fmt.Sprintf("the buyer's country %s is not an EU-27 member state; the preview covers attested EU-27 customers only", buyer.Country)
		}
		return seller, buyer, &Error{Code: CodeUnsupportedJurisdiction, Field: "/buyer/country", Detail: detail}
	}
	return seller, buyer, nil
}

// parseEvaluateDate reads the supply date of an evaluation: a UTC day or an
// RFC 3339 UTC instant, from 2015 up to now (the service is post-settlement,
// and no rate is known for a future day). Empty means now.
func parseEvaluateDate(field, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return now, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if d.Year() < minYear || d.After(now) {
			return time.Time{}, badRequest(field, "must be a day from %d up to today (%s)", minYear, now.Format(time.DateOnly))
		}
		return d, nil
	}
	if strings.Contains(v, "T") {
		return parseTimestamp(field, v, now)
	}
	return time.Time{}, badRequest(field, "must be a date such as \"2026-04-10\" or an ISO-8601 UTC timestamp")
}
