package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// ExampleSignature computes the published test vector.
func ExampleSignature() {
	fmt.Println(webhooks.Signature("whsec_test", 1776086400, []byte(`{"id":"evt_1","type":"record.created"}`)))
	// Output: da7aabf2a8cbe3ede8002c04520d915d351b1a94522c472e7ebf7b8997494adc
}

// ExampleVerifyAt checks a delivery against the receiver's secret: the
// published vector verifies; a changed body or an old timestamp does not.
func ExampleVerifyAt() {
	secrets := []string{"whsec_test"}
	body := []byte(`{"id":"evt_1","type":"record.created"}`)
	header := "v1=da7aabf2a8cbe3ede8002c04520d915d351b1a94522c472e7ebf7b8997494adc"
	now := time.Unix(1776086400+10, 0) // received 10 s after signing

	fmt.Println(webhooks.VerifyAt(now, secrets, header, "1776086400", body, 0))
	fmt.Println(webhooks.VerifyAt(now, secrets, header, "1776086400", []byte(`{"id":"evt_2","type":"record.created"}`), 0))
	err := webhooks.VerifyAt(now.Add(time.Hour), secrets, header, "1776086400", body, 0)
	fmt.Println(errors.Is(err, webhooks.ErrTimestampOutOfTolerance))
	// Output:
	// <nil>
	// webhooks: no signature matches
	// true
}

// ExampleVerifyRequest is a receiver's handler: verify, then deduplicate on
// the event id, then act.
func ExampleVerifyRequest() {
	secrets := []string{"whsec_test"} // during a rotation, both the old and the new secret
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := webhooks.VerifyRequest(r, secrets, 0)
		if err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		fmt.Printf("event %s verified: %s\n", r.Header.Get(webhooks.HeaderEventID), body) // the header equals the signed body's id
		w.WriteHeader(http.StatusNoContent)
	})

	body := `{"id":"evt_1","type":"record.created"}`
	ts := time.Now().Unix()
	req := httptest.NewRequest("POST", "/webhooks/fiscal402", strings.NewReader(body))
	req.Header.Set(webhooks.HeaderTimestamp, fmt.Sprint(ts))
	req.Header.Set(webhooks.HeaderSignature, webhooks.SignatureHeader(ts, []byte(body), "whsec_test"))
	req.Header.Set(webhooks.HeaderEventID, "evt_1")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// event evt_1 verified: {"id":"evt_1","type":"record.created"}
	// 204
}

// ExampleSchedule_Next shows the nominal retry delays of the default
// schedule (jitter drawn at its midpoint, u = 0.5).
func ExampleSchedule_Next() {
	var s webhooks.Schedule // zero value: the defaults
	start := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	now := start
	for failed := 1; ; failed++ {
		next, ok := s.Next(start, now, failed, 0, 0.5)
		if !ok {
			fmt.Printf("gave up after %d attempts, %s after the first\n", failed, now.Sub(start))
			break
		}
		if failed <= 4 || next.Sub(start) == webhooks.DefaultHorizon {
			fmt.Printf("attempt %d at +%s\n", failed+1, next.Sub(start))
		}
		now = next
	}
	// Output:
	// attempt 2 at +30s
	// attempt 3 at +1m30s
	// attempt 4 at +3m30s
	// attempt 5 at +7m30s
	// attempt 19 at +72h0m0s
	// gave up after 19 attempts, 72h0m0s after the first
}

// ExampleHTTPSender sends one signed delivery; the zero TargetPolicy would
// refuse the loopback test server, so the example allows loopback.
func ExampleHTTPSender() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := webhooks.VerifyRequest(r, []string{"whsec_example_0123456789"}, 0); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	sender := webhooks.NewHTTPSender(webhooks.SenderOptions{Policy: webhooks.TargetPolicy{AllowLoopback: true}})
	defer sender.Close()
	m := &webhooks.Message{
		URL: receiver.URL, EventID: "evt_1", EventType: "settlement.processed",
		DeliveryID: "dlv_1", Attempt: 1, Timestamp: time.Now().Unix(),
		Body: []byte(`{"id":"evt_1","type":"settlement.processed"}`),
	}
	m.Sign("whsec_example_0123456789")
	resp, err := sender.Send(context.Background(), m)
	fmt.Println(resp.Status, err, webhooks.OutcomeOf(resp, err) == webhooks.Delivered)
	// Output: 200 <nil> true
}
