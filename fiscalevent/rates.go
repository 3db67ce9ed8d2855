package fiscalevent

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// A fiscal event recorded before the ECB published the rate its date needs
// (fx_rate_available does not hold), or whose invoice waits for the rate of
// the national currency its VAT must also be stated in (Art. 230 Directive
// 2006/112/EC; invoice_issuable fails with national_rate_unavailable),
// waits for the rate as a settlement does: it is queued in the engine's
// queue of records waiting for a rate (fiscal.BucketFXWait, in the event's
// own transaction, with object fiscal_event), every revision keeps the
// queue in step with its state, and package rates decides it again once
// the rate is published (RetryRate). An event decided while the engine's
// VAT rate table did not cover its day (date_outside_rate_table) is queued
// likewise in fiscal.BucketRateTableWait, and decided again once an engine
// starts with a table that covers it (RetryRateTable). An event of the
// account's own sale that needs a registration its recorded profile does
// not state for its day (seller_not_registered) is queued in
// fiscal.BucketRegistrationWait, and decided again once the account's
// registrations change (RetryRegistrations): a registration may be stated
// from a day already past (Art. 57d Implementing Regulation (EU) No
// 282/2011, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32011R0282).

// waitItem is an entry of fiscal.BucketFXWait for a fiscal event.
type waitItem struct {
	RecordID  string    `json:"recordId"`
	Account   string    `json:"account"`
	Timestamp time.Time `json:"timestamp"` // the payment instant the rate is asked for
	Object    string    `json:"object"`
	Table     string    `json:"table,omitempty"` // fiscal.BucketRateTableWait: the version of the table that decided it
}

// syncWait adds to the writes of d, a state of a fiscal event paid at ts,
// its entry of the queue bucket (fiscal.BucketFXWait, or
// fiscal.BucketRateTableWait with the version of the table that decided
// it) when waiting, or the entry's removal.
func syncWait(d *fiscal.Draft, bucket string, ts time.Time, table string, waiting bool) error {
	put := ledger.Put{Bucket: bucket, Key: []byte(d.Record.ID)}
	if waiting {
		v, err := json.Marshal(waitItem{RecordID: d.Record.ID, Account: d.Record.Account, Timestamp: ts, Object: fiscal.ObjectFiscalEvent, Table: table})
		if err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
		}
		put.Value = v
	}
	d.Puts = append(d.Puts, put)
	return nil
}

// waits tells whether the draft of a fiscal event waits for a rate.
func waits(d *fiscal.Draft) bool {
	return slices.ContainsFunc(d.Puts, func(p ledger.Put) bool { return p.Bucket == fiscal.BucketFXWait && p.Value != nil })
}

// rateWait is the reason a state waits for a rate (nil: it does not).
func rateWait(reasons []vat.Reason) *vat.Reason {
	for _, r := range reasons {
		if r.Code == fiscal.ReasonFXRateUnavailable || r.Code == invoicelaw.ReasonNationalRateUnavailable {
			return &r
		}
	}
	return nil
}

// waitsForRate tells whether the stored event waits for a rate: the ECB
// rate of its EUR amounts, or the national rate of its invoice.
func (ev *Event) waitsForRate() bool {
	return fxMissing(ev) || slices.ContainsFunc(ev.Production.Invariants, func(inv Invariant) bool {
		return inv.Code == InvariantInvoiceIssuable && !inv.Holds && strings.Contains(inv.Detail, invoicelaw.ReasonNationalRateUnavailable+":")
	})
}

// waitRefusal refuses a person's determination of an event whose revision
// would still wait for a rate: the revision made once the rate is out
// decides by the rules again (RetryRate), so the determination would be
// dropped; the person determines once the rate is published.
func waitRefusal(d *fiscal.Draft) error {
	if !waits(d) {
		return nil
	}
	reasons := d.Record.ReviewReasons
	if fxReason(reasons) == nil {
		reasons = []vat.Reason{{Code: invoicelaw.ReasonNationalRateUnavailable}} // the invoice's (decide)
	}
	return fiscal.ManualRefusal(invoicelaw.WaitRefusal(reasons, fiscal.ReasonFXRateUnavailable))
}

// RetryRate decides again the fiscal event id of engine e, queued as
// waiting for a rate (fiscal.BucketFXWait), on its own facts, with the
// rates the engine's source has now and under the seller profile the event
// was recorded with (profile.go): when no rate is missing any more it
// commits the decision as the event's next revision (cause
// fiscal.CauseRatePublished; a production receipt and invoice when the
// invariants now hold) and reports true; while one still is, it writes
// nothing. A concurrent revision of the event is left to decide it (false,
// nil). Package rates calls it for the queue's fiscal events.
func RetryRate(ctx context.Context, e *fiscal.Engine, id string) (bool, error) {
	return redecide(ctx, e, id, fiscal.BucketFXWait, (*Event).waitsForRate, func(d *fiscal.Draft, _ *Event) bool { return waits(d) }, fiscal.CauseRatePublished, nil)
}

