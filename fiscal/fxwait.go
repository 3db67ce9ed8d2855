package fiscal

import (
	"encoding/json"
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
// is also queued (bucket BucketFXWait, in the record's own transaction),
// and package rates, whenever the rate source learns new publications,
// decides every queued record again once all its rates exist: a new
// revision (Books.Redraft, Books.Revise) with the EUR and national amounts,
// the receipt, the invoice when the record is now PROCESSED, and its event.
// Every revision keeps the queue in step with its state (syncFXWait): a
// revision still waiting stays queued, any other leaves it.

// BucketFXWait is the ledger side bucket of settlements waiting for a rate:
// record id → {"recordId", "account", "timestamp"} (JSON; timestamp is the
// settlement instant the rate is asked for). Package fiscalevent queues its
// events here too, with "object": "fiscal_event" (fiscalevent.RetryRate).
const BucketFXWait = "fx-wait"

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
	d.Puts = append(d.Puts, ledger.Put{Bucket: BucketFXWait, Key: []byte(d.Record.ID), Value: item})
	return nil
}

// syncFXWait keeps the fx-wait queue in step with an issued revision of
// record id: queued while it waits for a rate, removed otherwise (a
// resolution, a registry answer or the rate itself decided it).
func syncFXWait(d *Draft, id string) error {
	d.Puts = slices.DeleteFunc(d.Puts, func(p ledger.Put) bool { return p.Bucket == BucketFXWait })
	if !waitsForRate(d.Record.ReviewReasons) {
		d.Puts = append(d.Puts, ledger.Put{Bucket: BucketFXWait, Key: []byte(id)})
		return nil
	}
	ts, err := time.Parse(time.RFC3339Nano, d.Record.Settlement.Timestamp)
	if err != nil {
		return &Error{Code: CodeInternal, Detail: "the record's settlement time cannot be read", Err: err}
	}
	return queueFXWait(d, ts)
}
