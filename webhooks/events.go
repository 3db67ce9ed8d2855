package webhooks

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
)

// EventPayload is the JSON body of a webhook delivery and an item of the
// event list. Fields may be added; none are renamed (README "Webhooks").
type EventPayload struct {
	ID       string          `json:"id"`       // "evt_" + entry id; stable across deliveries: deduplicate on it
	Type     string          `json:"type"`     // settlement.processed, settlement.pending_review, ...
	Created  string          `json:"created"`  // when the entry was recorded (RFC 3339 UTC)
	Sequence int64           `json:"sequence"` // the ledger index: for ordering and gap detection
	Data     json.RawMessage `json:"data"`     // the fiscal record as stored in that entry
	// Checkpoint is the latest signed checkpoint of the log (C2SP
	// tlog-checkpoint signed note) when the delivery was made; it covers
	// the entry, whose inclusion proof GET /v1/log/proof/inclusion gives.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// EventList is a page of the account's events, in sequence order, in the
// one page shape of every list of the service: has_more, and next_cursor
// to pass as cursor= for the next page.
type EventList struct {
	Object  string         `json:"object"` // "list"
	Data    []EventPayload `json:"data"`
	HasMore bool           `json:"has_more"`
	// NextCursor is the cursor of the next page (the last sequence listed,
	// in decimal), present exactly when HasMore.
	NextCursor string `json:"next_cursor,omitempty"`
	// Checkpoint is the latest signed checkpoint, read after the page: it
	// covers every event listed.
	Checkpoint string `json:"checkpoint"`
}

// EventDetail is one event with its deliveries to the account's current
// endpoints.
type EventDetail struct {
	EventPayload
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is the state of one event's delivery to one endpoint.
type Delivery struct {
	EndpointID    string   `json:"endpointId"`
	Status        string   `json:"status"`   // pending | delivered | failed | cancelled
	Attempts      int      `json:"attempts"` // the X-Service-Attempt of the latest attempt
	NextAttemptAt string   `json:"nextAttemptAt,omitempty"`
	DeliveredAt   string   `json:"deliveredAt,omitempty"`
	LastAttempt   *Attempt `json:"lastAttempt,omitempty"`
	// Reason says why a delivery ended without an attempt's outcome
	// deciding it (failed: no replica could send it within the retry
	// horizon).
	Reason string `json:"reason,omitempty"`
}

// Page sizes of Events.
const (
	DefaultEventsLimit = 50
	MaxEventsLimit     = 200
)

// payload joins an event of the account with the document stored in its
// entry, read by fiscal.Books.EventDocument (verified against the log, the
// event's record, the account's): an outbox or index that is damaged never
// sends or lists another account's document, nor altered bytes.
func (w *Service) payload(accountID string, ev fiscal.Event) (EventPayload, error) {
	books, err := w.e.Books(accountID)
	if err != nil {
		return EventPayload{}, err
	}
	data, err := books.EventDocument(ev)
	if err != nil {
		return EventPayload{}, err
	}
	return EventPayload{ID: ev.ID, Type: ev.Type, Created: ev.Created, Sequence: ev.Sequence, Data: data}, nil
}

func (w *Service) checkpointText() (string, error) {
	cp, err := w.e.Ledger().Checkpoint()
	if err != nil {
		return "", err
	}
	return string(cp.Note), nil
}

// Events lists the account's events after the cursor ("" for the first
// page: the next_cursor of the previous page), at most limit of them (0
// means DefaultEventsLimit, at most MaxEventsLimit), each with its record:
// the backfill for a receiver that missed deliveries or detected a gap in
// the sequences. Sequences are the global ledger index, so one account's
// sequences have gaps where other accounts' entries are. An account the
// engine keeps no books for is NOT_FOUND, not an empty list.
func (w *Service) Events(ctx context.Context, accountID, cursor string, limit int) (*EventList, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	after := int64(-1)
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != cursor {
			return nil, badRequest("cursor", "is not a cursor of this list (the next_cursor of a page)")
		}
		after = n
	}
	switch {
	case limit < 0 || limit > MaxEventsLimit:
		return nil, badRequest("limit", "must be between 1 and %d", MaxEventsLimit)
	case limit == 0:
		limit = DefaultEventsLimit
	}
	events, more, err := accountEvents(w.e.Ledger(), accountID, after, limit)
	if err != nil {
		return nil, err
	}
	list := &EventList{Object: "list", Data: []EventPayload{}, HasMore: more}
	for _, ev := range events {
		p, err := w.payload(accountID, ev)
		if err != nil {
			return nil, fiscal.StoreError(err)
		}
		list.Data = append(list.Data, p)
		if more {
			list.NextCursor = strconv.FormatInt(ev.Sequence, 10)
		}
	}
	if list.Checkpoint, err = w.checkpointText(); err != nil {
		return nil, fiscal.StoreError(err)
	}
	return list, nil
}

// Event returns one of the account's events with its record, the latest
// checkpoint, and its deliveries to the account's endpoints.
func (w *Service) Event(ctx context.Context, accountID, eventID string) (*EventDetail, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	ev, err := lookupEvent(w.e.Ledger(), accountID, eventID)
	if err != nil {
		return nil, err
	}
	p, err := w.payload(accountID, ev)
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	if p.Checkpoint, err = w.checkpointText(); err != nil {
		return nil, fiscal.StoreError(err)
	}
	d := &EventDetail{EventPayload: p, Deliveries: []Delivery{}}
	err = w.read(func(tx ledger.Tx) error {
		endpoints, err := accountEndpoints(tx, accountID)
		if err != nil {
			return err
		}
		for _, ep := range endpoints {
			var st deliveryState
			found, err := getJSON(tx, bucketWebhookDeliveries, deliveryKey(ep.ID, ev.Sequence), &st)
			if err != nil {
				return err
			}
			if found && st.EndpointCreated == ep.CreatedAt.UnixNano() {
				d.Deliveries = append(d.Deliveries, st.view())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// attemptOpen reports whether the delivery has an attempt that was
// claimed and whose outcome is not stored, and whose lease has not passed:
// it may still be in flight, here or on another replica.
func (st deliveryState) attemptOpen(now time.Time) bool {
	recorded := 0
	if st.LastAttempt != nil {
		recorded = st.LastAttempt.Attempt
	}
	return st.Status == DeliveryPending && st.Attempts > recorded && st.NextAt.After(now)
}

func (st deliveryState) view() Delivery {
	v := Delivery{EndpointID: st.Endpoint, Status: st.Status, Attempts: st.Attempts, LastAttempt: st.LastAttempt, Reason: st.Reason}
	if st.Status == DeliveryPending {
		v.NextAttemptAt = st.NextAt.UTC().Format(time.RFC3339)
	}
	if st.DeliveredAt != nil {
		v.DeliveredAt = st.DeliveredAt.UTC().Format(time.RFC3339)
	}
	return v
}

// Redeliver schedules a new delivery of the account's event, due now,
// to each of the account's enabled endpoints, or to endpointID alone when
// it is not "". Every endpoint gets it, even one created after the event.
// A delivery still pending is moved forward; a finished one starts a new
// round with a fresh retry window. One with an attempt still open (on this
// or another replica) is made once that attempt's outcome is stored, never
// beside it. The event id stays the same: receivers
// deduplicate on it.
func (w *Service) Redeliver(ctx context.Context, accountID, eventID, endpointID string) ([]Delivery, error) {
	res, err := w.RedeliverIdempotent(ctx, accountID, eventID, endpointID, "")
	if err != nil {
		return nil, err
	}
	return res.Deliveries, nil
}

// RedeliverResult is the outcome of RedeliverIdempotent.
type RedeliverResult struct {
	Deliveries []Delivery
	// Replayed: the deliveries are those the Idempotency-Key's first
	// request scheduled, as it answered them; nothing was scheduled.
	Replayed bool
}

// RedeliverIdempotent is Redeliver bound to an Idempotency-Key
// (draft-ietf-httpapi-idempotency-key-header): "" is Redeliver. The key is
// the account's, in the one key space of its webhook operations
// (CreateEndpointIdempotent). The first request schedules the deliveries
// and binds the key to its answer in the same transaction, so that
// concurrent requests with the key schedule one round; the same key for
// the same event and endpoint filter answers the first request's
// deliveries again (Replayed) and schedules nothing, whatever became of
// them since (GET /v1/events/{id} reads their state now). The key bound to
// another event, filter or operation is 409 IDEMPOTENCY_CONFLICT, and
// nothing is scheduled.
func (w *Service) RedeliverIdempotent(ctx context.Context, accountID, eventID, endpointID, idempotencyKey string) (*RedeliverResult, error) {
	if err := fiscal.InputError(wire.IdempotencyKey(idempotencyKey)); err != nil {
		return nil, err
	}
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	ev, err := lookupEvent(w.e.Ledger(), accountID, eventID)
	if err != nil {
		return nil, err
	}
	now := w.clock().UTC()
	fingerprint := opFingerprint(opRedeliver, eventID, endpointID)
	var out []Delivery
	var replayed bool
	err = w.update(func(tx ledger.Tx) error {
		out, replayed = []Delivery{}, false
		if idempotencyKey != "" {
			ic, err := boundKey(tx, accountID, idempotencyKey, opRedeliver, fingerprint)
			if err != nil || ic != nil {
				if err == nil {
					replayed, err = true, json.Unmarshal(ic.Answer, &out)
				}
				return err
			}
		}
		endpoints, err := accountEndpoints(tx, accountID)
		if err != nil {
			return err
		}
		targets := endpoints[:0:0]
		for _, ep := range endpoints {
			switch {
			case endpointID != "" && ep.ID != endpointID:
			case ep.DisabledAt != nil && endpointID != "":
				return webhookConflict("endpoint %s is disabled; enable it first", ep.ID)
			case ep.DisabledAt == nil:
				targets = append(targets, ep)
			}
		}
		if endpointID != "" && len(targets) == 0 {
			return endpointNotFound(endpointID)
		}
		if len(targets) == 0 {
			return webhookConflict("the account has no enabled webhook endpoint")
		}
		for _, ep := range targets {
			dkey := deliveryKey(ep.ID, ev.Sequence)
			var old deliveryState
			found, err := getJSON(tx, bucketWebhookDeliveries, dkey, &old)
			if err != nil {
				return err
			}
			st := old
			if !found || old.EndpointCreated != ep.CreatedAt.UnixNano() {
				st = deliveryState{Account: accountID, Endpoint: ep.ID, EndpointCreated: ep.CreatedAt.UnixNano(), Sequence: ev.Sequence, EventID: ev.ID}
			}
			due := now
			if st.attemptOpen(now) {
				// An attempt of the event may still be open, on this or
				// another replica: the new round waits for its lease, and
				// starts as soon as its outcome is stored (applyOutcome),
				// never beside it.
				due = st.NextAt
			}
			st.Status, st.Round, st.RoundStart, st.RoundFailed, st.NextAt, st.DeliveredAt = DeliveryPending, st.Round+1, time.Time{}, 0, due, nil
			st.Reason, st.AbandonedAt = "", nil
			var prev *deliveryState
			if found {
				prev = &old
			}
			if err := putDelivery(tx, prev, &st); err != nil {
				return err
			}
			out = append(out, st.view())
		}
		if idempotencyKey == "" {
			return nil
		}
		answer, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return bindKey(tx, accountID, idempotencyKey, idempotentCreate{Op: opRedeliver, Fingerprint: fingerprint, Answer: answer})
	})
	if err != nil {
		return nil, err
	}
	if !replayed {
		w.notify()
	}
	return &RedeliverResult{Deliveries: out, Replayed: replayed}, nil
}
