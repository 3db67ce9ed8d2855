package fiscalevent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// A fiscal event left MANUAL_REVIEW_REQUIRED (or waiting for an ECB rate,
// or without the invoice its sale needs, invoice_issuable) gets the same
// paths as a settlement: the registry's later answer about
// the buyer's VAT number, and a person's resolution, each make a new
// revision of the event (event type fiscal_event.revised), with a
// production receipt and invoice when the invariants now hold; the first
// entry stays in the log.

// EventRevised is the event type of a fiscal event's revisions.
const EventRevised = "fiscal_event.revised"

// pending reports whether a resolution can still change the event: its
// determination is a manual review, its rate was missing, or its invoice
// could not be issued (invoice_issuable: the customer's name or address,
// a national rate), as a settlement's record is then pending review.
func (ev *Event) pending() bool {
	return ev.Determination.Status != vat.StatusDetermined || fxMissing(ev) || slices.ContainsFunc(ev.Production.Invariants, func(inv Invariant) bool {
		return inv.Code == InvariantInvoiceIssuable && !inv.Holds
	})
}

func fxMissing(ev *Event) bool {
	for _, inv := range ev.Production.Invariants {
		if inv.Code == InvariantFXRateAvailable && !inv.Holds {
			return true
		}
	}
	return false
}

// inputOf rebuilds the validated input of a stored event, with the buyer's
// VAT number as the customer gave it, so that a prefix the engine supplied
// is noted again.
func inputOf(ev *Event) (input, error) {
	b := parties.BuyerFacts{Country: ev.Buyer.Country, BusinessStatus: ev.Buyer.BusinessStatus, VATNumber: cmp.Or(ev.Buyer.VATNumberAsGiven, ev.Buyer.VATNumber), Name: ev.Buyer.Name, PostalCode: ev.Buyer.PostalCode}
	p, err := ev.Payment.Payment(fiscal.BuyerFacts{Country: b.Country, PostalCode: b.PostalCode, VATNumber: b.VATNumber, Name: b.Name,
		SupplyKind: ev.Supply.Kind, Description: ev.Supply.Description, Evidence: ev.Buyer.Evidence, Address: ev.Buyer.Address})
	if err != nil {
		return input{}, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored fiscal event is unreadable", Err: err}
	}
	se := ev.Seller
	return input{p: p, buyer: b, seller: parties.SellerFacts{
		LegalName: se.LegalName, Country: se.Country, VATNumber: se.VATNumber, OtherEstablishments: se.OtherEstablishments,
		OverThreshold: se.OverThreshold, OptedForDestination: se.OptedForDestination, IsAccount: se.AccountSeller,
	}}, nil
}

// prior is the state a revision of ev follows; an event's first state
// carries no history, so its revision 1 is described from the event.
func prior(ev *Event) fiscal.Prior {
	history := ev.History
	if len(history) == 0 {
		status := fiscal.StatusProcessed
		if ev.pending() {
			status = fiscal.StatusPendingReview
		}
		first := fiscal.Revision{Revision: 1, EventType: EventRecorded, ReviewStatus: status, ReviewReasons: ev.Determination.Reasons,
			At: ev.CreatedAt, LedgerIndex: ev.Ledger.Index}
		if ev.Receipt != nil {
			first.ReceiptID = ev.Receipt.ID
		}
		history = []fiscal.Revision{first}
	}
	return fiscal.Prior{ID: ev.ID, CreatedAt: ev.CreatedAt, Revision: max(ev.Revision, 1), History: history}
}

// revise decides the event again on in and commits the revision.
// abandoned, when not empty, is the detail of vat_number_unverified for a
// registry that never answered the re-check (fiscal.Recheck.Abandoned).
func (s *Service) revise(ctx context.Context, acc fiscal.Account, ev *Event, in input, now time.Time, registry *vies.Result,
	determine func(vat.Input) vat.Determination, rev fiscal.Revision, claims []ledger.Claim, abandoned string, puts ...ledger.Put) (*Result, error) {
	d, nev, err := s.decide(ctx, acc, in, now, ev.Verification, registry, determine)
	if err != nil {
		return nil, err
	}
	if abandoned != "" {
		// The record's reasons and the event's determination (which
		// shares its classification's) say so, as a settlement's do.
		for _, reasons := range [][]vat.Reason{d.Record.ReviewReasons, d.Record.Classification.Reasons, nev.Determination.Reasons} {
			for i := range reasons {
				if reasons[i].Code == vat.ReasonVATNumberUnverified {
					reasons[i].Detail = abandoned
				}
			}
		}
	}
	d.Puts = append(d.Puts, puts...)
	if rev.Cause == fiscal.CauseResolution {
		d.SettleRecheck(ev.ID) // as a settlement's resolution does
	}
	return s.commit(ctx, ev, d, now, rev, claims)
}

