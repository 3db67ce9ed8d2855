package fiscal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// A VAT number that the registry could not confirm at the time of the sale
// (VIES or HMRC unavailable) leaves the record PENDING_MANUAL_REVIEW with the
// reason vat_number_unverified: not reverse-charged, not charged at 0 %
// (reverse charge needs a number whose validity was confirmed, Art. 18(1)
// Implementing Regulation 282/2011,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32011R0282; an
// outage is not a "no"). The engine then re-asks the registry in the
// background, with exponential backoff and jitter, for a bounded time. A
// definitive answer completes the record with a new signed ledger entry, a
// revision that supersedes the pending one; the original entry is never
// rewritten. The queue of re-checks lives in the ledger file (bucket
// "recheck"), written in the same transaction as the pending entry, so a
// restart resumes it and nothing is lost.

// RecheckPolicy bounds the background re-check of VAT numbers. Zero values
// mean the documented defaults.
type RecheckPolicy struct {
	// Interval is how often the background loop looks for due re-checks;
	// 0 means 30 seconds, a negative value disables the loop (RecheckNow
	// still works, for operators and tests).
	Interval time.Duration
	// BaseDelay is the delay before the first re-check, doubled after each
	// failed one (with full jitter); 0 means 1 minute.
	BaseDelay time.Duration
	// MaxDelay caps the delay between re-checks; 0 means 1 hour.
	MaxDelay time.Duration
	// GiveUpAfter is how long after the sale the engine keeps asking; after
	// it the record stays pending for a person to review, with a revision
	// saying the registry never answered. 0 means 72 hours.
	GiveUpAfter time.Duration
}

func (p RecheckPolicy) withDefaults() RecheckPolicy {
	if p.Interval == 0 {
		p.Interval = 30 * time.Second
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Minute
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = time.Hour
	}
	if p.GiveUpAfter <= 0 {
		p.GiveUpAfter = 72 * time.Hour
	}
	return p
}

// delay is the wait before re-check attempt n+1 (n ≥ 1): exponential backoff
// with full jitter (uniform in [delay/2, delay]), capped.
func (p RecheckPolicy) delay(attempts int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempts && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

const (
	bucketRecheck     = "recheck" // record id → recheckItem JSON
	reasonVATUnverify = "vat_number_unverified"
)

// recheckItem is a queued re-check: everything needed to re-decide the
// record without the merchant, including the seller profile as it was at the
// sale (a later change of the account must not change an old sale).
type recheckItem struct {
	RecordID string `json:"recordId"`
	// Object is the kind of record ("" or ObjectSettlement: the engine
	// revises it; another kind: its HandleRecheck handler does).
	Object    string    `json:"object,omitempty"`
	VATNumber string    `json:"vatNumber"`
	Seller    Seller    `json:"seller"`
	Since     time.Time `json:"since"`
	Attempts  int       `json:"attempts"`
	NextAt    time.Time `json:"nextAt"`
	LastFault string    `json:"lastFault,omitempty"`
}

// recheckable reports whether waiting can change an unavailable answer:
// a registry that is off by configuration, or a number no registry serves,
// will not answer later.
func recheckable(r *vies.Result) bool {
	return r != nil && r.Status == vies.StatusUnavailable && r.Fault != vies.FaultRegistryOff && r.Fault != vies.FaultUnsupported
}

// queueRecheck adds the re-check of the draft's VAT number to the entry's
// writes when the record waits on a registry that may answer later.
func (e *Engine) queueRecheck(d *Draft, seller Seller, reg *vies.Result, now time.Time) error {
	if e.cfg.VIES == nil || !recheckable(reg) || !hasReason(d.Record.ReviewReasons, reasonVATUnverify) {
		return nil
	}
	obj := d.Record.Object
	if obj == ObjectSettlement {
		obj = "" // as queued before other kinds could be
	}
	item, err := json.Marshal(recheckItem{
		RecordID: d.Record.ID, Object: obj, VATNumber: d.Record.Buyer.VATNumber, Seller: seller,
		Since: now, Attempts: 1, NextAt: now.Add(e.cfg.Recheck.delay(1)), LastFault: reg.Fault,
	})
	if err != nil {
		return err
	}
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketRecheck, Key: []byte(d.Record.ID), Value: item})
	return nil
}

func hasReason(reasons []vat.Reason, code string) bool {
	return slices.ContainsFunc(reasons, func(r vat.Reason) bool { return r.Code == code })
}

// Queues are the depths of the engine's durable work queues.
type Queues struct {
	// Rechecks: records waiting for a registry to answer about their
	// buyer's VAT number.
	Rechecks int `json:"rechecks"`
	// WaitingForRates: settlements and fiscal events waiting for a rate not yet
	// published (fxwait.go).
	WaitingForRates int `json:"waitingForRates"`
	// WaitingForRateTable: those decided while the VAT rate table did not
	// cover their day, waiting for one that does (fxwait.go).
	WaitingForRateTable int `json:"waitingForRateTable"`
	// WaitingForRegistration: settlements pending because the seller was
	// not registered where they are taxed, waiting for the account's
	// registrations to change (fxwait.go, BucketRegistrationWait).
	WaitingForRegistration int `json:"waitingForRegistration"`
}

