package fiscal

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// A settlement made before the ECB published the rate its date needs is
// stored PENDING_MANUAL_REVIEW with fx_rate_unavailable: the engine never
// guesses a rate. It is also queued (bucket "fx-wait", in the record's own
// transaction), and RetryRates, called whenever the rate source learns new
// publications (package rates does so after each fetch), decides every
// queued record again once its rate exists: a new revision with the EUR
// amounts, the receipt, the invoice when the record is now PROCESSED, and
// its event.

const bucketFXWait = "fx-wait" // record id → fxWaitItem JSON

type fxWaitItem struct {
	RecordID  string    `json:"recordId"`
	Account   string    `json:"account"`
	Timestamp time.Time `json:"timestamp"` // the settlement instant the rate is asked for
}

// queueFXWait adds the draft to the fx-wait queue when it lacks its rate.
func queueFXWait(d *Draft, ts time.Time) error {
	if !hasReason(d.Record.ReviewReasons, ReasonFXRateUnavailable) {
		return nil
	}
	item, err := json.Marshal(fxWaitItem{RecordID: d.Record.ID, Account: d.Record.Account, Timestamp: ts})
	if err != nil {
		return err
	}
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketFXWait, Key: []byte(d.Record.ID), Value: item})
	return nil
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
		if _, err := e.cfg.FX.Rate(ctx, "USD", it.Timestamp, e.cfg.FXPolicy); err != nil {
			continue // still not published
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

// retryRate appends the revision of one record whose rate has arrived.
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
	if prev.ReviewStatus != StatusPendingReview || !hasReason(prev.ReviewReasons, ReasonFXRateUnavailable) {
		// A resolution already decided it with the rate: nothing to do.
		return false, e.ledger.Update(func(tx ledger.Tx) error { return tx.Delete(dequeue.Bucket, dequeue.Key) })
	}
	p, err := paymentOf(prev)
	if err != nil {
		return false, err
	}
	now := e.Now().UTC()
	seller := b.acc.Seller
	d, err := e.Prepare(ctx, prev.Account, Supply{Payment: p, Seller: seller, Verification: prev.Verification, Registry: prev.Buyer.Registry, AccountTotals: true}, now)
	if err != nil {
		return false, err
	}
	if hasReason(d.Record.ReviewReasons, ReasonFXRateUnavailable) {
		return false, nil // the source answered a moment ago but not now: next time
	}
	d.Puts = append(d.Puts, dequeue)
	_, err = e.revise(ctx, prev, d, seller, now, Revision{Cause: CauseRatePublished}, nil)
	var fe *Error
	if errors.As(err, &fe) && fe.Code == CodeRevisionConflict {
		return false, nil // revised concurrently; the next pass sees its state
	}
	return err == nil, err
}
