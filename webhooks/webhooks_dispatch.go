package webhooks

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// The dispatcher delivers the outbox. Everything it knows is in the ledger:
//
//  1. Fan-out: it reads the events bucket from its durable cursor and, in
//     the same side-data transaction that advances the cursor, creates one
//     pending delivery state per (enabled endpoint of the event's account,
//     event) whose endpoint existed before the event.
//  2. Claim: for every pending delivery that is due, one transaction counts
//     the attempt and moves its due time to a lease (the attempt timeout,
//     and leaseMargin on a shared log),
//     so that an attempt cut short by a crash is made again after it.
//  3. Attempt and record: the signed POST, then one transaction with the
//     outcome: delivered, disabled endpoint (410), or the next attempt on
//     the retry schedule, or failed once the schedule is exhausted.
//
// Hence at least once: an attempt is counted before it is sent and only a
// recorded 2xx ends a delivery; a restart resumes every pending delivery.
type dispatcher struct {
	w           *Service
	e           *fiscal.Engine
	sender      Sender
	closeSender func()
	timeout     time.Duration
	lease       time.Duration // how long a claim holds a delivery: timeout, plus leaseMargin on a shared log
	after       func(time.Duration) <-chan time.Time

	slots chan struct{}   // one per attempt in flight
	wake  chan struct{}   // buffered(1): something changed
	stop  <-chan struct{} // the engine's: closed by its Close
	ctx   context.Context
	halt  context.CancelFunc // abandons attempts in flight on close

	mu       sync.Mutex
	inflight map[string]bool // delivery keys with an attempt in flight
	perEP    map[string]int  // attempts in flight per endpoint id
	perAcct  map[string]int  // attempts in flight per account
	// perAcctMax bounds one account's attempts in flight: a quarter of the
	// slots, but at least one endpoint's four while that leaves another
	// account a slot, so that one account's hanging receivers (8
	// endpoints × 4) can never take every slot, and at least four
	// accounts' deliveries always go on side by side.
	perAcctMax int
	// epAccount caches the account of each endpoint id seen in the due
	// index (an endpoint never changes account); only launchDue, on the
	// loop's goroutine, uses it.
	epAccount map[string]string
	// foreign caches, per endpoint id, whether the endpoint is one of the
	// accounts file's that this replica's file does not list (it has no
	// secret to sign for it; canSend). Only launchDue uses it.
	foreign map[string]bool
	// scanAfter is the due-index key a scan cut short by maxDueScan
	// stopped at (nil: scan from the start): the next scan goes on from
	// there, so that every due delivery is reached within a few scans
	// however many are skipped ahead of it. Only launchDue uses it.
	scanAfter []byte
	wg        sync.WaitGroup

	// The fan-out cursor as this dispatcher knows it (see planFanOut's
	// comment; only the loop's goroutine changes it, tests read it), and
	// the stored one as it last saw or wrote it (only the loop's goroutine).
	cursor atomic.Int64
	stored int64
	// every is the shortest interval between fan-out writes (fanOutEvery;
	// 0 with a virtual clock, Options.After, whose waits the coalescing's
	// real-time wait would race with). lastWrite is when the latest one
	// ended, hold how long until a fan-out write put off is due (0: none).
	every     time.Duration
	lastWrite time.Time
	lastClaim time.Time // when the latest claim write began
	hold      time.Duration
	// crashOnStop leaves the cursor unstored on stop, as a kill -9 would
	// (tests).
	crashOnStop atomic.Bool
	outcomes    chan *outcomeRecord // attempts' outcomes to the recorder
	// Write transactions: all the dispatcher's, and those of the fan-out
	// (deliveries created or the cursor stored). For tests and benchmarks.
	writes, fanWrites atomic.Int64
}

const (
	fanOutBatch = 256             // events per fan-out transaction
	maxIdleWait = time.Hour       // the loop looks again at least this often (pokes are never lost: a safety net)
	storeRetry  = 5 * time.Second // wait after a failed store operation
	haltedRetry = time.Minute     // wait after one that an operator must end (ledger.NeedsOperator)
	sharedPoll  = time.Second     // the longest wait on a log other replicas append to
	maxErrText  = 300             // characters of an error kept in a delivery state
	claimBatch  = defaultConcurrency
	// maxPerEndpoint bounds the attempts in flight to one endpoint, so that
	// a slow or hanging receiver (10 s per attempt) holds at most this many
	// of the slots and other accounts' deliveries go on; it also spares
	// receivers bursts.
	maxPerEndpoint = 4
	// maxDueScan bounds the due deliveries looked at per loop while skipping
	// those of saturated endpoints.
	maxDueScan = 1 << 14
	// leaseMargin is how much longer than the attempt's timeout a claim
	// holds a delivery on a log other replicas share (our choice; a
	// bbolt ledger has one process, whose in-flight set suffices, and
	// keeps the bare timeout): the attempt starts after the claim's
	// clock reading (reading the event and the checkpoint, signing), its
	// outcome is stored after it (in a batch, a database round trip
	// later), and another replica of a shared log judges the lease by its
	// own clock, which may run ahead. A lease of the bare timeout let a
	// second replica send the event while the first attempt was still
	// open. It delays only the retry of an attempt whose replica died.
	leaseMargin = 30 * time.Second
)

