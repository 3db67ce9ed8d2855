package webhooks

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/ledger"
)

// The readers of the engine's outbox. The engine writes one fiscal.Event
// per ledger entry, in the entry's own transaction, to the side bucket
// fiscal.OutboxEvents under the entry's ledger index (its sequence), and
// posts every entry under its account in fiscal.OutboxAccountIndex;
// webhooks fans the events out, delivers them and lists them.

// scanEvents calls fn for each event with sequence ≥ from, in order, inside
// tx (a side-data transaction of the engine's ledger), until fn returns
// false. ok is false for a stored event that cannot be read.
func scanEvents(tx ledger.Tx, from int64, fn func(seq int64, ev fiscal.Event, ok bool) bool) error {
	var after []byte
	if from > 0 {
		after = be64(from - 1)
	}
	return tx.Scan(fiscal.OutboxEvents, nil, after, false, func(k, v []byte) bool {
		var ev fiscal.Event
		ok := len(k) == 8 && json.Unmarshal(v, &ev) == nil
		return fn(int64(binary.BigEndian.Uint64(k)), ev, ok)
	})
}

// eventAt reads the event at a sequence (the entry's ledger index).
func eventAt(l *ledger.Ledger, seq int64) (fiscal.Event, error) {
	var ev fiscal.Event
	raw, err := l.Get(fiscal.OutboxEvents, be64(seq))
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("webhooks: outbox event %d: %w", seq, err)
	}
	return ev, nil
}

// accountEvents returns the account's events with sequence greater than
// after (-1 for the first), at most limit of them and whether more follow.
// Sequences are the global ledger index, so one account's sequences have
// gaps where other accounts' entries are.
func accountEvents(l *ledger.Ledger, accountID string, after int64, limit int) ([]fiscal.Event, bool, error) {
	prefix := []byte(accountID + "\x00")
	var cursor []byte
	if after >= 0 {
		cursor = binary.BigEndian.AppendUint64(append([]byte(accountID), 0), uint64(after))
	}
	hits, err := l.Scan(fiscal.OutboxAccountIndex, prefix, cursor, false, limit+1)
	if err != nil {
		return nil, false, fiscal.StoreError(err)
	}
	more := len(hits) > limit
	if more {
		hits = hits[:limit]
	}
	out := make([]fiscal.Event, 0, len(hits))
	for _, h := range hits {
		ev, err := eventAt(l, int64(binary.BigEndian.Uint64(h.Key[len(h.Key)-8:])))
		if err != nil {
			return nil, false, fiscal.StoreError(err)
		}
		out = append(out, ev)
	}
	return out, more, nil
}

// lookupEvent finds the account's event by id ("evt_" + entry id); another
// account's event is not found.
func lookupEvent(l *ledger.Ledger, accountID, eventID string) (fiscal.Event, error) {
	notFound := &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "event " + shown.Bare(eventID) + " not found"}
	entryID, ok := strings.CutPrefix(eventID, "evt_")
	if !ok || entryID == "" {
		return fiscal.Event{}, notFound
	}
	ent, err := l.Entry(entryID)
	if errors.Is(err, ledger.ErrNotFound) {
		return fiscal.Event{}, notFound
	}
	if err != nil {
		return fiscal.Event{}, fiscal.StoreError(err)
	}
	ev, err := eventAt(l, ent.Index)
	if errors.Is(err, ledger.ErrNotFound) {
		return fiscal.Event{}, notFound
	}
	if err != nil {
		return fiscal.Event{}, fiscal.StoreError(err)
	}
	if ev.Account != accountID || ev.ID != eventID {
		return fiscal.Event{}, notFound
	}
	return ev, nil
}

// nextSequence is the sequence the next event will get, as tx sees the
// outbox: one past the last. Events are appended in index order (one
// writer), so no smaller sequence can appear later.
func nextSequence(tx ledger.Tx) (int64, error) {
	next := int64(0)
	err := tx.Scan(fiscal.OutboxEvents, nil, nil, true, func(k, _ []byte) bool {
		if len(k) == 8 {
			next = int64(binary.BigEndian.Uint64(k)) + 1
		}
		return false
	})
	return next, err
}
