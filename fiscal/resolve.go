package fiscal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// A record PENDING_MANUAL_REVIEW is a queue entry, not a dead end: a person
// (or the merchant's back office) resolves it by supplying the facts the
// determination lacked, or by deciding the treatment themselves. Either way
// the result is a new revision of the record (a new signed ledger entry
// with its own receipt, an invoice when it is now PROCESSED, and an outbox
// event); the pending entry stays in the log. A resolution that still lacks
// facts leaves the record pending, with the reasons that remain.

// Resolution is what a person supplies to end a review: the missing facts
// about the buyer, or a determination of their own, always with who they
// are. Facts given replace the record's; facts left out keep it.
type Resolution struct {
	Buyer *ResolutionBuyer `json:"buyer,omitempty"`
	// Determination is a person's decision of the VAT treatment, for a
	// case the rules cannot decide (vat.DetermineManually checks it
	// against the facts and the rate table).
	Determination *ManualDetermination `json:"determination,omitempty"`
	// ResolvedBy identifies the person (an e-mail address, a staff id):
	// required, kept on the revision.
	ResolvedBy string `json:"resolvedBy"`
	// Note is free text kept on the revision.
	Note string `json:"note,omitempty"`
}

// ResolutionBuyer are the buyer facts a resolution supplies, under the JSON
// names of the settlement request.
type ResolutionBuyer struct {
	Country    string `json:"consumerCountry,omitempty"`
	VATNumber  string `json:"consumerVatNumber,omitempty"`
	Name       string `json:"consumerName,omitempty"`
	PostalCode string `json:"consumerPostalCode,omitempty"`
	// BusinessStatus "B2C" states that the buyer is a consumer (it clears
	// a VAT number on the record); "B2B" needs a VAT number, given here or
	// on the record. "" keeps what the record implies.
	BusinessStatus string `json:"businessStatus,omitempty"`
	// Evidence are items of the customer's location (Art. 24b, 24f
	// Implementing Regulation 282/2011); they replace the record's. Absent
	// (nil) keeps the record's; an empty list ([]) clears them, as an
	// empty list means none elsewhere in the API.
	Evidence []vat.Evidence `json:"locationEvidence,omitempty"`
	// Address is the customer's postal address, for a business sale's
	// invoice (Art. 226(5)); it replaces the record's.
	Address *Address `json:"consumerAddress,omitempty"`
}

// ClearsEvidence reports whether the resolution clears the location
// evidence (locationEvidence []), which its JSON, omitting an empty list,
// does not tell from leaving it out: request fingerprints add it.
func (rb *ResolutionBuyer) ClearsEvidence() bool {
	return rb != nil && rb.Evidence != nil && len(rb.Evidence) == 0
}

// ManualDetermination is a person's decision of the treatment (vat.Manual
// under the resolution's JSON names).
type ManualDetermination struct {
	Regime        string `json:"regime"`
	TaxingCountry string `json:"taxingCountry,omitempty"`
	RatePercent   string `json:"ratePercent,omitempty"`
	Reason        string `json:"reason"`
}

// Normalised validates a resolution and returns it in canonical form, or a
// BAD_REQUEST naming the field. A note is bounded by wire.MaxNoteLen
// characters, resolvedBy as text (wire.MaxTextLen), a manual reason as vat
// records it (vat.MaxManualReasonLength), so that it is refused here.
func (r Resolution) Normalised() (Resolution, error) {
	var err error
	if r.ResolvedBy, err = parseText("/resolvedBy", r.ResolvedBy); err != nil {
		return r, err
	}
	if r.ResolvedBy == "" {
		return r, badRequest("/resolvedBy", "is required: who resolves the review")
	}
	if r.Note, err = parseLongText("/note", r.Note, wire.MaxNoteLen); err != nil {
		return r, err
	}
	if r.Buyer == nil && r.Determination == nil {
		return r, badRequest("", "a resolution needs buyer facts, a determination, or both")
	}
	if b := r.Buyer; b != nil {
		nb := *b
		facts, err := BuyerFacts{Country: b.Country, VATNumber: b.VATNumber, Name: b.Name, PostalCode: b.PostalCode}.Normalised()
		if err != nil {
			return r, InputError(err)
		}
		nb.Country, nb.VATNumber, nb.Name, nb.PostalCode = facts.Country, facts.VATNumber, facts.Name, facts.PostalCode
		if b.Address != nil {
			// The address's country is the buyer's: the resolution's when
			// it gives one, else the record's (ResolutionBuyer.Apply).
			if facts.Country != "" {
				nb.Address, err = settlement.BuyerAddress("/buyer/consumerAddress", b.Address, facts.Country)
			} else {
				nb.Address, err = settlement.AddressFields("/buyer/consumerAddress", b.Address)
			}
			if err != nil {
				return r, InputError(err)
			}
		}
		if s := nb.BusinessStatus; s != "" && s != vat.TreatmentB2C && s != vat.TreatmentB2B {
			return r, badRequest("/buyer/businessStatus", "must be B2C or B2B")
		}
		if nb.BusinessStatus == vat.TreatmentB2C && nb.VATNumber != "" {
			return r, badRequest("/buyer/consumerVatNumber", "a consumer (businessStatus B2C) has no VAT number to record")
		}
		if nb.Evidence, err = parseEvidence("/buyer/locationEvidence", b.Evidence); err != nil {
			return r, err
		} else if b.Evidence != nil && nb.Evidence == nil {
			nb.Evidence = []vat.Evidence{} // [] clears the record's (ClearsEvidence)
		}
		// A buyer that states no fact resolves nothing: without a
		// determination it would only append a copy of the pending revision.
		if r.Buyer = &nb; r.Determination == nil && nb.Country+nb.VATNumber+nb.Name+nb.PostalCode+nb.BusinessStatus == "" && nb.Evidence == nil && nb.Address == nil {
			return r, badRequest("/buyer", "states no fact (consumerCountry, consumerVatNumber, consumerName, consumerPostalCode, businessStatus, locationEvidence or consumerAddress) and there is no determination: nothing to resolve")
		}
	}
	if m := r.Determination; m != nil {
		nm := *m
		nm.Regime, nm.TaxingCountry, nm.RatePercent = strings.TrimSpace(nm.Regime), strings.ToUpper(strings.TrimSpace(nm.TaxingCountry)), strings.TrimSpace(nm.RatePercent)
		if nm.Reason, err = parseLongText("/determination/reason", nm.Reason, vat.MaxManualReasonLength); err != nil {
			return r, err
		}
		if nm.Regime == "" {
			return r, badRequest("/determination/regime", "is required")
		}
		if nm.Reason == "" {
			return r, badRequest("/determination/reason", "is required: why the treatment is what it is")
		}
		r.Determination = &nm
	}
	return r, nil
}

