package rates

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
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
	return walkQueue(ctx, e, tableQueue(e.Settings().Rates.Version()))
}

// tableQueue is the queue of records decided outside the VAT rate table,
// for an engine whose table has version: entries its own table decided
// are not read, and a record a person resolved only leaves the queue.
func tableQueue(version string) waitQueue {
	return waitQueue{
		bucket: fiscal.BucketRateTableWait, due: func(it queued) bool { return it.Table != version },
		waits: func(r *fiscal.Record) bool {
			return hasReason(r.ReviewReasons, vat.ReasonDateOutsideRateTable) &&
				!slices.ContainsFunc(r.History, func(h fiscal.Revision) bool { return h.Cause == fiscal.CauseResolution })
		},
		missing: vat.ReasonDateOutsideRateTable, cause: fiscal.CauseRateTableLoaded, event: fiscalevent.RetryRateTable,
		what: "re-deciding a record decided outside the VAT rate table",
	}
}

// RetryRateTableInBackground runs RetryRateTable as the engine's
// background work: once at start, since the table an engine starts with
// is the one a newer table reaches it by (the server's -vat-rates), and,
// on a log shared with other replicas, again every minute: during a
// rolling deploy the replicas still on the older table go on queueing
// records for days it does not cover after the newer one started, and
// nothing else would decide those until the next start. A walk reads the
// queue's entries only; entries its own table decided are skipped unread,
// so a replica whose table is the newest pays a scan of a short bucket.
// Every replica runs it, without a lease, since the replica with the
// newer table must be the one to decide (a revision is claimed once). A
// nil logger is the engine's.
func RetryRateTableInBackground(e *fiscal.Engine, logger *slog.Logger) {
	retryRateTableEvery(e, logger, rateTableRewalk)
}

// RetryRateTableAtStart is RetryRateTableInBackground, its name before
// replicas walked the queue again.
//
// Deprecated: use RetryRateTableInBackground.
func RetryRateTableAtStart(e *fiscal.Engine, logger *slog.Logger) {
	RetryRateTableInBackground(e, logger)
}

// rateTableRewalk is how often a replica sharing its log walks the queue
// of records decided outside the VAT rate table again.
const rateTableRewalk = time.Minute

func retryRateTableEvery(e *fiscal.Engine, logger *slog.Logger, every time.Duration) {
	if logger == nil {
		logger = e.Settings().Logger
	}
	onceInBackground(e, func(ctx context.Context) {
		var tick <-chan time.Time // nil: once
		if e.Ledger().Shared() {
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for {
			n, err := RetryRateTable(ctx, e)
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Error("re-deciding records decided outside the VAT rate table", "err", err)
			case n > 0:
				logger.Info("records decided with the VAT rate table now loaded", "table", e.Settings().Rates.Version(), "revised", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
	})
}
