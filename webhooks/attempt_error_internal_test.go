package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

// TestNetworkErrorAddressesNotShownToTheAccount: the error of an attempt
// that got no answer reached the account (lastAttempt.error) as net wrote
// it, addresses included: "dial tcp 10.1.2.3:443: connect: connection
// refused" names what the operator's resolver made of the account's host
// name, "read tcp 10.0.0.7:51234->…: connection reset" the server's own
// address, and "lookup x.example on 10.96.0.10:53: no such host" the
// operator's DNS server. The refused-address case above already hides
// them; the account is told what failed (the connection, the name lookup)
// and why, not the operator's addresses (OWASP SSRF Prevention Cheat
// Sheet: do not return raw errors to the client).
func TestNetworkErrorAddressesNotShownToTheAccount(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing listens there now: the connection is refused
	s := NewHTTPSender(SenderOptions{Policy: TargetPolicy{AllowLoopback: true}})
	defer s.Close()
	m := &Message{URL: "http://localhost:" + port + "/hook", EventID: "evt_1", EventType: "t", DeliveryID: "dlv_1", Attempt: 1, Body: []byte(`{}`)}
	resp, sendErr := s.Send(context.Background(), m)
	if sendErr == nil {
		t.Fatal("Send to a closed port succeeded")
	}
	shown := attemptError(resp, sendErr)
	for _, addr := range []string{"127.0.0.1", "::1", port} {
		if strings.Contains(shown, addr) {
			t.Errorf("the account is shown %q, which names the resolved address %s", shown, addr)
		}
	}
	if !strings.Contains(shown, "connection refused") {
		t.Errorf("the account is shown %q: it must still say that the connection was refused", shown)
	}

	// A name that does not resolve, as the sender returns it.
	dns := s.sendError(context.Background(), &url.Error{Op: "Post", URL: "https://hooks.merchant.example/x",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hooks.merchant.example", Server: "10.96.0.10:53", IsNotFound: true}}})
	shown = attemptError(Response{}, dns)
	if strings.Contains(shown, "10.96.0.10") {
		t.Errorf("the account is shown %q, which names the operator's DNS server", shown)
	}
	if !strings.Contains(shown, "hooks.merchant.example") || !strings.Contains(shown, "no such host") {
		t.Errorf("the account is shown %q: it must still name its host and say that it did not resolve", shown)
	}
}
