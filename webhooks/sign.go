package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// Header names of a delivery. The X-Service- prefix is the API's own
// convention (its key header is X-Service-Key).
const (
	HeaderTimestamp  = "X-Service-Timestamp"  // unix seconds, the t of the signed string
	HeaderSignature  = "X-Service-Signature"  // "v1=<hex>" per active secret, comma-separated
	HeaderEventID    = "X-Service-Event-Id"   // equals the body's "id"; stable across attempts
	HeaderEventType  = "X-Service-Event-Type" // equals the body's "type"
	HeaderDeliveryID = "X-Service-Delivery-Id"
	HeaderAttempt    = "X-Service-Attempt"
)

// SchemeV1 is the signature scheme tag: hex(HMAC-SHA256(secret, t "." body)).
// A future scheme gets a new tag and is sent beside v1 during a transition;
// Verify ignores tags it does not know.
const SchemeV1 = "v1"

// DefaultTolerance is the replay window of Verify when tolerance is 0: a
// delivery whose timestamp is further than this from the receiver's clock is
// refused. 300 s is the default tolerance of Stripe's libraries ("a default
// tolerance of five minutes", https://docs.stripe.com/webhooks, "Prevent
// replay attacks").
const DefaultTolerance = 300 * time.Second

// Errors of Verify. Branch on them with errors.Is.
var (
	// ErrNoSecret: Verify was called without any secret (empty ones do not
	// count).
	ErrNoSecret = errors.New("webhooks: no secret to verify with")
	// ErrMissingSignature: the signature header is absent or has no
	// well-formed v1 entry.
	ErrMissingSignature = errors.New("webhooks: no v1 signature in the signature header")
	// ErrBadTimestamp: the timestamp header is absent or not unix seconds.
	ErrBadTimestamp = errors.New("webhooks: timestamp header is not unix seconds")
	// ErrTimestampOutOfTolerance: the timestamp is too far from now (a
	// replay, or clocks out of sync).
	ErrTimestampOutOfTolerance = errors.New("webhooks: timestamp outside the tolerance window")
	// ErrSignatureMismatch: no v1 signature matches any of the secrets (a
	// wrong secret, or the body was changed on the way).
	ErrSignatureMismatch = errors.New("webhooks: no signature matches")
	// ErrHeaderMismatch: the signature verifies, but X-Service-Event-Id or
	// X-Service-Event-Type differs from the signed body's "id" or "type".
	// Those headers are not signed: a captured delivery replayed with
	// another event id would pass a receiver that deduplicates on the
	// header (VerifyRequest).
	ErrHeaderMismatch = errors.New("webhooks: event header differs from the signed body")
)

