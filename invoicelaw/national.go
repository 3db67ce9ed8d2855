package invoicelaw

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// National is a supply's VAT and net amount in the national currency of
// its invoicing state (Art. 230), each converted from the exact EUR
// figure, with the basis of that currency (fx.NationalCurrency.Basis).
type National struct {
	VAT, Net fx.NationalConversion
	Basis    string
}

// TaxCurrency is the invoice's statement of the national currency: its
// code, the rate and its date, the rate's source and rule (RateSource),
// and the exact EUR net and VAT that were converted (ubl.TaxCurrency.Exact),
// so that the invoice states the VAT payable in the national currency
// rounded once from the exact VAT, as the conversions are (Art. 230
// Directive 2006/112/EC, https://eur-lex.europa.eu/eli/dir/2006/112/oj;
// its euro cents converted would be rounded twice).
func (n *National) TaxCurrency() *ubl.TaxCurrency {
	rate := n.VAT.Rate
	tc := &ubl.TaxCurrency{Code: n.VAT.Currency, Rate: rate.Value, RateDate: rate.RateDate, RateSource: RateSource(rate, n.VAT.Rule)}
	ne, err1 := decimal.NewFromString(n.Net.AmountEUR)
	ve, err2 := decimal.NewFromString(n.VAT.AmountEUR)
	if err1 == nil && err2 == nil {
		tc.Exact = []ubl.StatedAmount{{TaxableAmount: ne.Abs(), TaxAmount: ve.Abs()}}
	}
	return tc
}

// NationalVAT states the supply's VAT in the national currency of the
// invoicing state when it is not the euro (Art. 230 Directive
// 2006/112/EC; fx.NationalCurrencyFor: CZ, DK, HU, PL, RO, SE, BG before
// 1 January 2026, GB): the exact VAT and net of a supply at instant at,
// converted into the national currency of law's tax country with
// fx.ConvertEURToNational at the rate the state's rule selects, for the
// record, and the rate for the invoice (National.TaxCurrency; ubl converts
// the invoice's own breakdown at it, BT-111); (nil, nil, nil) when no
// second currency is needed. A rate that
// cannot be had is a review reason, never a substitute rate; any other
// error of the rate source is returned as it is. For GB the ECB rate is refused
// (fx.ErrNationalRateRequired) unless the seller holds HMRC's written
// agreement to it (Seller.UKRateAgreement; VAT tertiary legislation on
// valuation, option (c)): the rule is then recorded as that agreement.
//
// supplyDate is the supply's calendar day in the taxing state
// (vat.Determination.SupplyDate). Art. 230 converts "using the conversion
// mechanism provided for in Article 91", so the national rate is taken on
// the day the EUR amount was: under the "rate of the day"
// (fx.ForDayOrPrevious) that day, not the UTC date of at (fx.RateOfTheDay;
// Art. 91(2) third subparagraph,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
func NationalVAT(ctx context.Context, src fx.Source, policy fx.Policy, s Seller, law Law, at time.Time, supplyDate string, vatExact, netExact decimal.Decimal) (*National, *vat.Reason, error) {
	if law.TaxCountry == "" {
		return nil, nil, nil
	}
	// Which currency is the national one (the lev until 2026-01-01) is
	// decided on the supply's day, as its rate and registrations are, not
	// on the invoicing state's own day of at: noon UTC on supplyDate is
	// that day in every zone fx.NationalCurrencyFor reads.
	day := at
	if d, err := time.Parse(time.DateOnly, supplyDate); err == nil {
		day = d.Add(12 * time.Hour)
	}
	nc, ok, err := fx.NationalCurrencyFor(law.TaxCountry, day)
	if errors.Is(err, fx.ErrNoNationalRule) {
		return nil, noNationalRule(law, day, err), nil
	}
	if err != nil || !ok {
		return nil, nil, err // ok false: the state's currency is the euro
	}
	rateAt, _ := fx.RateOfTheDay(policy, at, supplyDate)
	return convertNational(ctx, src, policy, &s, law, rateAt, vatExact, netExact, nc)
}

// noNationalRule is the review reason of a state with a national currency
// but no rate rule for the day (nil for a euro state).
func noNationalRule(law Law, at time.Time, err error) *vat.Reason {
	if cur, _ := ubl.NationalCurrency(law.TaxCountry); cur != "" && cur != "EUR" {
		return &vat.Reason{Code: ReasonNationalRateUnavailable, Detail: fmt.Sprintf(
			"The VAT must also be stated in %s (Art. 230 %s; %s), and no rate rule is known for a supply on %s: %v.", cur, Directive, law.Basis, at.UTC().Format(time.DateOnly), err)}
	}
	return nil
}