func newDispatcher(w *Service, opts Options) *dispatcher {
	d := &dispatcher{
		w: w, e: w.e, sender: opts.Sender, timeout: opts.Timeout, after: opts.After,
		wake:     make(chan struct{}, 1),
		inflight: map[string]bool{}, perEP: map[string]int{}, perAcct: map[string]int{}, epAccount: map[string]string{},
		foreign: map[string]bool{},
	}
	if d.timeout <= 0 {
		d.timeout = DefaultTimeout
	}
	d.lease = d.timeout
	if w.e.Ledger().Shared() {
		d.lease += leaseMargin
	}
	if d.after == nil {
		d.after = time.After
		d.every = fanOutEvery
	}
	if opts.fanOutEvery > 0 {
		d.every = opts.fanOutEvery
	}
	n := opts.Concurrency
	if n <= 0 {
		n = defaultConcurrency
	}
	d.slots = make(chan struct{}, n)
	d.outcomes = make(chan *outcomeRecord, n)
	d.perAcctMax = max(min(maxPerEndpoint, n-1), n/4, 1)
	if d.sender == nil {
		hs := NewHTTPSender(SenderOptions{Policy: w.policy, Timeout: d.timeout, Clock: w.clock})
		d.sender, d.closeSender = hs, hs.Close
	}
	d.ctx, d.halt = context.WithCancel(context.Background())
	return d
}

func (d *dispatcher) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) stopping() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// run delivers until stop is closed (the engine's Close): attempts in
// flight are then abandoned and become due again at once, so the next
// engine on the data directory resumes them.
func (d *dispatcher) run(stop <-chan struct{}) {
	d.stop = stop
	go func() { <-stop; d.halt() }()
	recorded := make(chan struct{})
	go d.recorder(recorded)
	defer func() {
		d.wg.Wait() // no attempt sends an outcome after this
		close(d.outcomes)
		<-recorded
		if d.closeSender != nil {
			d.closeSender()
		}
		// What the cursor passed in memory is stored, so that the next
		// start does not read it again.
		if !d.crashOnStop.Load() && d.cursor.Load() > d.stored {
			if err := d.persistCursor(); err != nil {
				d.w.log.Warn("webhook dispatcher: storing the fan-out cursor on stop", "err", err)
			}
		}
	}()
	for !d.stopping() {
		wait, err := d.step()
		if err != nil {
			if d.stopping() {
				return
			}
			d.w.log.Error("webhook dispatcher: store", "err", err)
			wait = storeWait(err)
		}
		if d.e.Ledger().Shared() && (wait < 0 || wait > sharedPoll) {
			// Other replicas append and finish attempts without poking
			// this one: look again soon.
			wait = sharedPoll
		}
		var timer <-chan time.Time // nil: wait for a poke only
		if wait >= 0 {
			timer = d.after(wait)
		}
		var held *time.Timer // a fan-out write put off: real time
		var heldC <-chan time.Time
		if d.hold > 0 {
			held = time.NewTimer(d.hold)
			heldC = held.C
		}
		select {
		case <-d.stop:
		case <-d.wake:
		case <-timer:
		case <-heldC:
		}
		if held != nil {
			held.Stop()
		}
	}
}

// storeWait is the loop's wait after a failed store operation: storeRetry,
// or haltedRetry when the error lasts until an operator has acted (a
// ledger halted after a failed disk sync, or a damaged file:
// ledger.NeedsOperator), so that it is logged once a minute rather than
// every few seconds for as long as it lasts.
func storeWait(err error) time.Duration {
	if ledger.NeedsOperator(err) {
		return haltedRetry
	}
	return storeRetry
}

// untilPoked is the wait of step when only a poke can bring work: an
// attempt in flight pokes when it ends, an append or an API change when
// they happen. No timer then, so a virtual clock in tests cannot run ahead
// while real I/O is pending.
const untilPoked = time.Duration(-1)

// step fans out new events, launches the due attempts, and says how long
// to wait before looking again; d.hold says when a fan-out write it put
// off is due (0: none).
func (d *dispatcher) step() (time.Duration, error) {
	d.hold = 0
	for {
		n, hold, err := d.fanOut()
		if err != nil {
			return 0, err
		}
		if hold > 0 {
			d.hold = hold
			break
		}
		if n < fanOutBatch {
			break
		}
	}
	return d.launchDue()
}