// Resolve ends (or advances) the review of the pending record id with a
// person's resolution, as a new revision: the facts are applied to the
// record's payment and the treatment decided again (or taken from the
// manual determination), the receipt signed, the invoice rendered when the
// record is now PROCESSED, and the revision committed with its event
// (settlement.review_resolved, or settlement.pending_review when facts are
// still missing). The idempotency key is optional; the same key with the
// same resolution answers with the record (Outcome Replayed).
func (b *Books) Resolve(ctx context.Context, id string, res Resolution, idempotencyKey string) (*SettleResult, error) {
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	res, err := res.Normalised()
	if err != nil {
		return nil, err
	}
	var claims []ledger.Claim
	if idempotencyKey != "" {
		claims = append(claims, IdempotencyClaim(b.acc.ID, idempotencyKey, fingerprintOf(struct {
			ID    string
			R     Resolution
			Clear bool `json:",omitempty"`
		}{id, res, res.Buyer.ClearsEvidence()})))
		if out, err := b.answerFromLedger(claims, nil); out != nil || err != nil {
			return out, err
		}
	}
	return b.resolve(ctx, id, res, claims, 0)
}

// resolve decides and commits a normalised resolution.
func (b *Books) resolve(ctx context.Context, id string, res Resolution, claims []ledger.Claim, attempt int) (*SettleResult, error) {
	e := b.e
	prev, _, err := b.Record(ctx, id)
	if err != nil {
		return nil, err
	}
	if prev.ReviewStatus != StatusPendingReview {
		// The key's own request may have resolved it since Resolve looked
		// the key up: its replay, or the key's conflict, answers.
		if out, err := b.answerFromLedger(claims, nil); out != nil || err != nil {
			return out, err
		}
		return nil, &Error{Code: CodeRecordNotPending, Detail: fmt.Sprintf(
			"settlement %s is %s (revision %d): only a record pending review can be resolved", id, prev.ReviewStatus, prev.Revision)}
	}
	p, err := paymentOf(prev)
	if err != nil {
		return nil, err
	}
	if rb := res.Buyer; rb != nil && rb.BusinessStatus == vat.TreatmentB2B && rb.VATNumber == "" && prev.Buyer.VATNumber == "" {
		// A business is identified by its VAT number (Art. 18(1) Implementing
		// Regulation (EU) 282/2011); without one the sale would be decided as
		// a consumer's.
		return nil, badRequest("/buyer/consumerVatNumber", "a business buyer (B2B) needs its VAT number, given here or on the record")
	}
	reg, err := res.Buyer.Apply(&p.Buyer, prev.Buyer.Registry)
	if err != nil {
		return nil, err
	}
	seller, err := b.SupplySeller(prev) // the profile of the sale, not a later one
	if err != nil {
		return nil, err
	}
	now := e.Now().UTC()
	s := Supply{Payment: p, Seller: seller, Verification: prev.Verification, Registry: reg, AccountTotals: true}
	var manualErr error
	if m := res.Determination; m != nil {
		s.Determine = func(in vat.Input) (d vat.Determination) {
			d, manualErr = e.cfg.Rates.DetermineManually(in, vat.Manual{Regime: m.Regime, TaxingCountry: m.TaxingCountry, RatePercent: m.RatePercent,
				Reason: m.Reason, DecidedBy: res.ResolvedBy})
			return d
		}
	}
	// Prepare asks the registry when reg is nil (a new VAT number).
	d, err := e.Prepare(ctx, b.acc.ID, s, now)
	if err != nil {
		return nil, err
	}
	if manualErr == nil && res.Determination != nil {
		// The revision made once a missing rate is out decides by the
		// rules again (rates.Retry): a determination now would be dropped.
		// The national currency's rate is looked up when the invoice is
		// issued, so the wait is read on an issued copy.
		probe := *d
		if err := e.Issue(&probe, seller); err != nil {
			return nil, err
		}
		manualErr = invoicelaw.WaitRefusal(probe.Record.ReviewReasons, ReasonFXRateUnavailable)
	}
	if manualErr != nil {
		return nil, ManualRefusal(manualErr)
	}
	d.SettleRecheck(prev.ID)
	// revise keeps the fx-wait and rate-table queues in step with the revision (syncWaits).
	out, err := e.revise(ctx, prev, d, seller, now, Revision{ResolvedBy: res.ResolvedBy, Note: res.Note, Cause: CauseResolution}, claims)
	if errors.Is(err, errStaleTotal) && attempt < maxStaleRetries {
		// A concurrent sale counted toward the running total first:
		// decide again on the new total.
		return b.resolve(ctx, id, res, claims, attempt+1)
	}
	return out, err
}

