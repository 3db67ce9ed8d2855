package fiscal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// EventPayload is the JSON body of a webhook delivery and an item of the
// event list. Fields may be added; none are renamed (spec §6).
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

// EventList is a page of the account's events, in sequence order.
type EventList struct {
	Object  string         `json:"object"` // "list"
	Data    []EventPayload `json:"data"`
	HasMore bool           `json:"hasMore"`
	// NextAfter is the after= of the next page: the last sequence listed,
	// or the after asked for when the page is empty.
	NextAfter int64 `json:"nextAfter"`
	// Checkpoint is the latest signed checkpoint, read after the page: it
	// covers every event listed.
	Checkpoint string `json:"checkpoint"`
}

// EventDetail is one event with its deliveries to the account's current
// endpoints.
type EventDetail struct {
	EventPayload
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDelivery is the state of one event's delivery to one endpoint.
type WebhookDelivery struct {
	EndpointID    string          `json:"endpointId"`
	Status        string          `json:"status"`   // pending | delivered | failed | cancelled
	Attempts      int             `json:"attempts"` // the X-Service-Attempt of the latest attempt
	NextAttemptAt string          `json:"nextAttemptAt,omitempty"`
	DeliveredAt   string          `json:"deliveredAt,omitempty"`
	LastAttempt   *WebhookAttempt `json:"lastAttempt,omitempty"`
}

// Page sizes of Events.
const (
	DefaultEventsLimit = 50
	MaxEventsLimit     = 200
)

// eventAt reads the outbox event at a sequence.
func (e *Engine) eventAt(seq int64) (Event, error) {
	var ev Event
	raw, err := e.ledger.Get(bucketEvents, be64(seq))
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("fiscal: outbox event %d: %w", seq, err)
	}
	return ev, nil
}

// eventPayload joins an event with the record stored in its entry.
func (e *Engine) eventPayload(ev Event) (EventPayload, error) {
	data, err := e.ledger.Doc(ev.EntryID, docRecord)
	if err != nil {
		return EventPayload{}, err
	}
	return EventPayload{ID: ev.ID, Type: ev.Type, Created: ev.Created, Sequence: ev.Sequence, Data: data}, nil
}

func (e *Engine) checkpointText() (string, error) {
	cp, err := e.ledger.Checkpoint()
	if err != nil {
		return "", err
	}
	return string(cp.Note), nil
}

// Events lists the account's events with sequence greater than after (-1
// for the first page), at most limit of them (0 means DefaultEventsLimit,
// at most MaxEventsLimit), each with its record: the backfill for a
// receiver that missed deliveries or detected a gap in the sequences.
// Sequences are the global ledger index, so one account's sequences have
// gaps where other accounts' entries are.
func (e *Engine) Events(ctx context.Context, accountID string, after int64, limit int) (*EventList, error) {
	switch {
	case after < -1:
		return nil, badRequest("after", "must be a sequence (0 or more), or absent for the first page")
	case limit < 0 || limit > MaxEventsLimit:
		return nil, badRequest("limit", "must be between 1 and %d", MaxEventsLimit)
	case limit == 0:
		limit = DefaultEventsLimit
	}
	prefix := []byte(accountID + "\x00")
	var cursor []byte
	if after >= 0 {
		cursor = accountIndexKey(accountID, after)
	}
	hits, err := e.ledger.Scan(indexAccountEvents, prefix, cursor, false, limit+1)
	if err != nil {
		return nil, storeError(err)
	}
	list := &EventList{Object: "list", Data: []EventPayload{}, NextAfter: after}
	if len(hits) > limit {
		list.HasMore, hits = true, hits[:limit]
	}
	for _, h := range hits {
		seq := int64(binary.BigEndian.Uint64(h.Key[len(h.Key)-8:]))
		ev, err := e.eventAt(seq)
		if err != nil {
			return nil, storeError(err)
		}
		p, err := e.eventPayload(ev)
		if err != nil {
			return nil, storeError(err)
		}
		list.Data = append(list.Data, p)
		list.NextAfter = seq
	}
	if list.Checkpoint, err = e.checkpointText(); err != nil {
		return nil, storeError(err)
	}
	return list, nil
}

// accountEvent finds the account's event by id ("evt_" + entry id).
func (e *Engine) accountEvent(accountID, eventID string) (Event, error) {
	entryID, ok := strings.CutPrefix(eventID, "evt_")
	if !ok || entryID == "" {
		return Event{}, notFound("event " + eventID)
	}
	ent, err := e.ledger.Entry(entryID)
	if errors.Is(err, ledger.ErrNotFound) {
		return Event{}, notFound("event " + eventID)
	}
	if err != nil {
		return Event{}, storeError(err)
	}
	ev, err := e.eventAt(ent.Index)
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

// Event returns one of the account's events with its record, the latest
// checkpoint, and its deliveries to the account's endpoints.
func (e *Engine) Event(ctx context.Context, accountID, eventID string) (*EventDetail, error) {
	ev, err := e.accountEvent(accountID, eventID)
	if err != nil {
		return nil, err
	}
	p, err := e.eventPayload(ev)
	if err != nil {
		return nil, storeError(err)
	}
	if p.Checkpoint, err = e.checkpointText(); err != nil {
		return nil, storeError(err)
	}
	d := &EventDetail{EventPayload: p, Deliveries: []WebhookDelivery{}}
	err = e.webhooks.read(func(tx ledger.Tx) error {
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

func (st deliveryState) view() WebhookDelivery {
	v := WebhookDelivery{EndpointID: st.Endpoint, Status: st.Status, Attempts: st.Attempts, LastAttempt: st.LastAttempt}
	if st.Status == DeliveryPending {
		v.NextAttemptAt = st.NextAt.UTC().Format(time.RFC3339)
	}
	if st.DeliveredAt != nil {
		v.DeliveredAt = st.DeliveredAt.UTC().Format(time.RFC3339)
	}
	return v
}

// RedeliverEvent schedules a new delivery of the account's event, due now,
// to each of the account's enabled endpoints, or to endpointID alone when
// it is not "". Every endpoint gets it, even one created after the event.
// A delivery still pending is moved forward; a finished one starts a new
// round with a fresh retry window. The event id stays the same: receivers
// deduplicate on it.
func (e *Engine) RedeliverEvent(ctx context.Context, accountID, eventID, endpointID string) ([]WebhookDelivery, error) {
	ev, err := e.accountEvent(accountID, eventID)
	if err != nil {
		return nil, err
	}
	now := e.clock().UTC()
	var out []WebhookDelivery
	err = e.webhooks.update(func(tx ledger.Tx) error {
		out = []WebhookDelivery{}
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
			st.Status, st.Round, st.RoundStart, st.RoundFailed, st.NextAt, st.DeliveredAt = DeliveryPending, st.Round+1, time.Time{}, 0, now, nil
			var prev *deliveryState
			if found {
				prev = &old
			}
			if err := putDelivery(tx, prev, &st); err != nil {
				return err
			}
			out = append(out, st.view())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.webhooks.notify()
	return out, nil
}
