package fiscal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vies"
)

// Causes of a revision (Revision.Cause).
const (
	CauseRegistryRecheck = "registry_recheck"  // the registry answered about the buyer's VAT number
	CauseResolution      = "resolution"        // a person resolved the review (Books.Resolve)
	CauseRatePublished   = "fx_rate_published" // the ECB rate the record waited for was published
	CauseRateTableLoaded = "rate_table_loaded" // the engine's VAT rate table now covers the day that was outside it
	// CauseRegistrationsChanged: the account's registrations changed (one
	// stated from a day already past, Art. 57d Implementing Regulation
	// (EU) No 282/2011) and now cover the day the seller was not
	// registered on (rates.RetryRegistrations).
	CauseRegistrationsChanged = "registrations_changed"
)

// Prior is the state a revision follows: the record's id, when it was
// first recorded, its revision number and history.
type Prior struct {
	ID        string
	CreatedAt string
	Revision  int
	History   []Revision
}

// priorOf is the prior state of a settlement record.
func priorOf(r *Record) Prior {
	return Prior{ID: r.ID, CreatedAt: r.CreatedAt, Revision: r.Revision, History: r.History}
}

// Revise commits d, decided again on the revised facts of the record
// prior describes, as its next revision: the same record id and createdAt,
// a new ledger entry (id "<record id>-r<n>"), the revision's own receipt
// when d was issued (superseding the previous one), and d.EventType's
// event. rev supplies the revision's cause and who made it; claims (an
// Idempotency-Key) are taken with the revision's own claim, so that two
// writers of the same revision cannot both succeed: the second gets
// REVISION_CONFLICT, or its replay when it holds the same key. It returns
// the document as stored.
func (e *Engine) Revise(ctx context.Context, prior Prior, d *Draft, now time.Time, rev Revision, claims []ledger.Claim) ([]byte, Outcome, error) {
	revision := max(prior.Revision+1, 2) // 2: a record whose first state carries no revision number
	d.id = revisionEntryID(prior.ID, revision)
	rec := &d.Record
	rec.CreatedAt, rec.Revision = prior.CreatedAt, revision
	rec.Receipt = ReceiptRef{ID: ReceiptID(d.id), Spec: rec.Receipt.Spec, URL: e.urlPrefix() + "/v1/receipts/" + ReceiptID(d.id)}
	rev.Revision, rev.EventType, rev.ReviewStatus, rev.ReviewReasons = revision, d.EventType, rec.ReviewStatus, rec.ReviewReasons
	rev.At = now.Format(time.RFC3339Nano)
	if d.claims != nil {
		rev.ReceiptID = rec.Receipt.ID
	}
	rec.History = append(append([]Revision(nil), prior.History...), rev)
	if d.claims != nil {
		c := receiptClaims(rec, now)
		d.claims = &c
	}
	d.Claims = append(append([]ledger.Claim(nil), claims...), ledger.Claim{Space: claimRevision, Key: fmt.Sprintf("%s:%d", prior.ID, revision), Fingerprint: []byte(d.id)})
	stored, res, err := e.Commit(ctx, d)
	if err != nil {
		return nil, 0, err
	}
	if res.Existing {
		if res.ID == d.id && len(claims) > 0 {
			if holder, _, err := e.ledger.ClaimHolder(claims[0].Space, claims[0].Key); err == nil && holder == d.id {
				raw, _, err := e.entryDoc(holder) // the key's revision, not a later one (Books.storedResult)
				return raw, Replayed, err
			}
		}
		return nil, 0, &Error{Code: CodeRevisionConflict, Detail: fmt.Sprintf(
			"record %s got revision %d while this one was made; read it again and decide on its current state", prior.ID, revision)}
	}
	return stored, Created, nil
}

// revise issues and commits a settlement's next revision (Revise), with
// the event type its new state calls for.
func (e *Engine) revise(ctx context.Context, prev *Record, d *Draft, seller Seller, now time.Time, rev Revision, claims []ledger.Claim) (*SettleResult, error) {
	switch {
	case d.Record.ReviewStatus != StatusProcessed:
		d.EventType = EventSettlementPendingReview
	case rev.Cause == CauseRatePublished || rev.Cause == CauseRateTableLoaded || rev.Cause == CauseRegistrationsChanged:
		// Nothing needed a person: the record is processed as it would
		// have been had the rate (or the table, or the registration) been
		// out, or stated, at the sale.
		d.EventType = EventSettlementProcessed
	default:
		d.EventType = EventSettlementReviewResolve
	}
	if err := e.Issue(d, seller); err != nil {
		return nil, err
	}
	if err := errors.Join(syncWaits(d, prev.ID, e.cfg.Rates), keepSeller(d, prev.ID, seller, true)); err != nil {
		return nil, err
	}
	d.Record.X402 = prev.X402
	stored, o, err := e.Revise(ctx, priorOf(prev), d, now, rev, claims)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, &Error{Code: CodeInternal, Err: err}
	}
	return &SettleResult{Outcome: o, Record: &r, JSON: stored}, nil
}