// SettleRecheck makes the commit of d, a person's resolution of record id,
// dequeue the re-check of the record's VAT number unless d queues one
// itself: the resolution settled the number one way or another, and no
// re-check of the old one may revise the record after it.
func (d *Draft) SettleRecheck(id string) {
	if !slices.ContainsFunc(d.Puts, func(p ledger.Put) bool { return p.Bucket == bucketRecheck }) {
		d.Puts = append(d.Puts, ledger.Put{Bucket: bucketRecheck, Key: []byte(id)})
	}
}

// KeepRecheck makes the commit of d, a revision on a newly published rate
// (rates.Retry), leave the re-check of the record's VAT number as it is:
// the rate changes nothing the registry was asked, and deciding the record
// again must neither restart the re-check's window, which runs from the
// sale (RecheckPolicy.GiveUpAfter), nor queue again one given up.
func (d *Draft) KeepRecheck() {
	d.Puts = slices.DeleteFunc(d.Puts, func(p ledger.Put) bool { return p.Bucket == bucketRecheck })
}

// Apply puts the resolution's buyer facts (normalised) on b, the buyer
// facts of a record or a fiscal event whose registry answered reg, and
// returns the answer that still holds for its VAT number (nil: ask again).
// An address given without a country is checked against b's country, the
// buyer's (BAD_REQUEST naming the field); b is then unchanged.
func (rb *ResolutionBuyer) Apply(b *BuyerFacts, reg *vies.Result) (*vies.Result, error) {
	if rb == nil {
		return reg, nil
	}
	if rb.Address != nil && rb.Country == "" {
		if _, err := settlement.BuyerAddress("/buyer/consumerAddress", rb.Address, b.Country); err != nil {
			return nil, InputError(err) // the address's country is the buyer's
		}
	}
	if rb.Country != "" && rb.Country != b.Country {
		// A number given without its prefix stays the one read under the
		// country it was given with, the one the registry was asked about.
		b.VATNumber = b.QualifiedVATNumber()
		b.Country = rb.Country
		if rb.PostalCode == "" {
			b.PostalCode = "" // a new country makes the old postal code meaningless
		}
		if rb.Address == nil {
			b.Address = nil // and the old address
		}
	}
	if rb.PostalCode != "" {
		b.PostalCode = rb.PostalCode
	}
	if rb.Name != "" {
		b.Name = rb.Name
	}
	if rb.Evidence != nil {
		b.Evidence = rb.Evidence
	}
	if rb.Address != nil {
		a := *rb.Address
		a.Country = b.Country
		b.Address = &a
		if a.PostalCode != "" && rb.PostalCode == "" {
			b.PostalCode = a.PostalCode
		}
	}
	switch {
	case rb.BusinessStatus == vat.TreatmentB2C:
		b.VATNumber = ""
		return nil, nil
	case rb.VATNumber != "" && rb.VATNumber != b.VATNumber && rb.VATNumber != b.QualifiedVATNumber(): // not the number as read
		b.VATNumber = rb.VATNumber
		return nil, nil
	}
	if reg != nil && reg.Status != vies.StatusUnavailable {
		return reg, nil // a definitive answer about the same number still holds
	}
	return nil, nil
}

// ManualRefusal reports a manual determination the facts or the law refuse
// as a BAD_REQUEST naming the field of the resolution: the person who
// decides (vat.Manual.DecidedBy) is its resolvedBy.
func ManualRefusal(err error) error {
	field, detail := "/determination", err.Error()
	if me := (*vat.ManualError)(nil); errors.As(err, &me) {
		field, detail = strings.Replace(me.Field, "/determination/decidedBy", "/resolvedBy", 1), me.Detail
	}
	return &Error{Code: CodeBadRequest, Field: field, Detail: detail, Err: err}
}
