package refunds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/ledger"
)

// bucketSummaryState: summary id \x00 VAT category \x00 rate → sumState
// JSON: what the credit notes against one summary invoice have credited at
// one of its VAT rates, checked and advanced in the committer like a
// settlement's refund state (bucketState).
const bucketSummaryState = "refund-summary-state"

// sumState is what the refunds of the supplies one summary invoice covers
// have corrected at one of its VAT rates: the refunds' exact net and VAT
// summed (positive), and what their credit notes stated, to the cent
// (positive).
type sumState struct {
	Count    int    `json:"count"`
	NetExact string `json:"netEurExact"`
	VATExact string `json:"vatEurExact"`
	Net      string `json:"netEur"`
	VAT      string `json:"vatEur"`
}

// sumRate is one VAT rate of the summary invoice that covers a refunded
// supply, with what its credit notes have credited so far.
type sumRate struct {
	key   []byte
	total invoicing.SummaryTotal // what the summary charged at the rate
	st    sumState
	raw   []byte // st as read; nil: none stored yet (the committer checks it is still so)
	// byRate: the summary's VAT at this rate is its taxable amount times
	// the rate, rounded (EN 16931 BR-CO-17, as package invoicing computes
	// it), so its credit notes' running VAT is too (credit).
	byRate bool
	// own: the settlement's own invoice (ownInvoice), whose last credit
	// note credits what is left of it: each earlier note leaves a
	// remainder that note can state (creditTo).
	own bool
}

// summaryRate reads what the credit notes against summary have credited
// at orig's VAT rate. A summary whose refunds predate this state (nothing
// stored) starts from the refund states of the supplies it covers at that
// rate, so that credit notes already issued count.
func summaryRate(ctx context.Context, b *fiscal.Books, summary *summaryInvoice, orig *fiscal.Record) (*sumRate, error) {
	det := orig.Classification
	rate := rateOf(orig)
	at := -1
	for i, t := range summary.totals {
		if t.Category == det.Category && decimalOr0(t.RatePercent).Equal(rate) {
			at = i
		}
	}
	if at < 0 {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: fmt.Sprintf("the summary invoice %s has no total at %s %% (category %s) for settlement %s", summary.id, rate, det.Category, orig.ID)}
	}
	s := &sumRate{key: []byte(summary.id + "\x00" + det.Category + "\x00" + rate.String()), total: summary.totals[at]}
	// A summary issued before its VAT followed BR-CO-17 stated its exact
	// VAT rounded; where that is also its taxable amount times the rate,
	// both rules credit the same.
	s.byRate = det.ChargesVAT() && rate.IsPositive() && decimalOr0(s.total.VATEUR).Equal(invoicing.SummaryVAT(decimalOr0(s.total.NetEUR), rate))
	raw, err := b.Engine().Ledger().Get(bucketSummaryState, s.key)
	if err == nil {
		s.raw = raw
		if err := json.Unmarshal(raw, &s.st); err != nil {
			return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored refund state of summary " + summary.id + " is unreadable", Err: err}
		}
		return s, nil
	}
	if !errors.Is(err, ledger.ErrNotFound) {
		return nil, fiscal.StoreError(err)
	}
	ids := make([]string, len(summary.supplies))
	for i, sup := range summary.supplies {
		ids[i] = sup.RecordID
	}
	states, err := statesOf(b.Engine(), ids)
	if err != nil {
		return nil, err
	}
	var net, vat, netExact, vatExact decimal.Decimal
	for i, sup := range summary.supplies {
		st := states[i]
		if st.Count == 0 {
			continue
		}
		if len(summary.totals) > 1 && sup.RecordID != orig.ID {
			r, _, err := b.Record(ctx, sup.RecordID)
			if err != nil {
				return nil, err
			}
			if r.Classification.Category != det.Category || !rateOf(r).Equal(rate) {
				continue
			}
		}
		s.st.Count += st.Count
		ne, ve := decimalOr0(st.NetExact).Neg(), decimalOr0(st.VATExact).Neg()
		netExact, vatExact = netExact.Add(ne), vatExact.Add(ve)
		g, v := decimalOr0(st.Gross).Neg(), decimalOr0(st.VAT).Neg()
		if !st.centsKnown() {
			g, v = fx.RoundEUR(ne.Add(ve)), fx.RoundEUR(ve)
		}
		net, vat = net.Add(g.Sub(v)), vat.Add(v)
	}
	s.st.NetExact, s.st.VATExact, s.st.Net, s.st.VAT = netExact.String(), vatExact.String(), net.String(), vat.String()
	return s, nil
}

