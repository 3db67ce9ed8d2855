package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// pruneBatch bounds the entries one Prune transaction removes.
const pruneBatch = 512

// Prune removes the queue entries that reached a final state (recorded or
// failed) before the cutoff (their updatedAt is older than before), with
// the Idempotency-Key index entry that names them. Queued entries are never
// removed, whatever their age: they are the durable queue.
//
// Nothing that prevents a duplicate payment is touched: a payment is
// recorded once because of the ledger's claim on its (network, tx hash),
// and a recorded payment's Idempotency-Key is also a ledger claim; both are
// in the log's entry, not in the queue's side buckets. After pruning, GET
// /v1/x402/settlements/{id} answers 404 for the entry (the record stays at
// /settlements/{id}); a failed entry's payment can be queued again. (A
// failed entry's Idempotency-Keys were freed when it failed; Prune frees
// those of a recorded entry, which the ledger's claim binds anyway.)
//
// It returns how many entries it removed; an error (ctx done, a store
// failure) leaves what it removed so far removed.
func (s *Service) Prune(ctx context.Context, before time.Time) (int, error) {
	removed := 0
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		var ids [][]byte
		var last []byte
		err := s.e.Ledger().View(func(tx ledger.Tx) error {
			return tx.Scan(bucketQueue, nil, after, false, func(k, v []byte) bool {
				last = bytes.Clone(k)
				var q queued
				if json.Unmarshal(v, &q) == nil && prunable(q, before) {
					ids = append(ids, bytes.Clone(k))
				}
				return len(ids) < pruneBatch
			})
		})
		if err != nil {
			return removed, err
		}
		if len(ids) > 0 {
			n := 0
			err = s.update(func(tx ledger.Tx) error {
				n = 0
				for _, id := range ids {
					// Read again in the write transaction: the entry may have
					// been queued again since the scan.
					raw := tx.Get(bucketQueue, id)
					var q queued
					if raw == nil || json.Unmarshal(raw, &q) != nil || !prunable(q, before) {
						continue
					}
					if _, err := q.releaseKeys(tx); err != nil {
						return err
					}
					if err := tx.Delete(bucketQueue, id); err != nil {
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
		if last == nil || len(ids) < pruneBatch {
			return removed, nil
		}
		after = last
	}
}

// prunable: an entry in a final state, last updated before the cutoff.
func prunable(q queued, before time.Time) bool {
	if q.Status.State != StateRecorded && q.Status.State != StateFailed {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, q.Status.UpdatedAt)
	return err == nil && at.Before(before)
}