// invoiceCurrency is the currency of the engine's invoices (BT-5): the
// national figures are the VAT of an invoice in euro stated again.
const invoiceCurrency = "EUR"

// convertNational is NationalVAT for a state with a national currency nc.
// Apart so that a euro state's supply (most) does not take its stack
// frame (~2.8 KB: two conversions and the reasons' formatting): every
// settlement's stack passes through here at its deepest (issue 22).
func convertNational(ctx context.Context, src fx.Source, policy fx.Policy, s *Seller, law Law, at time.Time, vatExact, netExact decimal.Decimal, nc fx.NationalCurrency) (*National, *vat.Reason, error) {
	if nc.Country == "GB" && strings.TrimSpace(s.UKRateAgreement) != "" {
		nc.Rule = fx.RateRule{
			ID: "gb-hmrc-agreed-ecb", ECB: fx.ECBAllowed, Timing: fx.TimingChargeableEvent,
			NationalRate: nc.Rule.NationalRate,
			Law: "VAT tertiary legislation on valuation (VATA 1994 Sch. 6 para 11; originally VAT Notice 700), option (c): a rate HMRC agreed in writing, " +
				"here the ECB euro foreign exchange reference rate, agreement " + strings.TrimSpace(s.UKRateAgreement) +
				" (https://www.gov.uk/guidance/vat-tertiary-legislation/valuation)",
		}
	}
	vatConv, err := fx.ConvertEURToNational(ctx, src, vatExact, nc, at, policy)
	var netConv fx.NationalConversion
	if err == nil {
		netConv, err = fx.ConvertEURToNational(ctx, src, netExact, nc, at, policy)
	}
	switch {
	case errors.Is(err, fx.ErrNationalRateRequired):
		return nil, &vat.Reason{Code: ReasonNationalRateRequired, Detail: fmt.Sprintf(
			"The VAT must also be stated in %s (%s: %s), at %s; the ECB rate is none of these and the engine has no other rate. A seller with HMRC's written agreement to the ECB rate states it as seller.ukRateAgreement.",
			nc.Currency, nc.Basis, nc.Rule.Law, nc.Rule.NationalRate)}, nil
	case (errors.Is(err, fx.ErrNationalRateUnavailable) || errors.Is(err, fx.ErrNoRate) || errors.Is(err, fx.ErrNotYetPublished)) &&
		slices.Contains(nc.AlsoAccepted, invoiceCurrency):
		// The state accepts the VAT amount in the invoice's euro
		// (Denmark, momsbekendtgørelsen § 97, stk. 2): the national figure
		// is stated when its rate is known, and not awaited when it is not.
		return nil, nil, nil
	case errors.Is(err, fx.ErrNationalRateUnavailable), errors.Is(err, fx.ErrNoRate), errors.Is(err, fx.ErrNotYetPublished):
		return nil, &vat.Reason{Code: ReasonNationalRateUnavailable, Detail: fmt.Sprintf(
			"The VAT must also be stated in %s (Art. 230 %s; %s), converted under rule %s (%s), and the rate source has no such rate: %v. The ECB feeds carry it; no other rate is substituted.",
			nc.Currency, Directive, law.Basis, nc.Rule.ID, nc.Rule.Law, err)}, nil
	case err != nil:
		return nil, nil, err
	}
	return &National{VAT: vatConv, Net: netConv, Basis: nc.Basis}, nil, nil
}

// NationalCurrencyReason predicts, for a determined supply by s at instant
// at, the review reason the invoicing law gives it when its VAT must also
// be stated in a national currency (Art. 230; the invoicing state is
// chosen as for the invoice, Art. 219a) and src has no rate the state
// accepts: national_rate_unavailable, or national_rate_required (the UK
// without Seller.UKRateAgreement). nil when no second currency is needed
// or the rate exists. The capability check (package catalog) predicts
// with it what recording the supply would give; the customer's details
// and the rules of the invoice itself are known only then.
func NationalCurrencyReason(ctx context.Context, src fx.Source, policy fx.Policy, det vat.Determination, s Seller, at time.Time) (*vat.Reason, error) {
	if !det.Determined() {
		return nil, nil
	}
	_, reason, err := NationalVAT(ctx, src, cmp.Or(policy, fx.LatestPublishedAt), s, For(det, s), at, det.SupplyDate, decimal.Zero, decimal.Zero)
	return reason, err
}

