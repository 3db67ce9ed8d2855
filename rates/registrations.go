package rates

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/vat"
)

// A settlement whose treatment needs a registration the seller's profile
// does not state for its day of supply is stored PENDING_MANUAL_REVIEW
// (seller_not_registered), and decided again, like every pending
// settlement, under the profile kept with it (a later change of the
// account must not change an old sale, fiscal.Books.SupplySeller). But a
// registration is dated, and may be stated from a day already past: the
// Union and non-Union schemes apply from the first supply when the seller
// informs its member state of identification by the 10th day of the month
// after it (Art. 57d Implementing Regulation (EU) No 282/2011,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32011R0282),
// and a national identification from the date the member state gives.
// Under the kept profile such a sale could never be decided: a person's
// resolution, and a manual determination, were refused for the same
// missing registration. The engine queues it (fiscal.BucketRegistrationWait,
// in the record's own transaction), and RetryRegistrations decides it
// again once the account's registrations differ from the kept profile's.

// RetryRegistrations decides again, by the rules, every settlement of e
// pending review because the seller was not registered where it is taxed
// (vat.ReasonSellerNotRegistered, queue fiscal.BucketRegistrationWait)
// whose account now states other registrations than the profile kept with
// it: under that profile (its name, address and every other fact of the
// sale) with the account's registrations, the seller's statement of which
// applied on which day. A sale they now cover becomes a new revision
// (cause fiscal.CauseRegistrationsChanged): PROCESSED with its invoice and
// receipt when nothing else is missing, else pending for its other
// reasons, with the registrations kept. A sale they still do not cover
// stays pending and queued, unrevised; an account that states no list
// (registrations not checked) decides nothing here. It returns how many
// were revised. The fiscal events of the account's own sales queued for
// the same reason are decided again by fiscalevent.RetryRegistrations.
// Settlements and fiscal events stored pending for that reason by a
// version that did not queue them are queued first, once per account
// (backfillRegistrationWait).
func RetryRegistrations(ctx context.Context, e *fiscal.Engine) (int, error) {
	if err := backfillRegistrationWait(ctx, e); err != nil {
		return 0, err
	}
	return walkQueue(ctx, e, registrationQueue())
}

// bucketRatesMeta holds what package rates did once per ledger: key
// keyRegistrationBackfill and an account id, once its pending settlements
// were queued.
const (
	bucketRatesMeta         = "rates-meta"
	keyRegistrationBackfill = "registration-wait-backfill\x00"
)

// backfillRegistrationWait queues in fiscal.BucketRegistrationWait every
// settlement of each account e serves that is pending review for
// vat.ReasonSellerNotRegistered, and every fiscal event of its own seller
// in review for it: the core and package fiscalevent queue such a record
// when they store it, but a version before the queue (93b2aa1, 8 December
// 2026) did not, and a review found those sales never decided again. It
// lists an account's pending settlements and fiscal events in review once
// (listing.List), then marks the account done in the same
// transaction that queues them; later calls read one key per account. A
// record queued twice is one entry (its id is the key), and one decided
// since leaves the queue when it is walked (redecide).
func backfillRegistrationWait(ctx context.Context, e *fiscal.Engine) error {
	for _, a := range e.Accounts() {
		done := []byte(keyRegistrationBackfill + a.ID)
		if _, err := e.Ledger().Get(bucketRatesMeta, done); err == nil {
			continue
		} else if !errors.Is(err, ledger.ErrNotFound) {
			return err
		}
		b, err := e.Books(a.ID)
		if err != nil {
			return err
		}
		var puts []ledger.Put
		for _, q := range []listing.Query{{Limit: 200, ReviewStatus: fiscal.StatusPendingReview}, {Limit: 200, Object: fiscal.ObjectFiscalEvent, Status: vat.StatusManualReview}} {
			for {
				page, err := listing.List(ctx, b, q)
				if err != nil {
					return err
				}
				for _, raw := range page.Data {
					p, err := registrationWaitItem(raw)
					if err != nil {
						return err
					}
					if p != nil {
						puts = append(puts, *p)
					}
				}
				if !page.HasMore {
					break
				}
				q.Cursor = page.NextCursor
			}
		}
		err = e.Ledger().Update(func(tx ledger.Tx) error {
			for _, p := range puts {
				if err := tx.Put(p.Bucket, p.Key, p.Value); err != nil {
					return err
				}
			}
			return tx.Put(bucketRatesMeta, done, []byte(e.Now().UTC().Format(time.RFC3339)))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// registrationWaitItem is the queue entry of a listed settlement or fiscal
// event when it waits for a registration (nil when it does not): a
// settlement pending for vat.ReasonSellerNotRegistered, or a fiscal event
// of the account's own seller in review for it (fiscalevent.RetryRegistrations).
func registrationWaitItem(raw []byte) (*ledger.Put, error) {
	var r struct {
		ID, Account, Object, ReviewStatus string
		ReviewReasons                     []vat.Reason
		Determination                     vat.Determination
		Settlement, Payment               struct{ Timestamp string }
		Seller                            struct{ AccountSeller bool }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	it := queued{RecordID: r.ID, Account: r.Account}
	ts := r.Settlement.Timestamp
	if r.Object == fiscal.ObjectFiscalEvent {
		if !r.Seller.AccountSeller || r.Determination.Status != vat.StatusManualReview || !hasReason(r.Determination.Reasons, vat.ReasonSellerNotRegistered) {
			return nil, nil
		}
		it.Object, ts = fiscal.ObjectFiscalEvent, r.Payment.Timestamp
	} else if r.ReviewStatus != fiscal.StatusPendingReview || !hasReason(r.ReviewReasons, vat.ReasonSellerNotRegistered) {
		return nil, nil
	}
	it.Timestamp, _ = time.Parse(time.RFC3339Nano, ts) // not read by this queue's walk
	v, err := json.Marshal(it)
	if err != nil {
		return nil, err
	}
	return &ledger.Put{Bucket: fiscal.BucketRegistrationWait, Key: []byte(r.ID), Value: v}, nil
}

// registrationQueue is the queue of settlements the seller was not
// registered for.
func registrationQueue() waitQueue {
	return waitQueue{
		bucket: fiscal.BucketRegistrationWait, due: func(queued) bool { return true },
		waits:   func(r *fiscal.Record) bool { return hasReason(r.ReviewReasons, vat.ReasonSellerNotRegistered) },
		missing: vat.ReasonSellerNotRegistered, cause: fiscal.CauseRegistrationsChanged,
		what: "re-deciding a record the seller was not registered for", event: fiscalevent.RetryRegistrations,
		profile: func(kept, account fiscal.Seller) (fiscal.Seller, bool) {
			if account.Registrations == nil || reflect.DeepEqual(kept.Registrations, account.Registrations) {
				return kept, false
			}
			kept.Registrations = slices.Clone(account.Registrations)
			return kept, true
		},
	}
}

// RetryRegistrationsInBackground runs RetryRegistrations once as the
// engine's background work: at start (the accounts an engine starts with
// may state registrations from days already past), and whenever the host
// changes the accounts (fiscal.Engine.SetAccounts), after it. A nil logger
// is the engine's.
func RetryRegistrationsInBackground(e *fiscal.Engine, logger *slog.Logger) {
	if logger == nil {
		logger = e.Settings().Logger
	}
	onceInBackground(e, func(ctx context.Context) {
		n, err := RetryRegistrations(ctx, e)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("re-deciding records the seller was not registered for", "err", err)
		case n > 0:
			logger.Info("records decided under the account's registrations now stated", "revised", n)
		}
	})
}
