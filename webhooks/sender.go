package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Message is one signed delivery attempt, ready to send.
type Message struct {
	URL        string
	EventID    string // the body's "id", stable across attempts
	EventType  string
	DeliveryID string // unique per attempt
	Attempt    int    // 1 for the first attempt of this event to this endpoint
	Timestamp  int64  // unix seconds, fresh for every attempt
	Signature  string // the X-Service-Signature value; see Sign
	Body       []byte
}

// Sign sets the signature for the message's timestamp and body, one v1
// entry per secret.
func (m *Message) Sign(secrets ...string) {
	m.Signature = SignatureHeader(m.Timestamp, m.Body, secrets...)
}

// Header returns the request headers of the message.
func (m *Message) Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderTimestamp, strconv.FormatInt(m.Timestamp, 10))
	h.Set(HeaderSignature, m.Signature)
	h.Set(HeaderEventID, m.EventID)
	h.Set(HeaderEventType, m.EventType)
	h.Set(HeaderDeliveryID, m.DeliveryID)
	h.Set(HeaderAttempt, strconv.Itoa(m.Attempt))
	return h
}

// Response is what the receiver answered.
type Response struct {
	Status int // the HTTP status code
	// RetryAfter is the receiver's Retry-After on a 429 or 503 (RFC 9110
	// §10.2.3, §15.5.20, §15.6.4); 0 when absent or on other statuses.
	RetryAfter time.Duration
	// Location is the redirect target of a 3xx, which is not followed.
	Location string
}

// Sender sends one delivery attempt. An error means no HTTP response was
// received (refused address, connection failure, timeout); any response,
// whatever its status, is a nil error.
type Sender interface {
	Send(ctx context.Context, m *Message) (Response, error)
}

// Outcome is what an attempt means for the delivery.
type Outcome int

const (
	// Retry: the attempt failed; try again on the schedule.
	Retry Outcome = iota
	// Delivered: any 2xx. The receiver has the event.
	Delivered
	// Gone: 410. The receiver asks never to be called again: the endpoint
	// is disabled (Standard Webhooks, "Delivery success and failure":
	// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
	Gone
)

// OutcomeOf classifies an attempt. Redirects (3xx) are failures: they are
// not followed, and the endpoint URL should be updated instead.
func OutcomeOf(r Response, err error) Outcome {
	switch {
	case err != nil:
		return Retry
	case r.Status >= 200 && r.Status <= 299:
		return Delivered
	case r.Status == http.StatusGone:
		return Gone
	}
	return Retry
}

// ErrTimeout: the receiver did not answer within the attempt's timeout.
var ErrTimeout = errors.New("webhooks: no response within the timeout")

// DefaultTimeout bounds one attempt: connect, TLS, request and response.
const DefaultTimeout = 10 * time.Second

// connectTimeout bounds the TCP connect and the TLS handshake: 5 s, our
// choice, half of DefaultTimeout, so that an unreachable receiver fails fast
// and a reachable one keeps the rest of the attempt to answer.
const connectTimeout = 5 * time.Second

// maxResponseBody is how much of a response body is read (then dropped) so
// that the connection can be reused; a receiver's body carries no meaning.
const maxResponseBody = 64 << 10

// SenderOptions configure NewHTTPSender. Every field documents its zero
// value.
type SenderOptions struct {
	// Policy says which addresses may be connected to; the zero value
	// allows public unicast addresses only.
	Policy TargetPolicy
	// Timeout bounds one attempt; 0 means DefaultTimeout (10 s).
	Timeout time.Duration
	// Clock turns a Retry-After HTTP-date into a delay; nil means time.Now.
	Clock func() time.Time
	// UserAgent is sent with every request; "" means "fiscal402-webhooks/1".
	UserAgent string
}

// HTTPSender is the default Sender: one POST per attempt with net/http. It
// never follows redirects, ignores proxy environment variables (a proxy
// would hide the real destination from the address check), and checks
// every address it connects to, after DNS resolution, against the policy:
// a host name that resolves to a private address is refused at connect
// time, which a check of the URL alone cannot do (DNS rebinding).
type HTTPSender struct {
	client    *http.Client
	timeout   time.Duration
	clock     func() time.Time
	userAgent string
}

// NewHTTPSender returns an HTTPSender. Close it to release idle connections.
func NewHTTPSender(opts SenderOptions) *HTTPSender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "fiscal402-webhooks/1"
	}
	policy := opts.Policy
	dialer := &net.Dialer{
		Timeout: connectTimeout,
		// Control runs after resolution, once per address tried, with the
		// literal IP the socket is about to connect to.
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q is not an IP address and port", ErrAddressNotAllowed, address)
			}
			return policy.CheckAddr(ap.Addr())
		},
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    connectTimeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
	return &HTTPSender{
		client: &http.Client{
			Transport: transport,
			Timeout:   opts.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		timeout:   opts.Timeout,
		clock:     opts.Clock,
		userAgent: opts.UserAgent,
	}
}

// Send POSTs the message. It returns the receiver's status (with
// Retry-After on 429/503 and Location on 3xx), or an error when no
// response came: ErrAddressNotAllowed, ErrTimeout, or the network error.
func (s *HTTPSender) Send(ctx context.Context, m *Message) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil {
		return Response{}, fmt.Errorf("webhooks: request: %w", err)
	}
	req.Header = m.Header()
	req.Header.Set("User-Agent", s.userAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		return Response{}, s.sendError(ctx, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	r := Response{Status: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusServiceUnavailable:
		r.RetryAfter, _ = ParseRetryAfter(resp.Header.Get("Retry-After"), s.clock())
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		r.Location = resp.Header.Get("Location")
	}
	return r, nil
}

// sendError turns a client error into one of the documented kinds, without
// the "Post <url>:" prefix net/http adds (the URL is known to the caller).
func (s *HTTPSender) sendError(ctx context.Context, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, ErrAddressNotAllowed):
		return err
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("webhooks: attempt abandoned: %w", ctx.Err())
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w (%s)", ErrTimeout, s.timeout)
	}
	return fmt.Errorf("webhooks: %w", err)
}

// Close releases the sender's idle connections.
func (s *HTTPSender) Close() { s.client.CloseIdleConnections() }