// RateSource is the invoice's statement of the national rate's source and
// rule (ubl appends it to the note with the rate and its date).
func RateSource(rate fx.Rate, rule fx.RateRule) string {
	when := "the latest published at the time of the supply"
	if rule.Timing == fx.TimingDayBefore {
		when = "published for the last day before the day of the supply"
	}
	return fmt.Sprintf("ECB euro foreign exchange reference rate %s, %s; rule %s under Art. 91(2) %s", rate.Source, when, rule.ID, Directive)
}

// StatedNational is a credit note's breakdown in the national currency as
// its record states it (fiscal.RecordNationalFX.Net and VAT: negative, the
// correction), for ubl.TaxCurrency.Stated: the one subtotal's taxable
// amount and VAT, positive as the document states them. nil when either
// is missing or unreadable: the renderer converts them.
func StatedNational(net, vatAmount string) []ubl.StatedAmount {
	n, err1 := decimal.NewFromString(net)
	v, err2 := decimal.NewFromString(vatAmount)
	if err1 != nil || err2 != nil {
		return nil
	}
	return []ubl.StatedAmount{{TaxableAmount: n.Abs(), TaxAmount: v.Abs()}}
}

// WithExact sets tc.Exact, for a document with one VAT subtotal whose
// cents are net and vatAmount, to its exact taxable amount and VAT in the
// document currency (netExact, vatExact: decimal strings; a correction's
// are negative, the document states them positive), from which ubl
// converts the VAT in the national currency and rounds it once (Art. 230
// Directive 2006/112/EC, https://eur-lex.europa.eu/eli/dir/2006/112/oj:
// the VAT payable, converted by the mechanism of Art. 91; its euro cents
// converted would be rounded twice), and returns tc. It leaves tc.Exact
// nil, so that ubl converts the cents (and checks tc.Stated against
// them), where an exact figure is missing, unreadable or more than
// ubl.ExactTolerance (0.02) from its cents, the bound ubl holds them to
// (a credit note's cents, a running difference, lie within it of its
// exact share), or where tc.Stated is not within 0.01 of the exact
// figures converted at tc.Rate (a credit note of an invoice that stated
// its cents converted).
func WithExact(tc *ubl.TaxCurrency, net, vatAmount decimal.Decimal, netExact, vatExact string) *ubl.TaxCurrency {
	tc.Exact = nil
	cent := decimal.New(1, -2)
	ne, err1 := decimal.NewFromString(netExact)
	ve, err2 := decimal.NewFromString(vatExact)
	if err1 != nil || err2 != nil {
		return tc
	}
	e := ubl.StatedAmount{TaxableAmount: ne.Abs(), TaxAmount: ve.Abs()}
	if tol := ubl.ExactTolerance(); e.TaxableAmount.Sub(net.Abs()).Abs().GreaterThan(tol) || e.TaxAmount.Sub(vatAmount.Abs()).Abs().GreaterThan(tol) {
		return tc
	}
	if st := tc.Stated; len(st) == 1 && (st[0].TaxableAmount.Sub(e.TaxableAmount.Mul(tc.Rate).Round(2)).Abs().GreaterThan(cent) ||
		st[0].TaxAmount.Sub(e.TaxAmount.Mul(tc.Rate).Round(2)).Abs().GreaterThan(cent)) {
		return tc
	}
	tc.Exact = []ubl.StatedAmount{e}
	return tc
}

// RoundedOnce reports whether national figures as a record states them
// (fiscal.RecordNationalFX: net and VAT to the cent, and their exact
// values) are the exact ones rounded once, as invoices state them since
// their VAT in the national currency is converted from the exact VAT
// (ExactNational); figures of an earlier invoice, its euro cents
// converted, are mostly not.
func RoundedOnce(net, vatAmount, netExact, vatExact string) bool {
	ne, err1 := decimal.NewFromString(netExact)
	ve, err2 := decimal.NewFromString(vatExact)
	return err1 == nil && err2 == nil && ne.Round(2).StringFixed(2) == net && ve.Round(2).StringFixed(2) == vatAmount
}
