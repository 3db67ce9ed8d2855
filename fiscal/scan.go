package fiscal

import (
	"bytes"
	"context"
)

// scanBatch is how many index postings Scan reads at a time.
const scanBatch = 256

// Scan walks the account's records of one kind, object (ObjectSettlement or
// ObjectFiscalEvent), newest first in the order the service recorded them:
// the ledger's account-time index, createdAt then id, in which a new record
// can only appear before the newest. It starts just before the position
// before (nil: with the newest record) and calls fn with each record's
// position and the stored document of its current revision, read as
// Books.Indexed reads it (verified, the account's, of that kind), until fn
// returns false or an error (which Scan returns). A position is the index
// key after the account prefix: createdAt in Unix nanoseconds (8 bytes,
// big-endian), then the record id. Package listing pages with it.
func (b *Books) Scan(ctx context.Context, object string, before []byte, fn func(pos, doc []byte) (bool, error)) error {
	var index string
	switch object {
	case ObjectSettlement:
		index = indexAccountTime
	case ObjectFiscalEvent:
		index = indexAccountFiscalEvents
	default:
		return badRequest("object", "is %q; want %q or %q", object, ObjectSettlement, ObjectFiscalEvent)
	}
	prefix := append([]byte(b.acc.ID), 0)
	var after []byte
	if before != nil {
		after = append(bytes.Clone(prefix), before...)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hits, err := b.e.ledger.Scan(index, prefix, after, true, scanBatch)
		if err != nil {
			return storeError(err)
		}
		for _, h := range hits {
			raw, err := b.Indexed(h.ID, object)
			if err != nil {
				return err
			}
			if more, err := fn(h.Key[len(prefix):], raw); err != nil || !more {
				return err
			}
			after = h.Key
		}
		if len(hits) < scanBatch {
			return nil
		}
	}
}
