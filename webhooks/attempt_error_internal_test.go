package webhooks

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRefusedAddressNotShownToTheAccount: an endpoint's host name is the
// account's choice, and the service resolves it with the operator's
// resolver, which may know internal names. The attempt's error, which the
// account reads (GET /v1/webhook-endpoints, GET /v1/events/{id}:
// lastAttempt.error), named the address the name resolved to ("dial tcp
// 127.0.0.1:… 127.0.0.1 is a loopback address"): registering names and
// reading the errors mapped the operator's internal DNS. The account is
// told that the address was refused and why, not which it was (OWASP SSRF
// Prevention Cheat Sheet: do not return raw errors to the client); the
// operator's log keeps the detail.
func TestRefusedAddressNotShownToTheAccount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := NewHTTPSender(SenderOptions{}) // the default policy: public addresses only
	defer s.Close()
	m := &Message{URL: "http://localhost:" + u.Port() + "/hook", EventID: "evt_1", EventType: "t", DeliveryID: "dlv_1", Attempt: 1, Body: []byte(`{}`)}
	resp, err := s.Send(context.Background(), m)
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("Send = %v, want ErrAddressNotAllowed", err)
	}
	shown := attemptError(resp, err)
	for _, addr := range []string{"127.0.0.1", "::1", u.Port()} {
		if strings.Contains(shown, addr) {
			t.Errorf("the account is shown %q, which names the resolved address %s", shown, addr)
		}
	}
	if !strings.Contains(shown, "not allowed") || !strings.Contains(shown, "loopback") {
		t.Errorf("the account is shown %q: it must still say that the address was refused, and its class", shown)
	}
}
