package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// EvaluateRequest is the body of POST /v1/compliance/evaluate (a
// classification preview; its shape is ours, README "Compliance preview"). The seller may be
// established anywhere; the buyer must be an attested EU-27 customer; the
// amount is in USDC, converted at the ECB rate of Date.
//
//	{"seller": {"country": "US", "overThreshold": false},
//	 "buyer": {"country": "DE", "businessStatus": "B2C"},
//	 "supply": {"kind": "digital_service"},
//	 "amountUsdc": "11.90", "date": "2026-04-10"}
//
// seller may be left out when a key is sent: it is then the account's
// seller. currency may be left out and is otherwise "USDC" (the preview is
// always in USDC). date is a YYYY-MM-DD UTC day or an
// RFC 3339 UTC instant, not in the future; it defaults to today (UTC).
type EvaluateRequest struct {
	Seller     *parties.Seller `json:"seller,omitempty"`
	Buyer      parties.Buyer   `json:"buyer"`
	Supply     parties.Supply  `json:"supply"`
	AmountUSDC string          `json:"amountUsdc"`
	Currency   string          `json:"currency,omitempty"`
	Date       string          `json:"date,omitempty"`
}

// Evaluation is the answer of Evaluate and the 200 body of POST
// /v1/compliance/evaluate. Nothing of it is recorded (recorded is always
// false): it is a sandbox preview, watermarked, and not a fiscal record.
type Evaluation struct {
	Object        string             `json:"object"`      // "compliance_evaluation"
	Environment   string             `json:"environment"` // "sandbox"
	Recorded      bool               `json:"recorded"`    // always false
	Watermark     string             `json:"watermark"`   // receipt.SandboxWatermark
	EvaluatedAt   string             `json:"evaluatedAt"`
	Date          string             `json:"date"` // the supply date the rates were taken for, YYYY-MM-DD
	Seller        fiscalevent.Seller `json:"seller"`
	Buyer         fiscalevent.Buyer  `json:"buyer"`
	Supply        parties.Supply     `json:"supply"`
	Determination vat.Determination  `json:"determination"`
	FX            fiscal.RecordFX    `json:"fx"` // netEur and vatEur only when the determination is DETERMINED
	Quota         *Quota             `json:"-"`  // the agent's quota after this call; nil when not metered
}

// Evaluate previews the EU VAT classification of a supply, without writing
// any record: the determination of package vat (with the registry lookup of
// a buyer's VAT number when a registry is configured; for the account's own
// seller, on the account's Art. 59c running totals, as a recorded sale of
// the account is decided), the conversion of the USDC amount to EUR at the
// ECB rate of the date, and the VAT split. A buyer
// that is not an attested EU-27 customer is UNSUPPORTED_JURISDICTION (422).
//
// accountID is the authenticated account, "" for none. The call counts
// against agent's sandbox quota once the request is valid.
func (s *Sandbox) Evaluate(ctx context.Context, accountID string, agent Agent, req EvaluateRequest) (*Evaluation, error) {
	now := s.prod.Now().UTC()
	var acc *fiscal.Account
	var books *fiscal.Books
	if accountID != "" {
		b, err := s.prod.Books(accountID)
		if err != nil {
			return nil, err
		}
		a := b.Account()
		acc, books = &a, b
	}
	totals := func() (*vat.CrossBorderTotals, error) { // at the previewed date, as the preview decides
		date, err := parseEvaluateDate("/date", req.Date, now)
		if err != nil {
			return nil, err
		}
		return parties.AccountTotals(ctx, books, parties.AccountSeller(*acc), date)
	}
	seller, buyer, err := evaluateParties(req, acc, totals)
	if err != nil {
		return nil, err
	}
	kind, desc, err := parties.ParseSupply("/supply", req.Supply)
	if err != nil {
		return nil, err
	}
	amount, _, err := wire.USDCAmount("/amountUsdc", req.AmountUSDC)
	if err != nil {
		return nil, fiscal.InputError(err)
	}
	if req.Currency != "" && req.Currency != "USDC" {
		return nil, &fiscal.Error{Code: fiscal.CodeUnsupportedAsset, Field: "/currency", Detail: fmt.Sprintf("currency %s is not supported; the preview is in USDC", shown.Quote(req.Currency))}
	}
	date, err := parseEvaluateDate("/date", req.Date, now)
	if err != nil {
		return nil, err
	}
	// A day without a time previews with that day's ECB rate (the "rate of
	// the day"); an instant with the rate a settlement then would get: for
	// the account's own seller, at the account's Art. 91(2) reading
	// (Seller.FXPolicy), as recording converts its sales.
	var policy fx.Policy
	switch {
	case len(req.Date) == len(time.DateOnly):
		policy = fx.ForDayOrPrevious
	case seller.Profile != nil:
		policy = seller.Profile.FXPolicy // "" is the engine's
	}
	if seller.IsAccount && books != nil {
		if seller.CrossBorder, err = parties.AccountTotals(ctx, books, seller, date); err != nil {
			return nil, err
		}
	}
	eng, err := s.open()
	if err != nil {
		return nil, err
	}
	quota, err := s.takeQuota(eng, agent, now)
	if err != nil {
		return nil, err
	}
	d, err := eng.Prepare(ctx, AnonymousAccount, fiscal.Supply{
		Payment: fiscal.Payment{
			Amount: amount, AmountString: req.AmountUSDC, Timestamp: date,
			Buyer: fiscal.BuyerFacts{Country: buyer.Country, PostalCode: buyer.PostalCode, VATNumber: buyer.VATNumber, Name: buyer.Name, SupplyKind: kind, Description: desc,
				Evidence: buyer.Evidence, Address: buyer.Address},
		},
		Seller:       fiscal.Seller{LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber, OtherEstablishments: seller.OtherEstablishments, FXPolicy: policy},
		Verification: fiscal.Verification{Chain: "not_performed"},
		Determine: func(in vat.Input) vat.Determination {
			in.Buyer.Business = buyer.BusinessStatus == parties.BusinessStatusB2B
			return parties.DetermineWithUnknowns(eng.Settings().Rates, seller, in.Buyer, in.Supply)
		},
	}, now)
	if err == nil && req.Seller != nil {
		// As recording answers the same facts (fiscalevent.Service.Record).
		err = parties.StatedUnderContradicted("/seller", parties.SellerFacts{OverThreshold: req.Seller.OverThreshold}, seller, d.Record.Classification)
	}
	if err != nil {
		s.giveBackQuota(eng, agent, now) // no answer: the call does not count
		return nil, err
	}
	r := d.Record
	rfx := r.FX
	return &Evaluation{
		Object:      "compliance_evaluation",
		Environment: receipt.EnvSandbox,
		Watermark:   receipt.SandboxWatermark,
		EvaluatedAt: now.Format(time.RFC3339Nano),
		Date:        date.Format(time.DateOnly),
		Seller: fiscalevent.Seller{
			LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber,
			OtherEstablishments: seller.OtherEstablishments, OverThreshold: seller.OverThreshold,
			OptedForDestination: seller.OptedForDestination, AccountSeller: seller.IsAccount,
		},
		Buyer: fiscalevent.Buyer{
			Country: buyer.Country, BusinessStatus: buyer.BusinessStatus, VATNumber: r.Buyer.VATNumber, // as the registry was asked (a prefix supplied)
			Name: buyer.Name, PostalCode: buyer.PostalCode, Attested: "merchant", Registry: r.Buyer.Registry,
			Evidence: buyer.Evidence, Address: buyer.Address, VATNumberAsGiven: r.Buyer.VATNumberAsGiven, // as a fiscal event states it
		},
		Supply:        parties.Supply{Kind: kind, Description: desc},
		Determination: r.Classification,
		FX:            rfx,
		Quota:         quota,
	}, nil
}