// commit commits d, the event ev decided again, as its next revision.
func (s *Service) commit(ctx context.Context, ev *Event, d *fiscal.Draft, now time.Time, rev fiscal.Revision, claims []ledger.Claim) (*Result, error) {
	d.EventType = EventRevised
	stored, o, err := s.e.Revise(ctx, prior(ev), d, now, rev, claims)
	if err != nil {
		return nil, err
	}
	var out Event
	if err := json.Unmarshal(stored, &out); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
	}
	return &Result{Outcome: o, Event: &out, JSON: stored}, nil
}

// Resolve ends (or advances) the review of the account's fiscal event id,
// as fiscal.Books.Resolve does for a settlement: the resolution's buyer
// facts are applied (fiscal.ResolutionBuyer.Apply: the customer's address
// too, which a business sale's invoice states, Art. 226(5) Directive
// 2006/112/EC), or its manual determination taken (checked by
// vat.DetermineManually), and the event is decided again as a new revision,
// under the seller profile the event was recorded with (profile.go).
func (s *Service) Resolve(ctx context.Context, accountID, id string, res fiscal.Resolution, idempotencyKey string) (*Result, error) {
	b, err := s.e.Books(accountID)
	if err != nil {
		return nil, err
	}
	if err := wire.IdempotencyKey(idempotencyKey); err != nil {
		return nil, fiscal.InputError(err)
	}
	if res, err = res.Normalised(); err != nil {
		return nil, err
	}
	var claims []ledger.Claim
	fp := hash(struct {
		Kind, ID string
		R        fiscal.Resolution
		Clear    bool `json:",omitempty"`
	}{fiscal.ObjectFiscalEvent + "/resolve", id, res, res.Buyer.ClearsEvidence()})
	if idempotencyKey != "" {
		claims = append(claims, fiscal.IdempotencyClaim(accountID, idempotencyKey, fp))
	}
	// keyUsed answers a replay of the key with the event, and the key
	// used for another request (claimed, or bound to the record it
	// answered) with IDEMPOTENCY_CONFLICT; nil, nil when it is free.
	keyUsed := func() (*Result, error) {
		if idempotencyKey == "" {
			return nil, nil
		}
		holder, _, err := b.Lookup("", "", idempotencyKey, fp)
		if err != nil || holder == "" {
			return nil, err
		}
		// The first answer: the revision the key's resolution made, as
		// its entry stored it, not a later one (stored).
		ev, raw, err := entryEvent(b, id, holder)
		if err != nil {
			return nil, err
		}
		return &Result{Outcome: fiscal.Replayed, Event: ev, JSON: raw}, nil
	}
	if out, err := keyUsed(); out != nil || err != nil {
		return out, err
	}
	ev, _, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	if !ev.pending() {
		// The key's own request may have resolved the event since the
		// key was looked up: its replay, or its conflict, answers.
		if out, err := keyUsed(); out != nil || err != nil {
			return out, err
		}
		return nil, &fiscal.Error{Code: fiscal.CodeRecordNotPending, Detail: fmt.Sprintf(
			"fiscal event %s is %s with its rate and its invoice: only an event left for review can be resolved", id, ev.Determination.Status)}
	}
	in, err := inputOf(ev)
	if err != nil {
		return nil, err
	}
	if err := s.recordedProfile(ev.ID, &in); err != nil { // the profile the event was recorded with decides (profile.go)
		return nil, err
	}
	registry := ev.Buyer.Registry
	if rb := res.Buyer; rb != nil {
		bf := &in.buyer
		switch {
		case rb.BusinessStatus == vat.TreatmentB2C:
			bf.BusinessStatus = parties.BusinessStatusB2C
		case rb.VATNumber != "" && rb.VATNumber != bf.VATNumber:
			bf.BusinessStatus = parties.BusinessStatusB2B
		case rb.BusinessStatus == vat.TreatmentB2B:
			if bf.VATNumber == "" {
				return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/buyer/consumerVatNumber", Detail: "a business buyer (B2B) needs its VAT number"}
			}
			bf.BusinessStatus = parties.BusinessStatusB2B
		}
		// The facts are applied as a settlement's resolution applies
		// them, the customer's address (Art. 226(5)) included.
		if registry, err = rb.Apply(&in.p.Buyer, registry); err != nil {
			return nil, err
		}
		pb := in.p.Buyer
		bf.Country, bf.PostalCode, bf.Name, bf.VATNumber = pb.Country, pb.PostalCode, pb.Name, pb.VATNumber
	}
	if registry != nil && registry.Status == vies.StatusUnavailable {
		registry = nil // ask again
	}
	var determine func(vat.Input) vat.Determination
	var manualErr error
	if m, rates := res.Determination, s.e.Settings().Rates; m != nil {
		determine = func(vin vat.Input) vat.Determination {
			vin.Buyer.Business = in.buyer.BusinessStatus == parties.BusinessStatusB2B
			d, err := rates.DetermineManually(vin, vat.Manual{Regime: m.Regime, TaxingCountry: m.TaxingCountry, RatePercent: m.RatePercent, Reason: m.Reason, DecidedBy: res.ResolvedBy})
			if err != nil {
				manualErr = err
			}
			return d
		}
	}
	// A refused manual determination is found by deciding before writing.
	if determine != nil {
		d, _, err := s.decide(ctx, b.Account(), in, s.e.Now().UTC(), ev.Verification, registry, determine)
		if err != nil {
			return nil, err
		}
		if manualErr != nil {
			return nil, fiscal.ManualRefusal(manualErr)
		}
		if err := waitRefusal(d); err != nil {
			return nil, err
		}
	}
	return s.revise(ctx, b.Account(), ev, in, s.e.Now().UTC(), registry, determine,
		fiscal.Revision{Cause: fiscal.CauseResolution, ResolvedBy: res.ResolvedBy, Note: res.Note}, claims, "")
}