// Queues counts the engine's queued work.
func (e *Engine) Queues() (Queues, error) {
	var q Queues
	err := e.ledger.View(func(tx ledger.Tx) error {
		for bucket, n := range map[string]*int{bucketRecheck: &q.Rechecks, BucketFXWait: &q.WaitingForRates, BucketRateTableWait: &q.WaitingForRateTable, BucketRegistrationWait: &q.WaitingForRegistration} {
			if err := tx.Scan(bucket, nil, nil, false, func(k, v []byte) bool { *n++; return true }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return q, storeError(err)
	}
	return q, nil
}

// RecheckNow re-asks the registry about every queued VAT number whose time
// has come and completes the records it can. It returns how many records got
// a new revision. The background loop calls it; operators and tests may too.
func (e *Engine) RecheckNow(ctx context.Context) (int, error) {
	if e.cfg.VIES == nil {
		return 0, nil
	}
	now := e.Now().UTC()
	var due []recheckItem
	err := e.ledger.View(func(tx ledger.Tx) error {
		return tx.Scan(bucketRecheck, nil, nil, false, func(k, v []byte) bool {
			var it recheckItem
			if json.Unmarshal(v, &it) == nil && !it.NextAt.After(now) {
				due = append(due, it)
			}
			return true
		})
	})
	if err != nil {
		return 0, storeError(err)
	}
	done := 0
	for _, it := range due {
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		revised, err := e.recheckOne(ctx, it, now)
		if err != nil {
			e.cfg.Logger.Error("vat number re-check failed", "record", it.RecordID, "err", err)
			continue
		}
		if revised {
			done++
		}
	}
	return done, nil
}

// recheckOne asks once. A definitive answer, or giving up, appends a
// revision and dequeues; another unavailable answer reschedules.
func (e *Engine) recheckOne(ctx context.Context, it recheckItem, now time.Time) (bool, error) {
	r := e.cfg.VIES.Check(ctx, it.VATNumber)
	giveUp := now.Sub(it.Since) >= e.cfg.Recheck.GiveUpAfter
	if recheckable(&r) && !giveUp {
		it.Attempts++
		it.NextAt = now.Add(e.cfg.Recheck.delay(it.Attempts))
		it.LastFault = r.Fault
		raw, err := json.Marshal(it)
		if err != nil {
			return false, err
		}
		return false, e.ledger.Update(func(tx ledger.Tx) error {
			var cur recheckItem
			if json.Unmarshal(tx.Get(bucketRecheck, []byte(it.RecordID)), &cur) != nil || !cur.Since.Equal(it.Since) || cur.VATNumber != it.VATNumber {
				return nil // a resolution dequeued or replaced it while the registry was asked
			}
			return tx.Put(bucketRecheck, []byte(it.RecordID), raw)
		})
	}
	return e.amend(ctx, it, &r, giveUp && recheckable(&r), now)
}

// amend writes the next revision of the record with the registry's new
// answer, and reports whether it did (not when a resolution or another
// pass overtook the re-check). abandoned means the registry never
// answered: the revision stays pending and says so, for a person to decide.
func (e *Engine) amend(ctx context.Context, it recheckItem, reg *vies.Result, abandoned bool, now time.Time) (bool, error) {
	if it.Object != "" {
		e.handlersMu.Lock()
		h := e.rechecks[it.Object]
		e.handlersMu.Unlock()
		if h == nil {
			return false, fmt.Errorf("no re-check handler for %s records (the package that records them is not running)", it.Object)
		}
		return h(ctx, Recheck{RecordID: it.RecordID, VATNumber: it.VATNumber, Registry: reg, Abandoned: abandoned, Seller: it.Seller,
			Attempts: it.Attempts + 1, Since: it.Since, Dequeue: ledger.Put{Bucket: bucketRecheck, Key: []byte(it.RecordID)}}, now)
	}
	prev, _, err := decodeRecord(e.document(it.RecordID))
	if err != nil || prev.ReviewStatus != StatusPendingReview || prev.Buyer.VATNumber != it.VATNumber || !hasReason(prev.ReviewReasons, reasonVATUnverify) {
		// nil: a resolution, or another pass, settled the number while
		// the registry was asked; its write dequeued or replaced this
		// re-check.
		return false, err
	}
	d, err := e.redraft(ctx, prev, it.Seller, reg, now)
	if err != nil {
		return false, err
	}
	if abandoned {
		for i, reason := range d.Record.ReviewReasons {
			if reason.Code == reasonVATUnverify {
				d.Record.ReviewReasons[i].Detail = fmt.Sprintf("the registry could not confirm %s in %d attempts over %s (last fault %s); review by a person is needed",
					it.VATNumber, it.Attempts+1, now.Sub(it.Since).Round(time.Minute), reg.Fault)
			}
		}
	}
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketRecheck, Key: []byte(prev.ID)}) // dequeue, in the same transaction
	_, err = e.revise(ctx, prev, d, it.Seller, now, Revision{Cause: CauseRegistryRecheck}, nil)
	var fe *Error
	if errors.As(err, &fe) && fe.Code == CodeRevisionConflict {
		// Another pass, or a person's resolution, revised the record
		// first; its write dequeued or superseded this re-check.
		e.cfg.Logger.Info("record already revised", "record", prev.ID, "revision", prev.Revision+1)
		return false, nil
	}
	return err == nil, err
}

// paymentOf rebuilds the validated payment of a stored record, so that a
// revision is decided on exactly the facts of the sale: the VAT number as
// the customer gave it, so that a prefix the engine supplied is noted again.
func paymentOf(r *Record) (Payment, error) {
	return r.Settlement.Payment(BuyerFacts{Country: r.Buyer.Country, PostalCode: r.Buyer.PostalCode, VATNumber: cmp.Or(r.Buyer.VATNumberAsGiven, r.Buyer.VATNumber), Name: r.Buyer.Name,
		SupplyKind: r.Supply.Kind, Description: r.Supply.Description, Evidence: r.Buyer.Evidence,
		Conditions: r.Supply.Conditions, Provider: r.Supply.Provider, Address: r.Buyer.Address})
}

// Payment rebuilds the validated payment of a recorded payment with the
// buyer facts given, for a revision decided on exactly the facts of the
// sale.
func (rp RecordPayment) Payment(buyer BuyerFacts) (Payment, error) {
	amount, err := decimal.NewFromString(rp.AmountUSDC)
	if err != nil {
		return Payment{}, fmt.Errorf("fiscal: recorded amount %q: %w", rp.AmountUSDC, err)
	}
	ts, err := time.Parse(time.RFC3339Nano, rp.Timestamp)
	if err != nil {
		return Payment{}, fmt.Errorf("fiscal: recorded timestamp %q: %w", rp.Timestamp, err)
	}
	return Payment{
		Amount: amount, AmountString: rp.AmountUSDC, TxHash: rp.TxHash, Timestamp: ts,
		PayerWallet: rp.PayerWallet, ReceiverWallet: rp.ReceiverWallet, Network: rp.Network,
		Asset: rp.Asset, Scheme: rp.Scheme, Protocol: rp.Protocol, Buyer: buyer,
	}, nil
}

// runRecheckLoop re-checks due VAT numbers until stop is closed.
func (e *Engine) runRecheckLoop(stop <-chan struct{}) {
	t := time.NewTicker(e.cfg.Recheck.Interval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// Replicas sharing a log take turns through a lease: one of
			// them re-checks (bbolt: always this engine).
			if held, err := e.ledger.Lease("fiscal.recheck", e.cfg.Recheck.Interval*3+time.Minute); err != nil || !held {
				continue
			}
			if n, err := e.RecheckNow(ctx); err != nil && ctx.Err() == nil {
				e.cfg.Logger.Error("vat number re-check", "err", err)
			} else if n > 0 {
				e.cfg.Logger.Info("vat numbers re-checked", "revised", n)
			}
		}
	}
}

