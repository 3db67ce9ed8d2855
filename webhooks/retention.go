package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// pruneBatch bounds the delivery states one Prune transaction removes, so
// that a first prune of a large backlog does not hold bbolt's single
// writer (which the ledger's committer shares) for long.
const pruneBatch = 512

// Prune removes the delivery states that finished (delivered, failed or
// cancelled) before the cutoff: their last activity (the delivery, the last
// attempt, the start of the last round, when it was given up unsent; for
// one never attempted, when it was due) is older than before. Pending deliveries are never removed, whatever their
// age, and neither are endpoints, the outbox or anything in the ledger's
// log: a pruned event is still in GET /v1/events and can be redelivered
// (which starts a new delivery state); only its old delivery state is gone
// from GET /v1/events/{id}. It returns how many states it removed; an
// error (ctx done, a store failure) leaves what it removed so far removed,
// and a later call continues.
func (w *Service) Prune(ctx context.Context, before time.Time) (int, error) {
	removed := 0
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		var keys [][]byte
		var last []byte
		err := w.read(func(tx ledger.Tx) error {
			return tx.Scan(bucketWebhookDeliveries, nil, after, false, func(k, v []byte) bool {
				last = bytes.Clone(k)
				var st deliveryState
				// An unreadable state is left alone: retention removes only
				// what it can tell is finished and old.
				if json.Unmarshal(v, &st) == nil && prunable(st, before) {
					keys = append(keys, bytes.Clone(k))
				}
				return len(keys) < pruneBatch
			})
		})
		if err != nil {
			return removed, err
		}
		if len(keys) > 0 {
			n := 0
			err = w.update(func(tx ledger.Tx) error {
				n = 0
				for _, k := range keys {
					// Read again in the write transaction: a redelivery may
					// have made the state pending since the scan.
					var st deliveryState
					found, err := getJSON(tx, bucketWebhookDeliveries, k, &st)
					if err != nil {
						return err
					}
					if !found || !prunable(st, before) {
						continue
					}
					if err := tx.Delete(bucketWebhookDeliveries, k); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				return removed, err
			}
			removed += n
		}
		if last == nil || len(keys) < pruneBatch {
			return removed, nil
		}
		after = last
	}
}

// prunable: a finished delivery whose last activity is before the cutoff.
func prunable(st deliveryState, before time.Time) bool {
	if st.Status == DeliveryPending {
		return false
	}
	return lastActivity(st).Before(before)
}

// lastActivity is the latest moment a finished delivery state records: its
// delivery, its last attempt, the start of its last round or when it was
// given up unsent (abandonUnsendable). NextAt counts
// only for a state that never had an attempt (cancelled before it was
// tried: NextAt is then when it was fanned out); after an attempt, NextAt is
// the attempt's lease (its start plus the timeout, and leaseMargin on a
// shared log), not an activity.
func lastActivity(st deliveryState) time.Time {
	var last time.Time
	if st.RoundStart.After(last) {
		last = st.RoundStart
	}
	if st.DeliveredAt != nil && st.DeliveredAt.After(last) {
		last = *st.DeliveredAt
	}
	if st.AbandonedAt != nil && st.AbandonedAt.After(last) {
		last = *st.AbandonedAt
	}
	if st.LastAttempt != nil {
		if at, err := time.Parse(time.RFC3339, st.LastAttempt.At); err == nil && at.After(last) {
			last = at
		}
	}
	if last.IsZero() {
		last = st.NextAt
	}
	return last
}