// rateOf is the VAT rate (percent) of orig's supply, 0 where it charges
// none.
func rateOf(orig *fiscal.Record) decimal.Decimal {
	if det := orig.Classification; det.RatePercent != nil {
		return det.RatePercent.Decimal()
	}
	return decimal.Zero
}

// credit sets a's cents, the credit note's net and VAT, for a refund of a
// supply that the summary invoice of s covers, whose exact figures a
// states: the running difference. The summary charged at this rate its
// supplies' exact net and VAT summed and rounded once (package
// invoicing); the credit notes against it reduce that taxable amount and
// VAT (Art. 90 and Art. 219 Directive 2006/112/EC,
// https://eur-lex.europa.eu/eli/dir/2006/112/oj), so each one credits the
// refunds' exact net and VAT so far, this one's included, rounded once,
// less what the earlier credit notes credited. Their totals telescope:
// never more than the summary charged at the rate (rounding is monotone
// and the refunds never exceed the supplies), and once every supply at the
// rate is refunded, exactly what it charged. Where that VAT would be more
// than 0.01 from the note's net × rate (ubl refuses such a breakdown), the
// note states the nearest VAT that is (crediting less net where even that
// would credit more VAT than the summary charged); a later credit note's
// running difference takes up what it left (were it the last, up to a
// cent of the summary's VAT stays uncredited: never more than charged).
// A summary whose VAT at the rate is its taxable amount times the rate
// (BR-CO-17: byRate) is credited alike: the running VAT is the running
// net times the rate, rounded, so that crediting all of its net credits
// exactly its VAT.
func (s *sumRate) credit(a *amounts, rate decimal.Decimal, chargesVAT bool) {
	s.creditTo(a, rate, chargesVAT, false)
}

// creditTo is credit; last says this credit note is the last that can be
// (the refund empties what the invoice charged: a settlement's own
// invoice refunded in full), which then credits what is left of the
// invoice's net and VAT to the cent, so that they net to zero whatever
// the rounding of its exact figures, within the same limits.
func (s *sumRate) creditTo(a *amounts, rate decimal.Decimal, chargesVAT, last bool) {
	credNet, credVAT := decimalOr0(s.st.Net), decimalOr0(s.st.VAT)
	chargedNet, chargedVAT := decimalOr0(s.total.NetEUR), decimalOr0(s.total.VATEUR)
	leftVAT := decimal.Max(chargedVAT.Sub(credVAT), decimal.Zero)
	netTo, vatTo := chargedNet, chargedVAT
	if !last {
		netTo = decimal.Min(fx.RoundEUR(decimalOr0(s.st.NetExact).Add(a.netExact)), chargedNet)
		vatTo = decimal.Min(fx.RoundEUR(decimalOr0(s.st.VATExact).Add(a.vatExact)), chargedVAT)
		if s.byRate && chargesVAT {
			// The VAT of the net credited so far, as the summary's VAT
			// is of its net: once every supply is refunded (netTo is
			// the summary's net) exactly the VAT it charged.
			vatTo = decimal.Min(invoicing.SummaryVAT(netTo, rate), chargedVAT)
		}
	}
	net, vat := netTo.Sub(credNet), vatTo.Sub(credVAT)
	net = decimal.Max(net, decimal.Zero)
	if !chargesVAT || !rate.IsPositive() {
		a.net, a.vat, a.gross = net, decimal.Zero, net
		return
	}
	cent := decimal.New(1, -2)
	if net.Mul(rate).Shift(-2).Sub(cent).GreaterThan(leftVAT) {
		// The largest net in cents whose VAT can be stated within 0.01:
		// (leftVAT + 0.01) × 100 / rate, floored to the cent. QuoRem
		// truncates the exact quotient (both positive: the floor) at two
		// decimals; Div would round it first at decimal.DivisionPrecision,
		// a package global any program may set.
		net, _ = leftVAT.Add(cent).Shift(2).QuoRem(rate, 2)
	}
	exact := net.Mul(rate).Shift(-2)
	vat = decimal.Max(decimal.Min(vat, exact.Add(cent).RoundFloor(2)), exact.Sub(cent).RoundCeil(2))
	if s.own && !last {
		// What the invoice keeps after this note is what the last note
		// credits, which must be consistent too: its VAT within 0.01 of
		// its net × rate. The remainder's deviation less this note's is
		// the next remainder's; where the remainder is consistent now
		// (|dev| <= 0.01), a VAT within 0.01 of both this note's net ×
		// rate and net × rate + dev exists, and the note takes the one
		// nearest its running difference. Otherwise the last note, kept
		// consistent, left a cent of the invoice's net uncredited.
		dev := chargedVAT.Sub(credVAT).Sub(chargedNet.Sub(credNet).Mul(rate).Shift(-2))
		lo, hi := exact.Add(dev).Sub(cent).RoundCeil(2), exact.Add(dev).Add(cent).RoundFloor(2)
		if dev.Abs().LessThanOrEqual(cent) {
			vat = decimal.Max(decimal.Min(vat, hi), lo)
		}
	}
	vat = decimal.Max(decimal.Min(vat, leftVAT), decimal.Zero)
	a.net, a.vat, a.gross = net, vat, net.Add(vat)
}