// Recheck is a registry's new answer about the VAT number of a record of
// another kind than a settlement, for its handler (HandleRecheck).
type Recheck struct {
	RecordID, VATNumber string
	Registry            *vies.Result // the registry's answer
	// Seller is the seller queued with the re-check, as at the sale
	// (Supply.RecheckSeller): a later change of the account must not
	// change an old sale.
	Seller Seller
	// Abandoned: the registry never answered within RecheckPolicy.GiveUpAfter;
	// the revision stays pending and should say so.
	Abandoned bool
	Attempts  int
	Since     time.Time
	// Dequeue removes the re-check; the handler writes it in its revision's
	// transaction (Draft.Puts).
	Dequeue ledger.Put
}

// HandleRecheck registers how records of object (other than settlements)
// are revised when the registry answers about their buyer's VAT number:
// fn decides the record again with the answer and commits the revision
// (Engine.Revise), dequeuing the re-check in the same transaction, and
// reports whether it wrote a revision (false when a resolution or another
// pass overtook the re-check: RecheckNow counts only revisions). The
// package that records the object registers it when it starts.
func (e *Engine) HandleRecheck(object string, fn func(ctx context.Context, rc Recheck, now time.Time) (bool, error)) {
	e.handlersMu.Lock()
	defer e.handlersMu.Unlock()
	if e.rechecks == nil {
		e.rechecks = map[string]func(context.Context, Recheck, time.Time) (bool, error){}
	}
	e.rechecks[object] = fn
}
