package webhooks

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestFailedMarker: Stats counts failed deliveries by a byte match; it
// matches a stored failed state and nothing else a state can hold.
func TestFailedMarker(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	att := &Attempt{At: now.Format(time.RFC3339), Outcome: "failed", Status: 503, Error: `a receiver body "status":"failed" (escaped in JSON)`}
	for _, tc := range []struct {
		status string
		want   bool
	}{{DeliveryFailed, true}, {DeliveryPending, false}, {DeliveryDelivered, false}, {DeliveryCancelled, false}} {
		raw, err := json.Marshal(deliveryState{Account: "a", Endpoint: "we_1", EventID: "evt_failed", Status: tc.status, LastAttempt: att, NextAt: now})
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(raw, failedMarker); got != tc.want {
			t.Errorf("status %s: marker found %v, want %v in %s", tc.status, got, tc.want, raw)
		}
	}
}

// TestLastActivity: the latest of the times a state records.
func TestLastActivity(t *testing.T) {
	t0 := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	delivered := t0.Add(3 * time.Hour)
	cases := []struct {
		st   deliveryState
		want time.Time
	}{
		{deliveryState{NextAt: t0}, t0},
		{deliveryState{NextAt: t0, RoundStart: t0.Add(time.Hour)}, t0.Add(time.Hour)},
		{deliveryState{NextAt: t0, DeliveredAt: &delivered}, delivered},
		{deliveryState{NextAt: t0, LastAttempt: &Attempt{At: t0.Add(5 * time.Hour).Format(time.RFC3339)}}, t0.Add(5 * time.Hour)},
		// After an attempt NextAt is its lease, not an activity.
		{deliveryState{NextAt: t0.Add(10 * time.Hour), RoundStart: t0, LastAttempt: &Attempt{At: t0.Add(time.Second).Format(time.RFC3339)}}, t0.Add(time.Second)},
	}
	for i, c := range cases {
		if got := lastActivity(c.st); !got.Equal(c.want) {
			t.Errorf("case %d: %s, want %s", i, got, c.want)
		}
	}
	if prunable(deliveryState{Status: DeliveryPending, NextAt: t0}, t0.Add(1000*time.Hour)) {
		t.Error("a pending delivery is prunable")
	}
}