// recheck is the engine's registry re-check handler for fiscal events; it
// reports whether it revised the event.
func (s *Service) recheck(ctx context.Context, rc fiscal.Recheck, now time.Time) (bool, error) {
	ev, _, err := s.load(rc.RecordID)
	if err != nil {
		return false, err
	}
	if !ev.pending() || ev.Buyer.VATNumber != rc.VATNumber || !slices.ContainsFunc(ev.Determination.Reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonVATNumberUnverified }) {
		// A resolution, or another pass, settled the number while the
		// registry was asked; its write dequeued or replaced this
		// re-check.
		return false, nil
	}
	b, err := s.e.Books(ev.Account)
	if err != nil {
		return false, err
	}
	in, err := inputOf(ev)
	if err != nil {
		return false, err
	}
	if err := s.recordedProfile(ev.ID, &in); err != nil {
		return false, err
	}
	if p := rc.Seller; in.seller.IsAccount && p.Address.Country != "" {
		// The account's profile as the event was recorded with it, queued
		// with the re-check, as a settlement's re-check decides on the
		// profile as at the sale: a later change of the account must not
		// change an old sale. (A re-check queued before the profile was
		// queued carries only the event's facts: the profile kept with the
		// event decides, or without one the account's, profile.go.)
		in.seller.Profile = &p
	}
	abandoned := ""
	if rc.Abandoned {
		abandoned = fmt.Sprintf("the registry could not confirm %s in %d attempts over %s (last fault %s); review by a person is needed",
			rc.VATNumber, rc.Attempts, now.Sub(rc.Since).Round(time.Minute), rc.Registry.Fault)
	}
	_, err = s.revise(ctx, b.Account(), ev, in, now, rc.Registry, nil, fiscal.Revision{Cause: fiscal.CauseRegistryRecheck}, nil, abandoned, rc.Dequeue)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeRevisionConflict {
		return false, nil
	}
	return err == nil, err
}