// The fan-out cursor is kept in two places. The stored one (metaCursor)
// only moves in a write transaction; every event below it was fanned out
// for good. The dispatcher's own, d.cursor, is never behind it and also
// passes the events that a read found no endpoint to deliver to (the
// common case: most accounts have no endpoint), without a write. Skipping
// such an event in memory is safe: an endpoint created later gets a first
// sequence past every event that read saw (nextSequence; events are
// appended in sequence order), so it could never receive it. The stored
// cursor catches up when a fan-out writes anyway, when the gap reaches
// lazyCursorGap events, and when the dispatcher stops. A crash loses only
// the in-memory part: the next dispatcher scans those events again and
// finds them, again, for nobody (or for an endpoint re-enabled since, which
// was subscribed at their sequence), never skipping an event that needs a
// delivery. Deliveries are keyed by (endpoint, sequence), so fanning out an
// event again does not duplicate one.
const (
	// lazyCursorGap bounds the events the stored cursor may lag behind:
	// what a restart after a crash reads and decodes again (nothing while
	// no endpoint exists: then no event is decoded).
	lazyCursorGap = 1 << 14
	// fanOutEvery is the shortest interval between two fan-out writes
	// under load: a write that would follow the previous one sooner waits
	// for the rest of the interval, and then covers every event recorded
	// meanwhile. It bounds the fan-out writes at 50 a second whatever the
	// commit rate, and adds at most this much to when a delivery starts.
	// A backlog (a full batch) is written at once.
	fanOutEvery = 20 * time.Millisecond
	// claimsPerFanOut: claim writes may come this many times as often as
	// fan-out writes (every 5 ms, at most 200 a second), since at most
	// maxPerEndpoint attempts go to one endpoint at a time: claims every
	// 5 ms let one endpoint with a fast receiver take 800 deliveries a
	// second. The outcomes' writes (recorder) come at most every
	// fanOutEvery; the attempt's slot is free before its outcome is stored.
	claimsPerFanOut = 4
)

// fanPlan is what a look at the outbox past the cursor found.
type fanPlan struct {
	from, end int64   // the events looked at are [from, end)
	events    int     // how many there were
	need      bool    // one of them is for an enabled endpoint subscribed at its sequence
	firstNeed int64   // the first such event's sequence
	bad       []int64 // the sequences of unreadable events
}

// planFanOut looks at up to fanOutBatch events from the cursor (the stored
// one, or d.cursor when ahead) in tx and says whether one needs a delivery.
func (d *dispatcher) planFanOut(tx ledger.Tx) (fanPlan, error) {
	stored := cursorOf(tx)
	p := fanPlan{from: max(stored, d.cursor.Load())}
	p.end = p.from
	none := true
	if err := tx.Scan(bucketWebhookEndpoints, nil, nil, false, func(_, _ []byte) bool {
		none = false
		return false
	}); err != nil {
		return p, err
	}
	if none {
		// No endpoint at all: nothing in the outbox is for anyone, and no
		// event needs decoding.
		next, err := nextSequence(tx)
		p.end = max(p.end, next)
		return p, err
	}
	eps := map[string][]endpointRecord{}
	var loadErr error
	err := scanEvents(tx, p.from, func(seq int64, ev fiscal.Event, ok bool) bool {
		p.end, p.events = seq+1, p.events+1
		if !ok {
			p.bad = append(p.bad, seq)
		}
		if ok && !p.need {
			list, seen := eps[ev.Account]
			if !seen {
				if list, loadErr = accountEndpoints(tx, ev.Account); loadErr != nil {
					return false
				}
				eps[ev.Account] = list
			}
			for _, ep := range list {
				if ep.DisabledAt == nil && seq >= ep.FirstSequence {
					p.need, p.firstNeed = true, seq
					break
				}
			}
		}
		return p.events < fanOutBatch
	})
	if err == nil {
		err = loadErr
	}
	return p, err
}