// check is the committer's check and advance of s for a refund with
// amounts a: if the credit notes against the summary at this rate are no
// longer those read (a concurrent refund of another of its supplies
// committed first), errStale, and the refund is computed again.
func (s *sumRate) check(a amounts) ([]ledger.SideKey, func(h *ledger.Hook) error) {
	return []ledger.SideKey{{Bucket: bucketSummaryState, Key: s.key}}, func(h *ledger.Hook) error {
		raw, err := h.Get(bucketSummaryState, s.key)
		if err != nil {
			return err
		}
		if !bytes.Equal(raw, s.raw) {
			return errStale
		}
		next := sumState{
			Count:    s.st.Count + 1,
			NetExact: decimalOr0(s.st.NetExact).Add(a.netExact).String(),
			VATExact: decimalOr0(s.st.VATExact).Add(a.vatExact).String(),
			Net:      decimalOr0(s.st.Net).Add(a.net).String(),
			VAT:      decimalOr0(s.st.VAT).Add(a.vat).String(),
		}
		raw, err = json.Marshal(next)
		if err != nil {
			return err
		}
		return h.Put(bucketSummaryState, s.key, raw)
	}
}

// ownInvoice is the running total of the credit notes against orig's own
// invoice (or, for a supply that has none, none being required, against
// its record's figures), as st states them: what it charged (the record's
// cents) and what the refunds so far corrected, exact and to the cent
// (st's figures are negative: the corrections). nil where st does not
// state its credit notes' cents (a state written before they were kept)
// or the record has no cents: each refund then rounds its own share.
//
// A settlement refunded in parts is corrected like a summary invoice at
// one rate (sumRate.credit): each credit note credits the refunds' exact
// net and VAT so far, this one's included, rounded once, less what the
// earlier credit notes credited, so that together they never credit more
// than the invoice charged (Art. 90, 219 Directive 2006/112/EC), and the
// refund that empties the settlement credits what is left of it.
func ownInvoice(orig *fiscal.Record, st state) *sumRate {
	if !st.centsKnown() || orig.FX.GrossEUR == "" || orig.FX.VATEUR == "" || orig.FX.NetEUR == "" {
		return nil
	}
	return &sumRate{
		own:   true,
		total: invoicing.SummaryTotal{NetEUR: orig.FX.NetEUR, VATEUR: orig.FX.VATEUR},
		st: sumState{Count: st.Count,
			NetExact: decimalOr0(st.NetExact).Neg().String(), VATExact: decimalOr0(st.VATExact).Neg().String(),
			Net: decimalOr0(st.VAT).Sub(decimalOr0(st.Gross)).String(), VAT: decimalOr0(st.VAT).Neg().String()},
	}
}
