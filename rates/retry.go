package rates

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// queued is an entry of the engine's queue of settlements waiting for a
// rate (fiscal.BucketFXWait) or for a VAT rate table that covers their
// day (fiscal.BucketRateTableWait).
type queued struct {
	RecordID  string    `json:"recordId"`
	Account   string    `json:"account"`
	Timestamp time.Time `json:"timestamp"` // the settlement instant the rate is asked for
	// Object is the kind of record: "" for a settlement, or
	// fiscal.ObjectFiscalEvent (fiscalevent.RetryRate decides those).
	Object string `json:"object,omitempty"`
	// Table is the version of the VAT rate table that decided a record
	// of fiscal.BucketRateTableWait.
	Table string `json:"table,omitempty"`
}

// Retry decides again every settlement and fiscal event of e that waits for an ECB rate the
// engine's rate source now has, each as a new revision (cause
// fiscal.CauseRatePublished), and returns how many were revised. Records
// whose rate is still missing stay queued. The Service calls it after each
// refresh; a host that keeps its rates current another way may call it too.
func Retry(ctx context.Context, e *fiscal.Engine) (int, error) {
	return walkQueue(ctx, e, rateQueue())
}

// waitQueue is one queue of records the engine decides again by itself
// once what they wait for arrives: the ECB rate (rateQueue) or a VAT rate
// table that covers their day (tableQueue).
type waitQueue struct {
	bucket string
	due    func(queued) bool // worth reading the record
	// waits: the record still waits here (else it leaves the queue);
	// arrived: what it waits for is there now; missing: the reason a
	// redraft still gives when it is not.
	waits   func(*fiscal.Record) bool
	arrived func(context.Context, fiscal.Config, *fiscal.Record, fiscal.Seller, time.Time) bool
	missing string
	cause   string
	event   func(context.Context, *fiscal.Engine, string) (bool, error) // a fiscal event's revision; nil: none is queued here
	what    string                                                      // the log line of a failure
	// profile, when not nil, is the profile to decide a record under,
	// from the one kept with it and the account's, and whether it is
	// worth deciding again (registrationQueue).
	profile func(kept, account fiscal.Seller) (fiscal.Seller, bool)
}

// rateQueue is the queue of records waiting for an ECB (or national) rate.
func rateQueue() waitQueue {
	return waitQueue{
		bucket: fiscal.BucketFXWait, due: func(queued) bool { return true },
		waits: func(r *fiscal.Record) bool { return waitsForRate(r.ReviewReasons) }, arrived: arrived,
		missing: fiscal.ReasonFXRateUnavailable, cause: fiscal.CauseRatePublished, event: fiscalevent.RetryRate,
		what: "re-deciding a record that waited for its rate",
	}
}

// walkQueue reads the entries of q that are due, then re-decides each
// (redecide), in order, logging and skipping one that fails, and returns
// how many were revised.
func walkQueue(ctx context.Context, e *fiscal.Engine, q waitQueue) (int, error) {
	var due []queued
	err := e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(q.bucket, nil, nil, false, func(k, v []byte) bool {
			var it queued
			if json.Unmarshal(v, &it) == nil && q.due(it) {
				due = append(due, it)
			}
			return true
		})
	})
	if err != nil {
		return 0, err
	}
	done := 0
	for _, it := range due {
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		revised, err := redecide(ctx, e, q, it)
		if err != nil {
			e.Settings().Logger.Error(q.what, "record", it.RecordID, "err", err)
			continue
		}
		if revised {
			done++
		}
	}
	return done, nil
}

// arrived tells whether every rate the waiting record prev needs is now
// known: the USD rate under the seller's Art. 91(2) policy and, for a
// determined supply whose VAT is also stated in a national currency, that
// currency's rate under its state's rule (invoicelaw.NationalCurrencyReason,
// the same lookup the invoice makes). Both are asked for the day recording
// takes: under the "rate of the day" the supply's calendar day in the
// taxing state (fx.RateOfTheDay; Art. 91(2) third subparagraph Directive
// 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112),
// not the UTC date of the payment.
func arrived(ctx context.Context, cfg fiscal.Config, prev *fiscal.Record, seller fiscal.Seller, at time.Time) bool {
	policy := cmp.Or(seller.FXPolicy, cfg.FXPolicy)
	rateAt, _ := fx.RateOfTheDay(policy, at, prev.Classification.SupplyDate)
	if _, err := cfg.FX.Rate(ctx, "USD", rateAt, policy); err != nil {
		return false
	}
	reason, err := invoicelaw.NationalCurrencyReason(ctx, cfg.FX, policy, prev.Classification, seller.ForInvoiceLaw(), at)
	return err == nil && (reason == nil || reason.Code != invoicelaw.ReasonNationalRateUnavailable)
}

// redecide appends the revision of one record of q whose wait may be
// over: a record decided since (or, for q's own reason, resolved) leaves
// the queue; one whose wait is not over stays.
func redecide(ctx context.Context, e *fiscal.Engine, q waitQueue, it queued) (bool, error) {
	if it.Object == fiscal.ObjectFiscalEvent {
		if q.event == nil {
			return false, nil
		}
		return q.event(ctx, e, it.RecordID)
	}
	b, err := e.Books(it.Account)
	if err != nil {
		return false, err
	}
	prev, _, err := b.Record(ctx, it.RecordID)
	if err != nil {
		return false, err
	}
	if prev.ReviewStatus != fiscal.StatusPendingReview || !q.waits(prev) {
		// Decided since, or a person's to decide: nothing to do.
		return false, e.Ledger().Update(func(tx ledger.Tx) error { return tx.Delete(q.bucket, []byte(it.RecordID)) })
	}
	seller, err := b.SupplySeller(prev) // the profile of the sale, not a later one
	if err != nil {
		return false, err
	}
	if q.profile != nil {
		var changed bool
		if seller, changed = q.profile(seller, b.Account().Seller); !changed {
			return false, nil // nothing it waits for has changed
		}
	}
	if q.arrived != nil && !q.arrived(ctx, e.Settings(), prev, seller, it.Timestamp) {
		return false, nil // still not published
	}
	now := e.Now().UTC()
	d, err := b.Redraft(ctx, prev, seller, nil, now)
	if err != nil {
		return false, err
	}
	if hasReason(d.Record.ReviewReasons, q.missing) {
		return false, nil // not there after all (a source that answered a moment ago, a table that does not cover it either)
	}
	d.KeepRecheck() // its window runs from the sale
	_, err = b.Revise(ctx, prev, d, seller, now, fiscal.Revision{Cause: q.cause})
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeRevisionConflict {
		return false, nil // revised concurrently; the other writer kept the queue in step
	}
	return err == nil, err
}

// waitsForRate tells whether a record waits for a rate not yet published:
// the USD rate of its EUR amounts or the national rate of its VAT.
func waitsForRate(reasons []vat.Reason) bool {
	return hasReason(reasons, fiscal.ReasonFXRateUnavailable) || hasReason(reasons, invoicelaw.ReasonNationalRateUnavailable)
}

func hasReason(reasons []vat.Reason, code string) bool {
	return slices.ContainsFunc(reasons, func(r vat.Reason) bool { return r.Code == code })
}