// fanOut turns up to fanOutBatch outbox events past the cursor into pending
// deliveries and advances the cursor. A read decides first: most wakes
// (a commit of events no endpoint receives, an attempt that ended, an
// endpoint that changed) need no write, which would cost a commit and two
// fsyncs and wait for bbolt's one writer, which the ledger's committer
// needs. It returns how many events it passed, or, when it puts a write
// off to coalesce it with the next commits (fanOutEvery), how long until
// that write is due.
func (d *dispatcher) fanOut() (int, time.Duration, error) {
	var p fanPlan
	stored := int64(0)
	err := d.w.read(func(tx ledger.Tx) error {
		stored = cursorOf(tx)
		var err error
		p, err = d.planFanOut(tx)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	d.stored = max(d.stored, stored)
	if !p.need {
		d.pass(p, p.end)
		if d.cursor.Load()-d.stored >= lazyCursorGap {
			return p.events, 0, d.persistCursor()
		}
		return p.events, 0, nil
	}
	if d.every > 0 && p.events < fanOutBatch {
		if wait := d.every - time.Since(d.lastWrite); wait > 0 {
			d.pass(p, p.firstNeed) // the events before it are for nobody
			return 0, wait, nil
		}
	}
	now := d.w.clock().UTC()
	n, end := 0, int64(0)
	err = d.update(func(tx ledger.Tx) error {
		n = 0
		from := max(cursorOf(tx), d.cursor.Load())
		end = from
		type item struct {
			seq int64
			ev  fiscal.Event
			ok  bool
		}
		var items []item
		err := scanEvents(tx, from, func(seq int64, ev fiscal.Event, ok bool) bool {
			items = append(items, item{seq, ev, ok})
			return len(items) < fanOutBatch
		})
		if err != nil {
			return err
		}
		eps := map[string][]endpointRecord{}
		for _, it := range items {
			if !it.ok {
				// Not deliverable by anyone; holding up every later event
				// would be worse. Check reports a damaged outbox too.
				d.w.log.Error("webhook dispatcher: unreadable outbox event skipped", "sequence", it.seq)
				continue
			}
			list, seen := eps[it.ev.Account]
			if !seen {
				if list, err = accountEndpoints(tx, it.ev.Account); err != nil {
					return err
				}
				eps[it.ev.Account] = list
			}
			for _, ep := range list {
				if ep.DisabledAt != nil || it.seq < ep.FirstSequence {
					continue
				}
				dkey := deliveryKey(ep.ID, it.seq)
				if tx.Get(bucketWebhookDeliveries, dkey) != nil {
					continue // already there (a redelivery that ran ahead)
				}
				st := deliveryState{
					Account: it.ev.Account, Endpoint: ep.ID, EndpointCreated: ep.CreatedAt.UnixNano(),
					Sequence: it.seq, EventID: it.ev.ID, Status: DeliveryPending, Round: 1, NextAt: now,
				}
				if err := putDelivery(tx, nil, &st); err != nil {
					return err
				}
			}
		}
		n = len(items)
		if n > 0 {
			end = items[n-1].seq + 1
		}
		if end == cursorOf(tx) {
			return nil
		}
		return tx.Put(bucketWebhookMeta, metaCursor, be64(end))
	})
	if err != nil {
		return 0, 0, err
	}
	d.fanWrites.Add(1)
	d.lastWrite = time.Now()
	d.advance(end)
	d.stored = max(d.stored, end)
	return n, 0, nil
}

// pass moves the in-memory cursor forward to c over events of p.
func (d *dispatcher) pass(p fanPlan, c int64) {
	for _, seq := range p.bad {
		if seq >= d.cursor.Load() && seq < c {
			// Not deliverable by anyone; holding up every later event
			// would be worse. Check reports a damaged outbox too.
			d.w.log.Error("webhook dispatcher: unreadable outbox event skipped", "sequence", seq)
		}
	}
	d.advance(c)
}

// advance moves the in-memory cursor forward to c.
func (d *dispatcher) advance(c int64) {
	if c > d.cursor.Load() {
		d.cursor.Store(c)
	}
}

// persistCursor stores d.cursor, unless the stored cursor is already past
// it (another replica of a shared log fanned out further).
func (d *dispatcher) persistCursor() error {
	c := d.cursor.Load()
	stored := int64(0)
	err := d.update(func(tx ledger.Tx) error {
		if stored = cursorOf(tx); stored >= c {
			return nil
		}
		stored = c
		return tx.Put(bucketWebhookMeta, metaCursor, be64(c))
	})
	if err != nil {
		return err
	}
	d.fanWrites.Add(1)
	d.stored = max(d.stored, stored)
	return nil
}

// update is the dispatcher's write transaction: Service.update, counted.
func (d *dispatcher) update(fn func(tx ledger.Tx) error) error {
	d.writes.Add(1)
	return d.w.update(fn)
}

// cursorOf is the stored fan-out cursor: the first outbox sequence not
// fanned out for good.
func cursorOf(tx ledger.Tx) int64 {
	if v := tx.Get(bucketWebhookMeta, metaCursor); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// claimed is an attempt taken by the dispatcher, ready to send.
type claimed struct {
	dkey       []byte
	st         deliveryState // as claimed: Attempts counts this attempt
	ep         endpointRecord
	deliveryID string
}

// launchDue claims the due deliveries there are free slots for and starts
// their attempts. It returns how long until the next one is due.
func (d *dispatcher) launchDue() (time.Duration, error) {
	now := d.w.clock().UTC()
	free := cap(d.slots) - len(d.slots)
	type dueItem struct {
		at   time.Time
		dkey []byte
	}
	var due []dueItem
	var next time.Time
	busy, truncated := false, false
	d.mu.Lock()
	perEP := maps.Clone(d.perEP)
	perAcct := maps.Clone(d.perAcct)
	d.mu.Unlock()
	if len(d.epAccount) > 1<<16 {
		clear(d.epAccount) // endpoints come and go: a cache, rebuilt as needed
	}
	if len(d.foreign) > 1<<16 {
		clear(d.foreign)
	}
	shared := d.e.Ledger().Shared()
	// The due deliveries are gathered per account, oldest first, each
	// account up to its share; the free slots then go round by round to the
	// account with the fewest attempts in flight (ties: the oldest due), so
	// that an account with a backlog for hanging receivers cannot take a
	// freed slot ahead of an account that has none in flight.
	want := min(free, claimBatch)
	byAcct := map[string][]dueItem{}
	var order []string // accounts in order of their oldest due delivery
	gathered := 0
	scanned := 0
	var last []byte
	// abandon: due deliveries this replica cannot send and that no replica
	// sent for the retry horizon after they were due (abandonUnsendable).
	var abandon []dueItem
	horizon := d.w.schedule.withDefaults().Horizon
	err := d.w.read(func(tx ledger.Tx) error {
		return tx.Scan(bucketWebhookDue, nil, d.scanAfter, false, func(k, _ []byte) bool {
			if scanned++; scanned > maxDueScan {
				// The next scan goes on after the last key looked at: a
				// review found deliveries of another account, due behind
				// more skipped ones (saturated endpoints) than one scan
				// looks at, never reached while the skipped ones waited.
				truncated = true
				return false
			}
			last = append(last[:0], k...)
			if len(k) <= 8 {
				return true
			}
			at := time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
			dkey := k[8:]
			if d.isInflight(dkey) {
				return true
			}
			if at.After(now) {
				next = at
				return false
			}
			ep := endpointOfKey(dkey)
			if perEP[string(ep)] >= maxPerEndpoint { // string(ep) in an index expression does not allocate
				return true // its endpoint is saturated; a finishing attempt pokes the loop
			}
			acct, known := d.epAccount[string(ep)]
			if !known {
				var st deliveryState
				if found, err := getJSON(tx, bucketWebhookDeliveries, dkey, &st); err == nil && found {
					acct = st.Account
					d.epAccount[string(ep)] = acct
				}
			}
			if shared && !d.canSend(tx, acct, ep) {
				if !at.Add(horizon).After(now) && len(abandon) < abandonBatch {
					abandon = append(abandon, dueItem{at, append([]byte{}, dkey...)})
				}
				return true // left to a replica that has the account and the endpoint's secret
			}
			if perAcct[acct]+len(byAcct[acct]) >= d.perAcctMax {
				return true // its account has its share in flight; a finishing attempt pokes the loop
			}
			if gathered >= 4*want {
				busy = true // enough to choose from: look again when a slot frees
				return false
			}
			if len(byAcct[acct]) == 0 {
				order = append(order, acct)
			}
			perEP[string(ep)]++
			byAcct[acct] = append(byAcct[acct], dueItem{at, append([]byte{}, dkey...)})
			gathered++
			return true
		})
	})
	if err != nil {
		return 0, err
	}
	if d.scanAfter = nil; truncated {
		d.scanAfter = last
	}
	if len(abandon) > 0 {
		keys := make([][]byte, len(abandon))
		ats := make([]time.Time, len(abandon))
		for i, it := range abandon {
			keys[i], ats[i] = it.dkey, it.at
		}
		if err := d.abandonUnsendable(ats, keys, now, horizon); err != nil {
			return 0, err
		}
		if len(abandon) == abandonBatch {
			return 0, nil // more may be there: look again now
		}
	}
	for len(due) < want {
		best := -1
		for i, acct := range order {
			if len(byAcct[acct]) > 0 && (best < 0 || perAcct[acct] < perAcct[order[best]]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		acct := order[best]
		due = append(due, byAcct[acct][0])
		byAcct[acct] = byAcct[acct][1:]
		perAcct[acct]++
	}
	if len(due) < gathered {
		busy = true // more are due than slots were free
	}
	// What was chosen is claimed and sent oldest first.
	slices.SortStableFunc(due, func(a, b dueItem) int { return a.at.Compare(b.at) })
	if len(due) > 0 && d.every > 0 {
		if wait := d.every/claimsPerFanOut - time.Since(d.lastClaim); wait > 0 {
			// Claimed with the next write: under load one claims many.
			if d.hold <= 0 || wait < d.hold {
				d.hold = wait
			}
			return untilPoked, nil
		}
	}
	if len(due) > 0 {
		d.lastClaim = time.Now()
		var taken []*claimed
		err := d.update(func(tx ledger.Tx) error {
			taken = taken[:0]
			for _, it := range due {
				c, err := d.claim(tx, it.at, it.dkey, now)
				if err != nil {
					return err
				}
				if c != nil {
					taken = append(taken, c)
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		for _, c := range taken {
			d.launch(c)
		}
	}
	switch {
	case (busy || truncated) && len(d.slots) < cap(d.slots):
		return 0, nil // more are due (or not looked at yet) and slots are free: look again now
	case len(d.slots) > 0 && (busy || truncated || next.IsZero()):
		return untilPoked, nil // a finishing attempt pokes the loop
	case next.IsZero() || truncated:
		return maxIdleWait, nil
	}
	return min(next.Sub(now), maxIdleWait), nil
}

// canSend reports whether this replica of a shared log can make a
// delivery of the account to the endpoint: it keeps books for the account
// (the event's document is read through them) and, for an endpoint of the
// accounts file, its own file lists it (the secrets are the file's). A
// replica's accounts file lists what that replica knows, and during a
// rolling deploy the replicas' files differ (README "Several replicas on
// PostgreSQL"): what one cannot sign another can, and claiming it would
// only record a failed attempt and put the delivery back by the retry
// schedule. Such a delivery is left, unclaimed, to a replica that can; it
// waits while none runs. A delivery whose state or endpoint record is not
// found (a stale index entry, a deleted endpoint) is for claim to settle.
func (d *dispatcher) canSend(tx ledger.Tx, account string, ep []byte) bool {
	if account == "" {
		return true
	}
	if _, err := d.e.Books(account); err != nil {
		return false
	}
	foreign, known := d.foreign[string(ep)]
	if !known {
		var r endpointRecord
		found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(account, string(ep)), &r)
		if err != nil || !found {
			return true
		}
		foreign = r.Source == EndpointSourceConfig && !slices.ContainsFunc(d.w.config[account], func(c EndpointConfig) bool { return c.URL == r.URL })
		d.foreign[string(ep)] = foreign // an accounts-file endpoint's id is its URL's: this never changes
	}
	return !foreign
}

// abandonBatch bounds the deliveries abandonUnsendable gives up in one
// transaction.
const abandonBatch = fanOutBatch

// abandonUnsendable gives up the deliveries that no replica of a shared log
// sent for the retry horizon after they were due, because none that ran
// could (canSend: none listed the accounts-file endpoint, whose secret is
// only in the files, or kept books for the account). Typically the endpoint
// was taken out of every replica's file without raising its "generation",
// so that no replica removes it (README "Several replicas on PostgreSQL"):
// left pending, such deliveries were never attempted nor ended, one more
// for every event, with nothing telling them from a slow receiver's. Given
// up like a delivery whose attempts failed for that long (the same horizon:
// the Schedule's), each is failed, with no attempt and with the reason: it
// counts in Stats.Failed and can be redelivered once a replica can send it.
// ats and dkeys are their due-index entries as the scan read them; a
// delivery another replica claimed or finished meanwhile is left as it is.
func (d *dispatcher) abandonUnsendable(ats []time.Time, dkeys [][]byte, now time.Time, horizon time.Duration) error {
	var abandoned []deliveryState
	err := d.update(func(tx ledger.Tx) error {
		abandoned = abandoned[:0]
		for i, dkey := range dkeys {
			at := ats[i]
			var old deliveryState
			found, err := getJSON(tx, bucketWebhookDeliveries, dkey, &old)
			if err != nil {
				return err
			}
			if !found || old.Status != DeliveryPending || !old.NextAt.Equal(at) || at.Add(horizon).After(now) {
				continue
			}
			st := old
			st.Status, st.AbandonedAt = DeliveryFailed, &now
			if _, err := d.e.Books(st.Account); err != nil {
				st.Reason = fmt.Sprintf("not sent: for %v after it was due, no running replica kept books for account %s", horizon, st.Account)
			} else {
				st.Reason = fmt.Sprintf("not sent: for %v after it was due, no running replica's accounts file listed this endpoint (whose secret only the file holds); taken out of the files without raising their \"generation\"? Redeliver once a replica lists it", horizon)
			}
			if err := putDelivery(tx, &old, &st); err != nil {
				return err
			}
			abandoned = append(abandoned, st)
		}
		return nil
	})
	if err == nil && len(abandoned) > 0 {
		first := abandoned[0]
		d.w.log.Warn("webhook deliveries failed: no replica could send them within the retry horizon",
			"deliveries", len(abandoned), "first_account", first.Account, "first_endpoint", first.Endpoint, "first_event", first.EventID, "reason", first.Reason)
	}
	return err
}

// endpointOfKey is the endpoint id of a delivery key.
func endpointOfKey(dkey []byte) []byte {
	if i := bytes.IndexByte(dkey, 0); i >= 0 {
		return dkey[:i]
	}
	return dkey
}

func (d *dispatcher) isInflight(dkey []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inflight[string(dkey)]
}

// claim takes one due delivery: it counts the attempt and leases it, or
// cancels it when its endpoint is gone or disabled. nil means nothing to
// send.
func (d *dispatcher) claim(tx ledger.Tx, at time.Time, dkey []byte, now time.Time) (*claimed, error) {
	var old deliveryState
	found, err := getJSON(tx, bucketWebhookDeliveries, dkey, &old)
	if err != nil {
		return nil, err
	}
	if !found || old.Status != DeliveryPending || !old.NextAt.Equal(at) {
		return nil, tx.Delete(bucketWebhookDue, dueKey(at, dkey)) // a stale index entry
	}
	st := old
	var ep endpointRecord
	found, err = getJSON(tx, bucketWebhookEndpoints, endpointKey(st.Account, st.Endpoint), &ep)
	if err != nil {
		return nil, err
	}
	if !found || ep.CreatedAt.UnixNano() != st.EndpointCreated || ep.DisabledAt != nil {
		st.Status = DeliveryCancelled
		return nil, putDelivery(tx, &old, &st)
	}
	id, err := d.w.randomHex(12)
	if err != nil {
		return nil, err
	}
	st.Attempts++
	if st.RoundStart.IsZero() {
		st.RoundStart = now
	}
	// The lease: in this process the in-flight set keeps the attempt from
	// being launched twice; another replica of a shared log, and the next
	// start after a crash, make it again once the lease has passed. On a
	// shared log the lease outlasts the attempt's timeout by leaseMargin,
	// so that no other replica starts a second copy while this one may
	// still be open.
	st.NextAt = now.Add(d.lease)
	if err := putDelivery(tx, &old, &st); err != nil {
		return nil, err
	}
	return &claimed{dkey: dkey, st: st, ep: ep, deliveryID: "dlv_" + id}, nil
}

func (d *dispatcher) launch(c *claimed) {
	key, ep, acct := string(c.dkey), c.ep.ID, c.st.Account
	d.mu.Lock()
	d.inflight[key] = true
	d.perEP[ep]++
	d.perAcct[acct]++
	d.mu.Unlock()
	d.slots <- struct{}{}
	d.wg.Add(1)
	released := false
	// release frees the attempt's slot and its place in the endpoint's and
	// the account's shares once the receiver has answered; the delivery
	// stays in flight (never launched again) until its outcome is stored.
	release := func() {
		if released {
			return
		}
		released = true
		<-d.slots
		d.mu.Lock()
		if d.perEP[ep]--; d.perEP[ep] <= 0 {
			delete(d.perEP, ep)
		}
		if d.perAcct[acct]--; d.perAcct[acct] <= 0 {
			delete(d.perAcct, acct)
		}
		d.mu.Unlock()
		d.poke()
	}
	go func() {
		defer func() {
			release()
			d.mu.Lock()
			delete(d.inflight, key)
			d.mu.Unlock()
			d.wg.Done()
			d.poke()
		}()
		if err := d.attempt(c, release); err != nil && !errors.Is(err, ledger.ErrClosed) {
			d.w.log.Error("webhook dispatcher: recording an attempt", "endpoint", c.ep.ID, "event", c.st.EventID, "err", err)
		}
	}()
}

// attempt sends one claimed delivery and records the outcome; it calls
// release once the receiver has answered.
func (d *dispatcher) attempt(c *claimed, release func()) error {
	var resp Response
	m, err := d.message(c)
	if err == nil {
		ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
		resp, err = d.sender.Send(ctx, m)
		cancel()
	}
	if err != nil && d.ctx.Err() != nil {
		return d.requeue(c)
	}
	release()
	return d.record(c, resp, err)
}

// message builds and signs the attempt's request.
func (d *dispatcher) message(c *claimed) (*Message, error) {
	secrets, err := d.w.secrets(&c.ep)
	if err != nil {
		return nil, err
	}
	ev, err := eventAt(d.e.Ledger(), c.st.Sequence)
	if err != nil {
		return nil, fmt.Errorf("webhooks: event %d: %w", c.st.Sequence, err)
	}
	p, err := d.w.payload(c.ep.Account, ev)
	if err != nil {
		return nil, err
	}
	if p.Checkpoint, err = d.w.checkpointText(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	m := &Message{
		URL: c.ep.URL, EventID: ev.ID, EventType: ev.Type, DeliveryID: c.deliveryID,
		Attempt: c.st.Attempts, Timestamp: d.w.clock().Unix(), Body: body,
	}
	m.Sign(secrets...)
	return m, nil
}

// requeue makes an attempt abandoned by Close due at once, so the next
// engine on this data directory sends it first.
func (d *dispatcher) requeue(c *claimed) error {
	now := d.w.clock().UTC()
	return d.update(func(tx ledger.Tx) error {
		var cur deliveryState
		found, err := getJSON(tx, bucketWebhookDeliveries, c.dkey, &cur)
		if err != nil || !found || cur.Status != DeliveryPending || cur.Round != c.st.Round {
			return err
		}
		old := cur
		cur.NextAt = now
		return putDelivery(tx, &old, &cur)
	})
}

// outcomeRecord is one attempt's outcome on its way to the store.
type outcomeRecord struct {
	c       *claimed
	resp    Response
	outcome Outcome
	att     *Attempt
	now     time.Time
	u       float64       // the jitter of the next attempt's time
	next    deliveryState // the delivery as recorded
	done    chan error
}

// record stores the outcome of an attempt in the delivery state and on the
// endpoint, and disables the endpoint on 410. The outcomes of attempts that
// end while a write is under way are stored together in the next
// (recorder).
func (d *dispatcher) record(c *claimed, resp Response, sendErr error) error {
	now := d.w.clock().UTC()
	r := &outcomeRecord{c: c, resp: resp, outcome: OutcomeOf(resp, sendErr), now: now, u: d.jitter(), done: make(chan error, 1)}
	r.att = &Attempt{
		At: now.Format(time.RFC3339), EventID: c.st.EventID, DeliveryID: c.deliveryID,
		Attempt: c.st.Attempts, Status: resp.Status, Error: attemptError(resp, sendErr),
	}
	switch r.outcome {
	case Delivered:
		r.att.Outcome = "delivered"
	case Gone:
		r.att.Outcome = "gone"
	default:
		r.att.Outcome = "failed"
	}
	d.outcomes <- r
	if err := <-r.done; err != nil {
		return err
	}
	log := d.w.log.With("account", c.ep.Account, "endpoint", c.ep.ID, "event", c.st.EventID, "delivery", c.deliveryID, "attempt", c.st.Attempts)
	switch {
	case r.outcome == Gone:
		log.Warn("webhook endpoint disabled: the receiver answered 410 Gone")
	case r.next.Status == DeliveryFailed:
		log.Warn("webhook delivery failed: retries exhausted", "status", resp.Status, "err", r.att.Error)
	case r.outcome == Retry && sendErr != nil:
		log.Info("webhook attempt failed", "status", resp.Status, "err", sendErr, "next", r.next.NextAt)
	case r.outcome == Retry:
		log.Info("webhook attempt failed", "status", resp.Status, "err", r.att.Error, "next", r.next.NextAt)
	default:
		log.Debug("webhook delivered", "status", resp.Status)
	}
	return nil
}

// recorder stores the outcomes sent to d.outcomes until it is closed: all
// those waiting in one write transaction (group commit), at most one write
// every d.every, so that under load the outcomes cost a bounded number of
// writes a second rather than one each.
// Should the batch fail, each is written on its own, so that one bad
// delivery state costs only its own outcome.
func (d *dispatcher) recorder(done chan<- struct{}) {
	defer close(done)
	var last time.Time
	for r := range d.outcomes {
		if wait := d.every - time.Since(last); d.every > 0 && wait > 0 {
			time.Sleep(wait) // the outcomes of attempts ending meanwhile join
		}
		last = time.Now()
		batch := []*outcomeRecord{r}
	drain:
		for len(batch) < 4*cap(d.slots) {
			select {
			case r, ok := <-d.outcomes:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		err := d.update(func(tx ledger.Tx) error {
			for _, r := range batch {
				if err := d.applyOutcome(tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		for _, r := range batch {
			if err != nil && len(batch) > 1 {
				r.done <- d.update(func(tx ledger.Tx) error { return d.applyOutcome(tx, r) })
				continue
			}
			r.done <- err
		}
	}
}

// applyOutcome writes one outcome in tx.
func (d *dispatcher) applyOutcome(tx ledger.Tx, r *outcomeRecord) error {
	c, now := r.c, r.now
	var cur deliveryState
	found, err := getJSON(tx, bucketWebhookDeliveries, c.dkey, &cur)
	if err != nil || !found {
		return err
	}
	old := cur
	cur.LastAttempt = r.att
	// A redelivery requested while this attempt ran started a new
	// round: it keeps its schedule (it was asked for after this send),
	// except that one waiting for this attempt's lease is due now.
	if cur.Round != c.st.Round && cur.Status == DeliveryPending && cur.RoundStart.IsZero() && cur.NextAt.After(now) {
		cur.NextAt = now
	}
	if cur.Round == c.st.Round && cur.Status == DeliveryPending {
		switch r.outcome {
		case Delivered:
			cur.Status, cur.DeliveredAt = DeliveryDelivered, &now
		case Gone:
			cur.Status = DeliveryFailed
		default:
			cur.RoundFailed++
			if at, ok := d.w.schedule.Next(cur.RoundStart, now, cur.RoundFailed, r.resp.RetryAfter, r.u); ok {
				cur.NextAt = at
			} else {
				cur.Status = DeliveryFailed
			}
		}
	}
	if err := putDelivery(tx, &old, &cur); err != nil {
		return err
	}
	r.next = cur
	var ep endpointRecord
	found, err = getJSON(tx, bucketWebhookEndpoints, endpointKey(c.ep.Account, c.ep.ID), &ep)
	if err != nil || !found || ep.CreatedAt.UnixNano() != c.st.EndpointCreated {
		return err
	}
	ep.LastAttempt = r.att
	if r.outcome == Gone && ep.DisabledAt == nil {
		ep.DisabledAt, ep.DisabledWhy = &now, fmt.Sprintf("the receiver answered 410 Gone to delivery %s", c.deliveryID)
	}
	return putJSON(tx, bucketWebhookEndpoints, endpointKey(c.ep.Account, c.ep.ID), ep)
}

// attemptError is the text of an attempt's failure as the account reads it
// (lastAttempt.error). An address refused at connect time is named by its
// class only: the host name is the account's, but the address is what the
// operator's resolver made of it, and naming it would let an account map
// the operator's internal names by registering them (the operator's log
// keeps the address). The same holds for the other network errors, which
// net writes with addresses: the one a connection went to or came from
// (the server's own) and the operator's DNS server; they are named by what
// failed and why.
func attemptError(resp Response, err error) string {
	var s string
	var refused *AddressError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &refused):
		s = fmt.Sprintf("%v: the endpoint's host resolved to a %s address, which deliveries may not reach", ErrAddressNotAllowed, refused.Class)
	case errors.As(err, &dnsErr):
		s = fmt.Sprintf("webhooks: the endpoint's host name %s did not resolve: %s", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &opErr):
		s = fmt.Sprintf("webhooks: the connection to the endpoint failed (%s): %v", opErr.Op, opErr.Err)
	case err != nil:
		s = err.Error()
	case resp.Status >= 300 && resp.Status <= 399:
		s = fmt.Sprintf("redirect to %q not followed: update the endpoint URL", resp.Location)
	case resp.Status < 200 || resp.Status > 299:
		s = fmt.Sprintf("HTTP %d", resp.Status)
	}
	if len(s) > maxErrText {
		s = s[:maxErrText] + "…"
	}
	return s
}

// jitter draws u in [0, 1) for the retry schedule from the engine's
// randomness; if none can be had, the middle of the range.
func (d *dispatcher) jitter() float64 {
	var b [8]byte
	if _, err := io.ReadFull(d.w.rand, b[:]); err != nil {
		return 0.5
	}
	return float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53)
}
