package webhooks_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

func testMessage(u string) *webhooks.Message {
	m := &webhooks.Message{
		URL: u, EventID: "evt_x402-abc", EventType: "settlement.processed", DeliveryID: "dlv_0001",
		Attempt: 3, Timestamp: time.Now().Unix(), Body: []byte(`{"id":"evt_x402-abc","type":"settlement.processed"}`),
	}
	m.Sign("whsec_new_0123456789abcdef", "whsec_old_0123456789abcdef")
	return m
}

var loopback = webhooks.SenderOptions{Policy: webhooks.TargetPolicy{AllowLoopback: true}}

func TestHTTPSenderRequest(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(strings.Repeat("ignored ", 100000))) // longer than what is read
	}))
	defer srv.Close()
	s := webhooks.NewHTTPSender(loopback)
	defer s.Close()
	m := testMessage(srv.URL + "/hooks?tenant=1")
	resp, err := s.Send(context.Background(), m)
	if err != nil || resp.Status != http.StatusAccepted || webhooks.OutcomeOf(resp, err) != webhooks.Delivered {
		t.Fatalf("Send = %+v, %v", resp, err)
	}
	if got.Method != "POST" || got.URL.RequestURI() != "/hooks?tenant=1" || string(body) != string(m.Body) {
		t.Fatalf("request %s %s %q", got.Method, got.URL, body)
	}
	want := map[string]string{
		"Content-Type":          "application/json",
		"X-Service-Event-Id":    "evt_x402-abc",
		"X-Service-Event-Type":  "settlement.processed",
		"X-Service-Delivery-Id": "dlv_0001",
		"X-Service-Attempt":     "3",
		"User-Agent":            "fiscal402-webhooks/1",
	}
	for k, v := range want {
		if got.Header.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Header.Get(k), v)
		}
	}
	sig := got.Header.Get(webhooks.HeaderSignature)
	if strings.Count(sig, "v1=") != 2 {
		t.Errorf("signature header %q: want one v1 per secret", sig)
	}
	for _, secret := range []string{"whsec_new_0123456789abcdef", "whsec_old_0123456789abcdef"} {
		if err := webhooks.Verify([]string{secret}, sig, got.Header.Get(webhooks.HeaderTimestamp), body, 0); err != nil {
			t.Errorf("%s: %v", secret, err)
		}
	}
}

func TestHTTPSenderStatuses(t *testing.T) {
	cases := []struct {
		status     int
		retryAfter string
		wantRA     time.Duration
		outcome    webhooks.Outcome
	}{
		{200, "", 0, webhooks.Delivered},
		{204, "", 0, webhooks.Delivered},
		{410, "", 0, webhooks.Gone},
		{404, "", 0, webhooks.Retry},
		{500, "60", 0, webhooks.Retry}, // Retry-After only counts on 429/503
		{429, "60", time.Minute, webhooks.Retry},
		{503, "5", 5 * time.Second, webhooks.Retry},
		{503, "", 0, webhooks.Retry},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.retryAfter != "" {
				w.Header().Set("Retry-After", tc.retryAfter)
			}
			w.WriteHeader(tc.status)
		}))
		s := webhooks.NewHTTPSender(loopback)
		resp, err := s.Send(context.Background(), testMessage(srv.URL))
		if err != nil || resp.Status != tc.status || resp.RetryAfter != tc.wantRA || webhooks.OutcomeOf(resp, err) != tc.outcome {
			t.Errorf("%d: %+v %v outcome %v", tc.status, resp, err, webhooks.OutcomeOf(resp, err))
		}
		s.Close()
		srv.Close()
	}
}

// TestHTTPSenderNoRedirects: a 3xx is a failed attempt; the target of the
// redirect is never called.
func TestHTTPSenderNoRedirects(t *testing.T) {
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { targetHits.Add(1) }))
	defer target.Close()
	for _, status := range []int{301, 302, 307, 308} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", status)
		}))
		s := webhooks.NewHTTPSender(loopback)
		resp, err := s.Send(context.Background(), testMessage(redirector.URL))
		if err != nil || resp.Status != status || resp.Location != target.URL+"/elsewhere" || webhooks.OutcomeOf(resp, err) != webhooks.Retry {
			t.Errorf("%d: %+v %v", status, resp, err)
		}
		s.Close()
		redirector.Close()
	}
	if n := targetHits.Load(); n != 0 {
		t.Fatalf("the redirect target was called %d times", n)
	}
}

// TestHTTPSenderRefusesLoopback: with the default policy, a host name that
// resolves to loopback is refused at connect time; the receiver never sees
// a request. "localhost" resolves through the hosts file, no DNS needed.
func TestHTTPSenderRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s := webhooks.NewHTTPSender(webhooks.SenderOptions{})
	defer s.Close()
	for _, target := range []string{"http://localhost:" + u.Port() + "/", srv.URL, "http://[::ffff:127.0.0.1]:" + u.Port() + "/"} {
		_, err := s.Send(context.Background(), testMessage(target))
		if !errors.Is(err, webhooks.ErrAddressNotAllowed) {
			t.Errorf("%s: %v, want ErrAddressNotAllowed", target, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver was called %d times", n)
	}
}

func TestHTTPSenderTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := webhooks.NewHTTPSender(webhooks.SenderOptions{Policy: webhooks.TargetPolicy{AllowLoopback: true}, Timeout: 100 * time.Millisecond})
	defer s.Close()
	start := time.Now()
	_, err := s.Send(context.Background(), testMessage(srv.URL))
	if !errors.Is(err, webhooks.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
}

// TestHTTPSenderCallerDeadline: the caller's own deadline is a timeout too.
func TestHTTPSenderCallerDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	s := webhooks.NewHTTPSender(loopback)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Send(ctx, testMessage(srv.URL)); !errors.Is(err, webhooks.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestHTTPSenderCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server notices the client leaving only once the body is read
		<-r.Context().Done()
	}))
	defer srv.Close()
	s := webhooks.NewHTTPSender(loopback)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := s.Send(ctx, testMessage(srv.URL))
	if !errors.Is(err, context.Canceled) || errors.Is(err, webhooks.ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHTTPSenderConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there now
	s := webhooks.NewHTTPSender(loopback)
	defer s.Close()
	resp, err := s.Send(context.Background(), testMessage(addr))
	if err == nil || webhooks.OutcomeOf(resp, err) != webhooks.Retry {
		t.Fatalf("%+v %v", resp, err)
	}
	if strings.Contains(err.Error(), "Post ") {
		t.Errorf("error repeats the URL: %v", err)
	}
}
