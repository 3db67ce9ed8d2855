package fiscal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fiscal402/fiscal402/ledger"
)

// Outbox is the engine's outbox: one Event per ledger entry, written in the
// entry's own transaction, so there are no lost or phantom events. Its
// readers (package webhooks) deliver and list them.
type Outbox struct {
	l    *ledger.Ledger
	mu   sync.Mutex
	subs []func()
}

// Subscribe registers fn to be called after every commit that wrote an
// event. fn must not block (a poke of a buffered channel).
func (o *Outbox) Subscribe(fn func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.subs = append(o.subs, fn)
}

func (o *Outbox) notify() {
	o.mu.Lock()
	subs := o.subs
	o.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

// Scan calls fn for each event with sequence ≥ from, in order, inside tx (a
// side-data transaction of the engine's ledger), until fn returns false. ok
// is false for a stored event that cannot be read.
func (o *Outbox) Scan(tx ledger.Tx, from int64, fn func(seq int64, ev Event, ok bool) bool) error {
	var after []byte
	if from > 0 {
		after = be64(from - 1)
	}
	return tx.Scan(bucketEvents, nil, after, false, func(k, v []byte) bool {
		var ev Event
		ok := len(k) == 8 && json.Unmarshal(v, &ev) == nil
		return fn(int64(binary.BigEndian.Uint64(k)), ev, ok)
	})
}

// At reads the event at a sequence (the entry's ledger index).
func (o *Outbox) At(seq int64) (Event, error) {
	var ev Event
	raw, err := o.l.Get(bucketEvents, be64(seq))
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("fiscal: outbox event %d: %w", seq, err)
	}
	return ev, nil
}

// Document returns the document (the record, or the fiscal event) stored in
// the event's entry: the body a receiver gets.
func (o *Outbox) Document(ev Event) ([]byte, error) {
	return o.l.Doc(ev.EntryID, docRecord)
}

// Account returns the account's events with sequence greater than after
// (-1 for the first), at most limit of them and whether more follow.
// Sequences are the global ledger index, so one account's sequences have
// gaps where other accounts' entries are.
func (o *Outbox) Account(accountID string, after int64, limit int) ([]Event, bool, error) {
	var cursor []byte
	if after >= 0 {
		cursor = accountIndexKey(accountID, after)
	}
	hits, err := o.l.Scan(indexAccountEvents, []byte(accountID+"\x00"), cursor, false, limit+1)
	if err != nil {
		return nil, false, storeError(err)
	}
	more := len(hits) > limit
	if more {
		hits = hits[:limit]
	}
	out := make([]Event, 0, len(hits))
	for _, h := range hits {
		ev, err := o.At(int64(binary.BigEndian.Uint64(h.Key[len(h.Key)-8:])))
		if err != nil {
			return nil, false, storeError(err)
		}
		out = append(out, ev)
	}
	return out, more, nil
}

// Lookup finds the account's event by id ("evt_" + entry id); another
// account's event is not found.
func (o *Outbox) Lookup(accountID, eventID string) (Event, error) {
	entryID, ok := strings.CutPrefix(eventID, "evt_")
	if !ok || entryID == "" {
		return Event{}, notFound("event " + eventID)
	}
	ent, err := o.l.Entry(entryID)
	if errors.Is(err, ledger.ErrNotFound) {
		return Event{}, notFound("event " + eventID)
	}
	if err != nil {
		return Event{}, storeError(err)
	}
	ev, err := o.At(ent.Index)
	if errors.Is(err, ledger.ErrNotFound) {
		return Event{}, notFound("event " + eventID)
	}
	if err != nil {
		return Event{}, storeError(err)
	}
	if ev.Account != accountID || ev.ID != eventID {
		return Event{}, notFound("event " + eventID)
	}
	return ev, nil
}

// Next is the sequence the next event will get, as tx sees the outbox: one
// past the last. Events are appended in index order (one writer), so no
// smaller sequence can appear later.
func (o *Outbox) Next(tx ledger.Tx) (int64, error) {
	next := int64(0)
	err := tx.Scan(bucketEvents, nil, nil, true, func(k, _ []byte) bool {
		if len(k) == 8 {
			next = int64(binary.BigEndian.Uint64(k)) + 1
		}
		return false
	})
	return next, err
}