// Signature returns the v1 signature of a delivery: the lower-case hex of
// HMAC-SHA256 keyed with the secret's bytes as written (Stripe-style, not
// base64-decoded) over the decimal timestamp, ".", and the raw body
// (HMAC-SHA256 over the string timestamp.rawBody, README "Webhooks").
func Signature(secret string, timestamp int64, body []byte) string {
	return hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	var ts [20]byte
	m.Write(strconv.AppendInt(ts[:0], timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// SignatureHeader returns the value of X-Service-Signature: one "v1=<hex>"
// per secret, in the order given, joined by ",". During a rotation both the
// new and the old secret sign, so a receiver holding either verifies.
func SignatureHeader(timestamp int64, body []byte, secrets ...string) string {
	var b strings.Builder
	for i, s := range secrets {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(SchemeV1 + "=")
		b.WriteString(Signature(s, timestamp, body))
	}
	return b.String()
}

// Verify checks a delivery as a receiver: the timestamp must be within
// tolerance of the current time (0 means DefaultTolerance) and one of the v1
// signatures must match one of the secrets. Pass the raw body exactly as
// received, before any JSON decoding. Comparisons are constant-time.
func Verify(secrets []string, signatureHeader, timestampHeader string, rawBody []byte, tolerance time.Duration) error {
	return VerifyAt(time.Now(), secrets, signatureHeader, timestampHeader, rawBody, tolerance)
}

// VerifyAt is Verify with the receiver's clock reading given.
func VerifyAt(now time.Time, secrets []string, signatureHeader, timestampHeader string, rawBody []byte, tolerance time.Duration) error {
	// An empty secret is no secret: anyone can compute HMAC-SHA256 keyed
	// with "" (a receiver's unset secret variable must not accept forgeries).
	if !slices.ContainsFunc(secrets, func(s string) bool { return s != "" }) {
		return ErrNoSecret
	}
	ts, err := ParseTimestamp(timestampHeader)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	// Both directions: a timestamp far in the future is as suspicious as
	// one far in the past (Standard Webhooks v1.0.0, "Verifying").
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s is %s from now (tolerance %s)", ErrTimestampOutOfTolerance, timestampHeader, d.Round(time.Second), tolerance)
	}
	sigs := ParseSignatureHeader(signatureHeader)
	if len(sigs) == 0 {
		return ErrMissingSignature
	}
	// Every secret against every signature, without an early exit, so the
	// time taken does not say which secret or signature matched.
	match := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		want := mac(s, ts, rawBody)
		for _, got := range sigs {
			if hmac.Equal(want, got) {
				match = 1
			}
		}
	}
	if match == 0 {
		return ErrSignatureMismatch
	}
	return nil
}

// MaxBodyBytes is the body limit of VerifyRequest: the largest body a
// delivery can have. Most carry one record and a checkpoint, a few KiB, but
// a summary invoice's document lists every supply of a buyer's month (a
// few thousand calls already pass 1 MiB), and an event's document can be as
// large as a ledger entry (ledger.MaxEntryBytes); 1 MiB more holds the
// envelope and the checkpoint.
const MaxBodyBytes = ledger.MaxEntryBytes + 1<<20

// VerifyRequest reads the body of an incoming delivery (at most
// MaxBodyBytes) and verifies it with Verify. It returns the raw body, which
// the caller decodes only when the error is nil.
//
// The signature covers the timestamp and the body, not the other headers.
// X-Service-Event-Id and X-Service-Event-Type, when present, must equal the
// signed body's "id" and "type" (ErrHeaderMismatch otherwise), so that a
// receiver may deduplicate on the header as on the body's id: a captured
// delivery replayed within the window under another event id is refused.
// (Standard Webhooks signs its message id for the same reason:
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
// "Signature scheme".)
func VerifyRequest(r *http.Request, secrets []string, tolerance time.Duration) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("webhooks: read body: %w", err)
	}
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("webhooks: body larger than %d bytes", MaxBodyBytes)
	}
	if err := Verify(secrets, r.Header.Get(HeaderSignature), r.Header.Get(HeaderTimestamp), body, tolerance); err != nil {
		return nil, err
	}
	if err := checkEventHeaders(r.Header, body); err != nil {
		return nil, err
	}
	return body, nil
}

// checkEventHeaders checks the unsigned event headers of a verified
// delivery against its signed body: each header that is present must
// equal the body's member, and may be sent once only.
func checkEventHeaders(h http.Header, body []byte) error {
	ids, types := h.Values(HeaderEventID), h.Values(HeaderEventType)
	if len(ids) == 0 && len(types) == 0 {
		return nil
	}
	var signed struct {
		ID   *string `json:"id"`
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(body, &signed); err != nil {
		return fmt.Errorf("%w: the body is not a JSON event (%v)", ErrHeaderMismatch, err)
	}
	for _, c := range []struct {
		name   string
		values []string
		body   *string
	}{{HeaderEventID, ids, signed.ID}, {HeaderEventType, types, signed.Type}} {
		switch {
		case len(c.values) == 0:
		case len(c.values) > 1:
			return fmt.Errorf("%w: %s is given %d times", ErrHeaderMismatch, c.name, len(c.values))
		case c.body == nil || *c.body != c.values[0]:
			return fmt.Errorf("%w: %s is %q, not the signed body's", ErrHeaderMismatch, c.name, c.values[0])
		}
	}
	return nil
}

// ParseTimestamp parses X-Service-Timestamp: unix seconds as ASCII digits,
// no sign, no spaces.
func ParseTimestamp(v string) (int64, error) {
	if v == "" || len(v) > 18 {
		return 0, fmt.Errorf("%w: %q", ErrBadTimestamp, v)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Errorf("%w: %q", ErrBadTimestamp, v)
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrBadTimestamp, v)
	}
	return n, nil
}

// ParseSignatureHeader returns the decoded v1 signatures of an
// X-Service-Signature value. Entries are separated by commas (spaces around
// them are ignored); entries of other schemes and malformed v1 entries (not
// 64 hex digits) are skipped, so a future scheme can be sent beside v1.
func ParseSignatureHeader(v string) [][]byte {
	var sigs [][]byte
	for part := range strings.SplitSeq(v, ",") {
		scheme, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || scheme != SchemeV1 || len(value) != 2*sha256.Size {
			continue
		}
		sig, err := hex.DecodeString(value)
		if err != nil {
			continue
		}
		sigs = append(sigs, sig)
		if len(sigs) == maxSignatures {
			break
		}
	}
	return sigs
}

// maxSignatures bounds the work one header can cause a receiver: the sender
// signs with at most a handful of secrets during a rotation.
const maxSignatures = 8