// A settlement is decided under the account's profile as it stood at the
// sale: VAT becomes chargeable when the service is supplied (Art. 63
// Directive 2006/112/EC), and a later change of the account (an OSS or
// national registration added or ended, another VAT number, another
// invoicing mode) must not change an old sale. So while a settlement can
// still be revised (pending review) the profile it was decided under is
// kept in side bucket bucketSeller, written in the state's own transaction
// (keepSeller), and a person's resolution (Resolve) and the revision on a
// published rate (rates.Retry) decide under it (Books.SupplySeller); the
// revision that leaves it final removes it. A registry re-check decides
// under the profile queued with it (Recheck.Seller), fiscal events under
// their own (package fiscalevent).
const bucketSeller = "settlement-profile"

// keepSeller keeps s, the profile the account's settlement id is decided
// under, with its state d while d is pending review; a final revision
// (revised) removes it.
func keepSeller(d *Draft, id string, s Seller, revised bool) error {
	if d.Record.ReviewStatus != StatusPendingReview {
		if revised {
			d.Puts = append(d.Puts, ledger.Put{Bucket: bucketSeller, Key: []byte(id)})
		}
		return nil
	}
	v, err := json.Marshal(s)
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketSeller, Key: []byte(id), Value: v})
	return err
}

// SupplySeller is the profile the account's settlement prev, pending
// review, is decided under: the one kept with it (keepSeller). A record
// stored before profiles were kept has none; the account's current
// profile decides it, as before.
func (b *Books) SupplySeller(prev *Record) (s Seller, err error) {
	raw, err := b.e.ledger.Get(bucketSeller, []byte(prev.ID))
	switch {
	case errors.Is(err, ledger.ErrNotFound) || prev.Account != b.acc.ID:
		return b.acc.Seller, nil
	case err != nil:
		return s, storeError(err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, &Error{Code: CodeInternal, Detail: "the settlement's kept seller profile is unreadable", Err: err}
	}
	return s, nil
}

// recordIDOf is the record id of an entry id (a revision's entry id is the
// record id + "-r" + n).
func recordIDOf(entryID string) string {
	if i := strings.LastIndex(entryID, revisionIDSeparator); i > 0 {
		return entryID[:i]
	}
	return entryID
}

// Redraft decides the account's settlement record prev again on exactly
// the facts of its sale, with the seller profile given and, when reg is not
// nil, the registry's new answer about the buyer's VAT number (nil: the
// record's own), at now; the account's running totals count it as they
// did. The caller may adjust the draft and commits it with Revise.
func (b *Books) Redraft(ctx context.Context, prev *Record, seller Seller, reg *vies.Result, now time.Time) (*Draft, error) {
	if prev.Account != b.acc.ID {
		return nil, notFound("settlement " + prev.ID)
	}
	return b.e.redraft(ctx, prev, seller, reg, now)
}

func (e *Engine) redraft(ctx context.Context, prev *Record, seller Seller, reg *vies.Result, now time.Time) (*Draft, error) {
	p, err := paymentOf(prev)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		reg = prev.Buyer.Registry
	}
	return e.Prepare(ctx, prev.Account, Supply{Payment: p, Seller: seller, Verification: prev.Verification, Registry: reg, AccountTotals: true}, now)
}

// Revise issues d (a Redraft of prev) and commits it as prev's next
// revision with the event its new state calls for: settlement.processed
// when a published rate or a covering rate table is all it waited for
// (CauseRatePublished, CauseRateTableLoaded),
// settlement.review_resolved when it is now processed, else
// settlement.pending_review. A concurrent revision makes it
// REVISION_CONFLICT.
func (b *Books) Revise(ctx context.Context, prev *Record, d *Draft, seller Seller, now time.Time, rev Revision) (*SettleResult, error) {
	if prev.Account != b.acc.ID {
		return nil, notFound("settlement " + prev.ID)
	}
	return b.e.revise(ctx, prev, d, seller, now, rev, nil)
}
