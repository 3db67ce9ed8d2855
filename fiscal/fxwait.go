package fiscal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// A settlement made before the ECB published the rate its date needs is
// stored PENDING_MANUAL_REVIEW with fx_rate_unavailable (the USD rate of
// its EUR amounts) or national_rate_unavailable (the rate of the national
// currency its VAT must also be stated in, Art. 230 Directive 2006/112/EC:
// CZK, DKK, HUF, PLN, RON, SEK, GBP): the engine never guesses a rate. It
// is also queued (bucket "fx-wait", in the record's own transaction), and
// RetryRates, called whenever the rate source learns new publications
// (package rates does so after each fetch), decides every queued record
// again once all its rates exist: a new revision with the EUR and national
// amounts, the receipt, the invoice when the record is now PROCESSED, and
// its event. Every revision keeps the queue in step with its state
// (syncFXWait): a revision still waiting stays queued, any other leaves it.

const bucketFXWait = "fx-wait" // record id → fxWaitItem JSON

type fxWaitItem struct {
	RecordID  string    `json:"recordId"`
	Account   string    `json:"account"`
	Timestamp time.Time `json:"timestamp"` // the settlement instant the rate is asked for
}

// waitsForRate tells whether a record waits for a rate not yet published:
// the USD rate of its EUR amounts or the national rate of its VAT.
func waitsForRate(reasons []vat.Reason) bool {
	return hasReason(reasons, ReasonFXRateUnavailable) || hasReason(reasons, invoicelaw.ReasonNationalRateUnavailable)
}

// queueFXWait adds the draft to the fx-wait queue when it lacks a rate.
// It runs after Issue: the national rate is looked up when the invoice is.
func queueFXWait(d *Draft, ts time.Time) error {
	if !waitsForRate(d.Record.ReviewReasons) {
		return nil
	}
	item, err := json.Marshal(fxWaitItem{RecordID: d.Record.ID, Account: d.Record.Account, Timestamp: ts})
	if err != nil {
		return err
	}
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketFXWait, Key: []byte(d.Record.ID), Value: item})
	return nil
}

// syncFXWait keeps the fx-wait queue in step with an issued revision of
// record id: queued while it waits for a rate, removed otherwise (a
// resolution, a registry answer or the rate itself decided it).
func syncFXWait(d *Draft, id string) error {
	d.Puts = slices.DeleteFunc(d.Puts, func(p ledger.Put) bool { return p.Bucket == bucketFXWait })
	if !waitsForRate(d.Record.ReviewReasons) {
		d.Puts = append(d.Puts, ledger.Put{Bucket: bucketFXWait, Key: []byte(id)})
		return nil
	}
	ts, err := time.Parse(time.RFC3339Nano, d.Record.Settlement.Timestamp)
	if err != nil {
		return &Error{Code: CodeInternal, Detail: "the record's settlement time cannot be read", Err: err}
	}
	return queueFXWait(d, ts)
}

// RetryRates decides again every settlement that waits for an ECB rate the
// rate source now has, each as a new revision, and returns how many were
// revised. Records whose rate is still missing stay queued.
func (e *Engine) RetryRates(ctx context.Context) (int, error) {
	var due []fxWaitItem
	err := e.ledger.View(func(tx ledger.Tx) error {
		return tx.Scan(bucketFXWait, nil, nil, false, func(k, v []byte) bool {
			var it fxWaitItem
			if json.Unmarshal(v, &it) == nil {
				due = append(due, it)
			}
			return true
		})
	})
	if err != nil {
		return 0, storeError(err)
	}
	done := 0
	for _, it := range due {
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		revised, err := e.retryRate(ctx, it)
		if err != nil {
			e.cfg.Logger.Error("re-deciding a record that waited for its rate", "record", it.RecordID, "err", err)
			continue
		}
		if revised {
			done++
		}
	}
	return done, nil
}

// ratesArrived tells whether every rate the waiting record prev needs is
// now known: the USD rate under the seller's Art. 91(2) policy and, for a
// determined supply whose VAT is also stated in a national currency, that
// currency's rate under its state's rule (NationalCurrencyReason, the
// same lookup the invoice makes).
func (e *Engine) ratesArrived(ctx context.Context, prev *Record, seller Seller, at time.Time) bool {
	policy := cmp.Or(seller.FXPolicy, e.cfg.FXPolicy)
	if _, err := e.cfg.FX.Rate(ctx, "USD", at, policy); err != nil {
		return false
	}
	reason, err := invoicelaw.NationalCurrencyReason(ctx, e.cfg.FX, policy, prev.Classification, seller.ForInvoiceLaw(), at)
	return err == nil && (reason == nil || reason.Code != invoicelaw.ReasonNationalRateUnavailable)
}

// retryRate appends the revision of one record whose rates have arrived.
func (e *Engine) retryRate(ctx context.Context, it fxWaitItem) (bool, error) {
	dequeue := ledger.Put{Bucket: bucketFXWait, Key: []byte(it.RecordID)}
	b, err := e.Books(it.Account)
	if err != nil {
		return false, err
	}
	prev, _, err := e.loadRecord(it.RecordID)
	if err != nil {
		return false, err
	}
	if prev.ReviewStatus != StatusPendingReview || !waitsForRate(prev.ReviewReasons) {
		// A resolution already decided it with the rate: nothing to do.
		return false, e.ledger.Update(func(tx ledger.Tx) error { return tx.Delete(dequeue.Bucket, dequeue.Key) })
	}
	seller := b.acc.Seller
	if !e.ratesArrived(ctx, prev, seller, it.Timestamp) {
		return false, nil // still not published
	}
	p, err := paymentOf(prev)
	if err != nil {
		return false, err
	}
	now := e.Now().UTC()
	d, err := e.Prepare(ctx, prev.Account, Supply{Payment: p, Seller: seller, Verification: prev.Verification, Registry: prev.Buyer.Registry, AccountTotals: true}, now)
	if err != nil {
		return false, err
	}
	if hasReason(d.Record.ReviewReasons, ReasonFXRateUnavailable) {
		return false, nil // the source answered a moment ago but not now: next time
	}
	_, err = e.revise(ctx, prev, d, seller, now, Revision{Cause: CauseRatePublished}, nil)
	var fe *Error
	if errors.As(err, &fe) && fe.Code == CodeRevisionConflict {
		return false, nil // revised concurrently; the next pass sees its state
	}
	return err == nil, err
}
