package rates

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// A VAT rate table vouches for the days of its coverage only: a supply on
// a later day is stored PENDING_MANUAL_REVIEW (date_outside_rate_table),
// never charged at a guessed rate, since member states change rates in
// their budget laws (the rate is the one in force when the chargeable
// event occurs, Art. 63 and 93 Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
// The engine queues such a record in its own transaction
// (fiscal.BucketRateTableWait, with the version of the table that decided
// it); when an engine starts with a table that covers the day (the
// server's -vat-rates, fiscal.Config.Rates), RetryRateTable decides it
// again by the rules.
//
// Why a queue and not a scan of the records pending review: the queue
// holds only these records, is written at decision time by the one
// transaction that stores the record (so it is never out of step, across
// crashes too), and a start whose table is the one that decided an entry
// skips it without reading the record; a scan would read every pending
// record at every start.

// RetryRateTable decides again, by the rules and with the engine's VAT
// rate table, every settlement and fiscal event of e that was decided
// while the table in use did not cover its day (date_outside_rate_table,
// queue fiscal.BucketRateTableWait), each whose day the table now covers
// as a new revision (cause fiscal.CauseRateTableLoaded): PROCESSED with its
// invoice and receipt when nothing else is missing (settlement.processed,
// fiscal_event.revised), else still pending for its other reasons (and
// queued for them: a missing ECB rate is re-decided by Retry). It returns
// how many were revised. Entries queued by a table of the engine's own
// version are skipped unread (the same table decides the same); records
// the table still does not cover stay queued; a record a person resolved
// (fiscal.CauseResolution) is never revised here, only dequeued: its
// review is that person's. Two servers sharing a log may both run it: a
// record's revision is claimed once (REVISION_CONFLICT for the other,
// which skips it).
func RetryRateTable(ctx context.Context, e *fiscal.Engine) (int, error) {
	version := e.Settings().Rates.Version()
	return walkQueue(ctx, e, fiscal.BucketRateTableWait, func(it queued) bool { return it.Table != version }, retryTable, "re-deciding a record decided outside the VAT rate table")
}

// RetryRateTableAtStart runs RetryRateTable once, as the engine's
// background work: the table an engine starts with is the one a newer
// table reaches it by (the server's -vat-rates). Every replica runs it,
// without a lease, since the replica that started with the newer table
// must be the one to decide (a revision is claimed once). A nil logger is
// the engine's.
func RetryRateTableAtStart(e *fiscal.Engine, logger *slog.Logger) {
	if logger == nil {
		logger = e.Settings().Logger
	}
	onceInBackground(e, func(ctx context.Context) {
		n, err := RetryRateTable(ctx, e)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("re-deciding records decided outside the VAT rate table", "err", err)
		case n > 0:
			logger.Info("records decided with the VAT rate table now loaded", "table", e.Settings().Rates.Version(), "revised", n)
		}
	})
}

// retryTable appends the revision of one record the engine's table may
// now cover.
func retryTable(ctx context.Context, e *fiscal.Engine, it queued) (bool, error) {
	if it.Object == fiscal.ObjectFiscalEvent {
		return fiscalevent.RetryRateTable(ctx, e, it.RecordID)
	}
	b, err := e.Books(it.Account)
	if err != nil {
		return false, err
	}
	prev, _, err := b.Record(ctx, it.RecordID)
	if err != nil {
		return false, err
	}
	if prev.ReviewStatus != fiscal.StatusPendingReview || !hasReason(prev.ReviewReasons, vat.ReasonDateOutsideRateTable) ||
		slices.ContainsFunc(prev.History, func(r fiscal.Revision) bool { return r.Cause == fiscal.CauseResolution }) {
		// Decided since, or a person's to decide: nothing to do.
		return false, e.Ledger().Update(func(tx ledger.Tx) error { return tx.Delete(fiscal.BucketRateTableWait, []byte(it.RecordID)) })
	}
	seller, err := b.SupplySeller(prev) // the profile of the sale, not a later one
	if err != nil {
		return false, err
	}
	now := e.Now().UTC()
	d, err := b.Redraft(ctx, prev, seller, nil, now)
	if err != nil {
		return false, err
	}
	if hasReason(d.Record.ReviewReasons, vat.ReasonDateOutsideRateTable) {
		return false, nil // this table does not cover it either
	}
	d.KeepRecheck() // its window runs from the sale
	_, err = b.Revise(ctx, prev, d, seller, now, fiscal.Revision{Cause: fiscal.CauseRateTableLoaded})
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeRevisionConflict {
		return false, nil // revised concurrently; the other writer kept the queue in step
	}
	return err == nil, err
}
