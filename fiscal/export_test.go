package fiscal

import (
	"context"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// Hooks for the external tests' benchmarks (test builds only).

// ThresholdInputs is the running-total lookup Prepare makes for an
// account's sale (totalsFor).
func (e *Engine) ThresholdInputs(accountID string, s Seller, at time.Time) (*vat.CrossBorderTotals, error) {
	cb, _, err := e.totalsFor(accountID, s, at)
	return cb, err
}

// RebuildTotals forgets the running totals of the accounts given and
// builds them again from the ledger, as New does for a ledger written
// before the engine kept them.
func (e *Engine) RebuildTotals(ctx context.Context, keys ...[]byte) error {
	err := e.ledger.Update(func(tx ledger.Tx) error {
		for _, k := range keys {
			if err := tx.Delete(bucketTotals, k); err != nil {
				return err
			}
		}
		return tx.Delete(bucketEngineMeta, metaTotalsBuilt)
	})
	if err != nil {
		return err
	}
	return e.rebuildTotals(ctx)
}

// ResolveAfterLookup is Books.Resolve from the point where it found its
// Idempotency-Key free: a test's way to let another request commit
// between that lookup and the resolution's reading of the record.
func (b *Books) ResolveAfterLookup(ctx context.Context, id string, res Resolution, idempotencyKey string) (*SettleResult, error) {
	res, err := res.Normalised()
	if err != nil {
		return nil, err
	}
	claims := []ledger.Claim{IdempotencyClaim(b.acc.ID, idempotencyKey, fingerprintOf(struct {
		ID string
		R  Resolution
	}{id, res}))}
	return b.resolve(ctx, id, res, claims, 0)
}
