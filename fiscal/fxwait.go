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
// Every revision keeps the queue in step with its state (syncWaits): a
// revision still waiting stays queued, any other leaves it.

const (
	// BucketFXWait is the ledger side bucket of settlements waiting for a
	// rate: record id → {"recordId", "account", "timestamp"} (JSON;
	// timestamp is the settlement instant the rate is asked for). Package
	// fiscalevent queues its events here too, with "object": "fiscal_event"
	// (fiscalevent.RetryRate).
	BucketFXWait = "fx-wait"
	// BucketRateTableWait is the queue of records decided while the
	// engine's VAT rate table did not cover their day
	// (vat.ReasonDateOutsideRateTable), written the same way, with
	// "table": the version of the table that decided it. Package rates
	// decides them again (rates.RetryRateTable) once an engine starts with
	// a table that covers the day; every revision keeps it in step.
	BucketRateTableWait = "rate-table-wait"
	// BucketRegistrationWait is the queue of settlements pending review
	// because the seller is not registered where they are taxed
	// (vat.ReasonSellerNotRegistered), written the same way. A special
	// scheme may apply from a first supply already made when the seller
	// informs its member state by the 10th day of the following month
	// (Art. 57d Implementing Regulation (EU) No 282/2011): package rates
	// decides them again (rates.RetryRegistrations) once the account's
	// registrations change; every revision keeps it in step.
	BucketRegistrationWait = "registration-wait"
)

type fxWaitItem struct {
	RecordID  string    `json:"recordId"`
	Account   string    `json:"account"`
	Timestamp time.Time `json:"timestamp"`       // the settlement instant the rate is asked for
	Table     string    `json:"table,omitempty"` // BucketRateTableWait: the version of the table that decided it
}

// waits tells whether a record waits for a rate not yet published (the USD
// rate of its EUR amounts or the national rate of its VAT), whether for
// a rate table that covers its day and whether for a registration of the
// seller that covers it, in one pass over its reasons.
func waits(reasons []vat.Reason) (rate, table, registration bool) {
	for _, r := range reasons {
		rate = rate || r.Code == ReasonFXRateUnavailable || r.Code == invoicelaw.ReasonNationalRateUnavailable
		table = table || r.Code == vat.ReasonDateOutsideRateTable
		registration = registration || r.Code == vat.ReasonSellerNotRegistered
	}
	return rate, table, registration
}

// queueWaits adds the draft of record id to the fx-wait queue when it
// lacks a rate, and to the rate-table queue when its day is outside table
// t; a revision (revised) leaves the queue it no longer waits in. It runs
// after Issue: the national rate is looked up when the invoice is.
func queueWaits(d *Draft, id string, ts time.Time, t *vat.RateTable, revised bool) error {
	rate, table, registration := waits(d.Record.ReviewReasons)
	for _, q := range [...]struct {
		on            bool
		bucket, table string
	}{{rate, BucketFXWait, ""}, {table, BucketRateTableWait, t.Version()}, {registration, BucketRegistrationWait, ""}} {
		var v []byte
		if q.on {
			var err error
			if v, err = json.Marshal(fxWaitItem{RecordID: id, Account: d.Record.Account, Timestamp: ts, Table: q.table}); err != nil {
				return err
			}
		}
		if q.on || revised {
			d.Puts = append(d.Puts, ledger.Put{Bucket: q.bucket, Key: []byte(id), Value: v})
		}
	}
	return nil
}

// syncWaits keeps the queues in step with an issued revision of record
// id: queued while it waits, removed otherwise (a resolution, a registry
// answer, the rate, the table or the registration itself decided it).
func syncWaits(d *Draft, id string, t *vat.RateTable) error {
	d.Puts = slices.DeleteFunc(d.Puts, func(p ledger.Put) bool {
		return p.Bucket == BucketFXWait || p.Bucket == BucketRateTableWait || p.Bucket == BucketRegistrationWait
	})
	ts, err := time.Parse(time.RFC3339Nano, d.Record.Settlement.Timestamp)
	if rate, table, _ := waits(d.Record.ReviewReasons); err != nil && (rate || table) {
		return &Error{Code: CodeInternal, Detail: "the record's settlement time cannot be read", Err: err}
	}
	return queueWaits(d, id, ts, t, true)
}
