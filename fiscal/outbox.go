package fiscal

import "sync"

// The outbox as the ledger holds it: one Event per ledger entry, written in
// the entry's own transaction, so there are no lost or phantom events. The
// engine only writes it; its readers (package webhooks, which delivers and
// lists the events) read these buckets of Engine.Ledger.
const (
	// OutboxEvents is the side bucket of the events: the event's sequence
	// (its entry's ledger index, 8 bytes big-endian) → the Event as JSON.
	// Events are appended in index order by the one committer.
	OutboxEvents = bucketEvents
	// OutboxAccountIndex is the index of each account's entries: key the
	// account id, a zero byte and the entry's 8-byte big-endian ledger
	// index (ledger.Posting.AppendIndex).
	OutboxAccountIndex = indexAccountEvents
	// OutboxDocument names the document stored with every entry (the record
	// or fiscal event as of that entry): the body a receiver gets, read by
	// Books.EventDocument (verified against the log, never by its name alone).
	OutboxDocument = docRecord
)

// outbox tells the outbox's subscribers that an event was written.
type outbox struct {
	mu   sync.Mutex
	subs []func()
}

// Subscribe registers fn to be called after every commit that wrote an
// outbox event (OutboxEvents). fn must not block (a poke of a buffered
// channel).
func (e *Engine) Subscribe(fn func()) {
	o := e.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	o.subs = append(o.subs, fn)
}

func (o *outbox) notify() {
	o.mu.Lock()
	subs := o.subs
	o.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}
