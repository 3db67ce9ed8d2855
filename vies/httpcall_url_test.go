package vies

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// failLookups passes the token request to the real transport and fails
// every lookup as a broken connection or a dial timeout would: net/http
// wraps either in a *url.Error whose text quotes the whole request URL.
type failLookups struct {
	timeout bool
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func (f failLookups) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/lookup/") {
		if f.timeout {
			return nil, timeoutErr{}
		}
		return nil, errors.New("read: connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The HMRC lookup URL carries the buyer's VRN and the requester's
// (.../lookup/{target}/{requester}); a sole trader's VAT number is
// personal data (Art. 4(1) GDPR), and Result.Detail is kept in the
// record and may reach a log. A transport failure's detail says what
// failed (the net error), never the URL net/http quotes in it.
func TestTransportFailureDetailHasNoURL(t *testing.T) {
	srv := newHMRCServer(t, func(target, requester string) (int, string) { return 500, "" })
	for _, timeout := range []bool{false, true} {
		c := NewHMRC(HMRCConfig{BaseURL: srv.URL, ClientID: "id-1", ClientSecret: "secret-1", RequesterVRN: "GB987654321",
			HTTPClient: &http.Client{Transport: failLookups{timeout: timeout}}, Timeout: 5 * time.Second,
			Clock: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }})
		r := c.Check(context.Background(), "123456789")
		if r.Status != StatusUnavailable {
			t.Fatalf("a failed lookup: %+v", r)
		}
		for _, shown := range []string{"123456789", "987654321", "/lookup/", srv.URL} {
			if strings.Contains(r.Detail, shown) {
				t.Errorf("timeout %v: the detail %q shows %s", timeout, r.Detail, shown)
			}
		}
		want := "connection reset by peer"
		if timeout {
			want = "i/o timeout"
		}
		if !strings.Contains(r.Detail, want) {
			t.Errorf("timeout %v: the detail %q no longer says what failed (%s)", timeout, r.Detail, want)
		}
	}
}
