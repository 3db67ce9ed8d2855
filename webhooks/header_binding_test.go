package webhooks_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestVerifyRequestBindsEventHeaders: the signature covers the timestamp
// and the body only, and README tells receivers to deduplicate on the
// event id. A captured delivery replayed within the replay window with
// another X-Service-Event-Id (or -Type) header must not verify, or a
// receiver deduplicating on the header acts on it twice (Standard Webhooks
// signs the message id for this reason: "webhook-id ... used as an
// idempotency key", and the signed content is "msg_id.timestamp.payload").
func TestVerifyRequestBindsEventHeaders(t *testing.T) {
	const secret = "whsec_receiver_0123456789abcdef"
	body := []byte(`{"id":"evt_x402-1","type":"settlement.processed","sequence":7}`)
	var gotErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, gotErr = webhooks.VerifyRequest(r, []string{secret}, 0)
	}))
	defer srv.Close()
	send := func(m *webhooks.Message, edit func(h http.Header)) error {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(string(m.Body)))
		req.Header = m.Header()
		edit(req.Header)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return gotErr
	}
	m := &webhooks.Message{URL: srv.URL, EventID: "evt_x402-1", EventType: "settlement.processed",
		DeliveryID: "dlv_1", Attempt: 1, Timestamp: time.Now().Unix(), Body: body}
	m.Sign(secret)

	keep := func(http.Header) {}
	if err := send(m, keep); err != nil {
		t.Fatalf("the delivery as sent: %v", err)
	}
	if err := send(m, func(h http.Header) { h.Del(webhooks.HeaderEventID); h.Del(webhooks.HeaderEventType) }); err != nil {
		t.Fatalf("without the event headers (the body alone is signed): %v", err)
	}
	for name, edit := range map[string]func(h http.Header){
		"event id of another event": func(h http.Header) { h.Set(webhooks.HeaderEventID, "evt_x402-2") },
		"event id with a suffix":    func(h http.Header) { h.Set(webhooks.HeaderEventID, m.EventID+"-replay") },
		"event type of another":     func(h http.Header) { h.Set(webhooks.HeaderEventType, "settlement.refunded") },
	} {
		if err := send(m, edit); !errors.Is(err, webhooks.ErrHeaderMismatch) {
			t.Errorf("%s: VerifyRequest = %v, want ErrHeaderMismatch: the header is not signed, so it must equal the signed body's", name, err)
		}
	}
}