// RetryRegistrations decides again the fiscal event id of engine e, queued
// as pending because its seller, the account's own, was not registered
// where it is taxed (fiscal.BucketRegistrationWait), by the rules on its
// own facts under the seller profile it was recorded with, with the
// account's registrations now stated, when they differ from that
// profile's and the account states a list: when they cover its day it
// commits the decision as the event's next revision (cause
// fiscal.CauseRegistrationsChanged; still in review for any other reason
// it has) and reports true; otherwise it writes nothing. Package rates
// calls it for the queue's fiscal events (rates.RetryRegistrations).
func RetryRegistrations(ctx context.Context, e *fiscal.Engine, id string) (bool, error) {
	waiting := func(ev *Event) bool { return ev.Seller.AccountSeller && notRegistered(ev.Determination.Reasons) }
	still := func(_ *fiscal.Draft, ev *Event) bool { return notRegistered(ev.Determination.Reasons) }
	return redecide(ctx, e, id, fiscal.BucketRegistrationWait, waiting, still, fiscal.CauseRegistrationsChanged, func(in *input, account fiscal.Seller) bool {
		if in.seller.Profile == nil {
			return true // recorded before the profile was kept: decided under the account's
		}
		if account.Registrations == nil || reflect.DeepEqual(in.seller.Profile.Registrations, account.Registrations) {
			return false // nothing it waits for has changed
		}
		p := *in.seller.Profile
		p.Registrations = slices.Clone(account.Registrations)
		in.seller.Profile = &p
		return true
	})
}

func notRegistered(reasons []vat.Reason) bool {
	return slices.ContainsFunc(reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonSellerNotRegistered })
}

// RetryRateTable decides again the fiscal event id of engine e, queued as
// decided while the engine's VAT rate table did not cover its day
// (fiscal.BucketRateTableWait), by the rules on its own facts with the
// engine's table and under the seller profile the event was recorded with:
// when the table now covers its day it commits the decision as the event's
// next revision (cause fiscal.CauseRateTableLoaded; still pending for any
// other reason it has, and then queued for those) and reports true; while
// the table does not, it writes nothing. An event a person resolved is
// left to that person: it leaves the queue untouched. Package rates calls
// it for the queue's fiscal events (rates.RetryRateTable).
func RetryRateTable(ctx context.Context, e *fiscal.Engine, id string) (bool, error) {
	waiting := func(ev *Event) bool {
		return outsideTable(ev.Determination.Reasons) && !slices.ContainsFunc(ev.History, func(r fiscal.Revision) bool { return r.Cause == fiscal.CauseResolution })
	}
	return redecide(ctx, e, id, fiscal.BucketRateTableWait, waiting, func(_ *fiscal.Draft, ev *Event) bool { return outsideTable(ev.Determination.Reasons) }, fiscal.CauseRateTableLoaded, nil)
}

func outsideTable(reasons []vat.Reason) bool {
	return slices.ContainsFunc(reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonDateOutsideRateTable })
}

// redecide decides again the fiscal event id queued in bucket while
// waiting(event) holds (else it only leaves the queue), and commits the
// decision as its next revision with cause unless still(draft, event) says
// it still waits. profile, when not nil, sets the profile to decide under
// from the recorded one and the account's, and says whether anything it
// waits for changed (else nothing is decided).
func redecide(ctx context.Context, e *fiscal.Engine, id, bucket string, waiting func(*Event) bool, still func(*fiscal.Draft, *Event) bool, cause string,
	profile func(*input, fiscal.Seller) bool) (bool, error) {
	s := &Service{e: e}
	ev, _, err := s.load(id)
	if err != nil {
		return false, err
	}
	if ev.Object != fiscal.ObjectFiscalEvent {
		return false, notFound("fiscal event " + shown.Bare(id))
	}
	if !waiting(ev) {
		// Nothing waits (a queue entry its revision should have removed).
		return false, e.Ledger().Update(func(tx ledger.Tx) error { return tx.Delete(bucket, []byte(id)) })
	}
	b, err := e.Books(ev.Account)
	if err != nil {
		return false, err
	}
	in, err := inputOf(ev)
	if err != nil {
		return false, err
	}
	if err := s.recordedProfile(ev.ID, &in); err != nil { // the profile the event was recorded with decides (profile.go)
		return false, err
	}
	if profile != nil && !profile(&in, b.Account().Seller) {
		return false, nil
	}
	now := e.Now().UTC()
	d, nev, err := s.decide(ctx, b.Account(), in, now, ev.Verification, ev.Buyer.Registry, nil)
	if err != nil || still(d, nev) {
		return false, err // still waiting: next time
	}
	d.KeepRecheck() // its window runs from the event
	_, err = s.commit(ctx, ev, d, now, fiscal.Revision{Cause: cause}, nil)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeRevisionConflict {
		return false, nil // revised concurrently; its write kept the queue in step
	}
	return err == nil, err
}
