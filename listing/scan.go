package listing

import (
	"bytes"
	"context"

	"github.com/fiscal402/fiscal402/fiscal"
)

// scanBatch is how many index postings scan reads at a time.
const scanBatch = 256

// scan walks the account's records of one kind, object
// (fiscal.ObjectSettlement or fiscal.ObjectFiscalEvent), newest first in
// the order the service recorded them: the ledger's time index of that
// kind (fiscal.TimeIndexSettlement, fiscal.TimeIndexFiscalEvent), createdAt
// then id. It starts just before the position before (nil: with the
// newest record) and calls fn with each record's position and the stored
// document of its current revision, read by fiscal.Books.Indexed (verified
// against the log, the account's, of that kind), until fn returns false or
// an error (which scan returns). A position is the index key after the
// account prefix: createdAt in Unix nanoseconds (8 bytes, big-endian), then
// the record id.
func scan(ctx context.Context, b *fiscal.Books, object string, before []byte, fn func(pos, doc []byte) (bool, error)) error {
	index := fiscal.TimeIndexSettlement
	if object == fiscal.ObjectFiscalEvent {
		index = fiscal.TimeIndexFiscalEvent
	}
	prefix := append([]byte(b.Account().ID), 0)
	var after []byte
	if before != nil {
		after = append(bytes.Clone(prefix), before...)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hits, err := b.Engine().Ledger().Scan(index, prefix, after, true, scanBatch)
		if err != nil {
			return fiscal.StoreError(err)
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
