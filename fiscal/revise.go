package fiscal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// Causes of a revision (Revision.Cause).
const (
	CauseRegistryRecheck = "registry_recheck"  // the registry answered about the buyer's VAT number
	CauseResolution      = "resolution"        // a person resolved the review (Books.Resolve)
	CauseRatePublished   = "fx_rate_published" // the ECB rate the record waited for was published
)

// revise commits d, decided on the revised facts of prev, as prev's next
// revision: the same record id and createdAt, a new entry, receipt and
// event; rev supplies the revision's cause and who made it. claims are
// taken with the revision's own claim.
func (e *Engine) revise(ctx context.Context, prev *Record, d *Draft, seller Seller, now time.Time, rev Revision, claims []ledger.Claim) (*SettleResult, error) {
	revision := prev.Revision + 1
	d.id = revisionEntryID(prev.ID, revision)
	switch {
	case d.Record.ReviewStatus != StatusProcessed:
		d.EventType = EventSettlementPendingReview
	case rev.Cause == CauseRatePublished:
		// Nothing needed a person: the record is processed as it would
		// have been had the rate been out at the sale.
		d.EventType = EventSettlementProcessed
	default:
		d.EventType = EventSettlementReviewResolve
	}
	if err := e.Issue(d, seller); err != nil {
		return nil, err
	}
	rec := &d.Record
	rec.CreatedAt = prev.CreatedAt
	rec.X402 = prev.X402
	rec.Revision = revision
	rec.Receipt = ReceiptRef{ID: ReceiptID(d.id), Spec: rec.Receipt.Spec, URL: e.urlPrefix() + "/v1/receipts/" + ReceiptID(d.id)}
	rev.Revision, rev.EventType, rev.ReviewStatus, rev.ReviewReasons = revision, d.EventType, rec.ReviewStatus, rec.ReviewReasons
	rev.ReceiptID, rev.At = rec.Receipt.ID, now.Format(time.RFC3339Nano)
	rec.History = append(append([]Revision(nil), prev.History...), rev)
	c := receiptClaims(rec, now)
	d.claims = &c
	d.Claims = append(append([]ledger.Claim(nil), claims...), ledger.Claim{Space: claimRevision, Key: fmt.Sprintf("%s:%d", prev.ID, revision), Fingerprint: []byte(d.id)})
	stored, res, err := e.Commit(ctx, d)
	if err != nil {
		return nil, err
	}
	if res.Existing {
		if res.ID == d.id && len(claims) > 0 {
			if holder, _, err := e.ledger.ClaimHolder(claims[0].Space, claims[0].Key); err == nil && holder == d.id {
				return e.resultOf(prev.ID, Replayed)
			}
		}
		return nil, &Error{Code: CodeRevisionConflict, Detail: fmt.Sprintf(
			"settlement %s got revision %d while this one was made; read it again and decide on its current state", prev.ID, revision)}
	}
	var r Record
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, &Error{Code: CodeInternal, Err: err}
	}
	return &SettleResult{Outcome: Created, Record: &r, JSON: stored}, nil
}

// resultOf answers with the current state of the record holding entry id.
func (e *Engine) resultOf(entryID string, o Outcome) (*SettleResult, error) {
	r, raw, err := e.loadRecord(recordIDOf(entryID))
	if err != nil {
		return nil, err
	}
	return &SettleResult{Outcome: o, Record: r, JSON: raw}, nil
}

// recordIDOf is the record id of an entry id (a revision's entry id is the
// record id + "-r" + n).
func recordIDOf(entryID string) string {
	if i := strings.LastIndex(entryID, revisionIDSeparator); i > 0 {
		return entryID[:i]
	}
	return entryID
}