// evaluateParties validates the seller and the buyer of an evaluation. The
// buyer must be an attested EU-27 customer (README "Compliance preview"): an absent country or
// one outside the EU-27 is UNSUPPORTED_JURISDICTION, a malformed one
// BAD_REQUEST. The country is read as Determine reads it
// (vat.MemberStateOf): Monaco is France (Art. 7(1) Directive
// 2006/112/EC), the Isle of Man the UK, the Canary Islands outside.
func evaluateParties(req EvaluateRequest, acc *fiscal.Account, totals func() (*vat.CrossBorderTotals, error)) (parties.SellerFacts, parties.BuyerFacts, error) {
	var seller parties.SellerFacts
	switch {
	case req.Seller != nil:
		s, err := parties.ParseSeller("/seller", *req.Seller, false)
		if err != nil {
			return seller, parties.BuyerFacts{}, err
		}
		seller = s
		if acc != nil {
			if m, ok, err := parties.MatchAccountSeller("/seller", s, *acc, totals); err != nil {
				return seller, parties.BuyerFacts{}, err
			} else if ok {
				seller = m
			}
		}
	case acc != nil:
		seller = parties.AccountSeller(*acc)
	default:
		return seller, parties.BuyerFacts{}, badRequest("/seller", "is required without a key (with a key it defaults to the account's seller)")
	}
	buyer, err := parties.ParseBuyer("/buyer", req.Buyer)
	if err != nil {
		return seller, buyer, err
	}
	if _, ok := vat.MemberStateOf(buyer.Country); !ok { // as Determine reads it: Monaco is France (Art. 7(1) Directive 2006/112/EC)
		detail := "the buyer's country is not attested; the preview covers attested EU-27 customers only"
		if buyer.Country != "" {
			detail = fmt.Sprintf("the buyer's country %s is not an EU-27 member state; the preview covers attested EU-27 customers only", buyer.Country)
		}
		return seller, buyer, &fiscal.Error{Code: CodeUnsupportedJurisdiction, Field: "/buyer/country", Detail: detail}
	}
	return seller, buyer, nil
}

// parseEvaluateDate reads the supply date of an evaluation: a UTC day or an
// RFC 3339 UTC instant, from 2015 up to now (the service is post-settlement,
// and no rate is known for a future day). A day is previewed at an instant
// that lies on it in every taxing territory. Empty means now.
func parseEvaluateDate(field, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return now, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if d.Year() < wire.MinYear || d.After(now) {
			return time.Time{}, badRequest(field, "must be a day from %d up to today (%s)", wire.MinYear, now.Format(time.DateOnly))
		}
		// Midday (or now, today before noon): the UTC day is the supply's
		// day also where the clock is behind UTC (the Azores), whose
		// local day selects the rate (vat localday.go). Not before 01:00
		// UTC, when the day has begun in the Azores (UTC-1 in winter)
		// too: today asked just after midnight UTC is still yesterday
		// there, whose rate the preview must not take for today's.
		begun := d.Add(time.Hour)
		if d = d.Add(12 * time.Hour); d.After(now) {
			d = now
			if d.Before(begun) {
				d = begun
			}
		}
		return d, nil
	}
	if strings.Contains(v, "T") {
		t, err := wire.Timestamp(field, v, now)
		return t, fiscal.InputError(err)
	}
	return time.Time{}, badRequest(field, "must be a date such as \"2026-04-10\" or an ISO-8601 UTC timestamp")
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}
