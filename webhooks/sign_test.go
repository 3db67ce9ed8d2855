package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// The test vector published in the README ("Webhooks") and the package doc.
// It is our own, computed with the documented algorithm (lower-case hex of
// HMAC-SHA256 keyed with the secret string over "1776086400." + body) and fixed
// here as a constant; it was checked with an independent implementation:
//
//	printf '%s' '1776086400.{"id":"evt_1","type":"record.created"}' | openssl dgst -sha256 -hmac whsec_test
const (
	vectorSecret    = "whsec_test"
	vectorTimestamp = 1776086400
	vectorBody      = `{"id":"evt_1","type":"record.created"}`
	vectorSignature = "da7aabf2a8cbe3ede8002c04520d915d351b1a94522c472e7ebf7b8997494adc"
)

func TestPublishedTestVector(t *testing.T) {
	if got := webhooks.Signature(vectorSecret, vectorTimestamp, []byte(vectorBody)); got != vectorSignature {
		t.Fatalf("Signature = %s, want the published %s", got, vectorSignature)
	}
	if got := webhooks.SignatureHeader(vectorTimestamp, []byte(vectorBody), vectorSecret); got != "v1="+vectorSignature {
		t.Fatalf("SignatureHeader = %s", got)
	}
	now := time.Unix(vectorTimestamp, 0)
	if err := webhooks.VerifyAt(now, []string{vectorSecret}, "v1="+vectorSignature, "1776086400", []byte(vectorBody), 0); err != nil {
		t.Fatalf("the published vector does not verify: %v", err)
	}
}

// TestSignatureIndependent recomputes the signature with crypto/hmac directly
// from the published rule (HMAC-SHA256 over timestamp "." raw body, README
// "Webhooks"), for inputs other than the vector.
func TestSignatureIndependent(t *testing.T) {
	for i, body := range []string{"", "{}", `{"a":"ü\u2028"}`, strings.Repeat("x", 10000)} {
		secret := "whsec_" + strconv.Itoa(i)
		ts := int64(1700000000 + i)
		m := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(m, "%d.%s", ts, body)
		want := hex.EncodeToString(m.Sum(nil))
		if got := webhooks.Signature(secret, ts, []byte(body)); got != want {
			t.Errorf("body %d: %s, want %s", i, got, want)
		}
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1800000000, 0)
	body := []byte(`{"id":"evt_x402-1","type":"settlement.processed"}`)
	ts := now.Unix()
	tsHeader := strconv.FormatInt(ts, 10)
	old, cur, other := "whsec_old_secret_0123456789", "whsec_new_secret_0123456789", "whsec_someone_else_0123456"
	sig := func(secret string) string { return "v1=" + webhooks.Signature(secret, ts, body) }
	cases := []struct {
		name      string
		secrets   []string
		header    string
		timestamp string
		body      []byte
		tolerance time.Duration
		now       time.Time
		want      error
	}{
		{name: "one secret", secrets: []string{cur}, header: sig(cur), want: nil},
		{name: "rotation: both sign, receiver has the new", secrets: []string{cur}, header: webhooks.SignatureHeader(ts, body, cur, old), want: nil},
		{name: "rotation: both sign, receiver has the old", secrets: []string{old}, header: webhooks.SignatureHeader(ts, body, cur, old), want: nil},
		{name: "receiver holds two secrets", secrets: []string{other, old}, header: sig(old), want: nil},
		{name: "spaces around entries", secrets: []string{cur}, header: " v2=abc , " + sig(cur) + " ", want: nil},
		{name: "upper-case hex", secrets: []string{cur}, header: "v1=" + strings.ToUpper(webhooks.Signature(cur, ts, body)), want: nil},
		{name: "unknown scheme only", secrets: []string{cur}, header: "v2=" + webhooks.Signature(cur, ts, body), want: webhooks.ErrMissingSignature},
		{name: "wrong secret", secrets: []string{other}, header: sig(cur), want: webhooks.ErrSignatureMismatch},
		{name: "body changed", secrets: []string{cur}, header: sig(cur), body: append(append([]byte{}, body...), ' '), want: webhooks.ErrSignatureMismatch},
		{name: "timestamp changed", secrets: []string{cur}, header: sig(cur), timestamp: strconv.FormatInt(ts+1, 10), want: webhooks.ErrSignatureMismatch},
		{name: "no secrets", secrets: nil, header: sig(cur), want: webhooks.ErrNoSecret},
		{name: "no header", secrets: []string{cur}, header: "", want: webhooks.ErrMissingSignature},
		{name: "truncated signature", secrets: []string{cur}, header: sig(cur)[:40], want: webhooks.ErrMissingSignature},
		{name: "not hex", secrets: []string{cur}, header: "v1=" + strings.Repeat("zz", 32), want: webhooks.ErrMissingSignature},
		{name: "Stripe-style t= inside", secrets: []string{cur}, header: "t=" + tsHeader + "," + sig(cur), want: nil},
		{name: "no timestamp", secrets: []string{cur}, header: sig(cur), timestamp: "-", want: webhooks.ErrBadTimestamp},
		{name: "negative timestamp", secrets: []string{cur}, header: sig(cur), timestamp: "-5", want: webhooks.ErrBadTimestamp},
		{name: "timestamp with plus", secrets: []string{cur}, header: sig(cur), timestamp: "+" + tsHeader, want: webhooks.ErrBadTimestamp},
		{name: "timestamp in ms", secrets: []string{cur}, header: sig(cur), timestamp: tsHeader + "000", want: webhooks.ErrTimestampOutOfTolerance},
		{name: "301 s old", secrets: []string{cur}, header: sig(cur), now: now.Add(301 * time.Second), want: webhooks.ErrTimestampOutOfTolerance},
		{name: "300 s old", secrets: []string{cur}, header: sig(cur), now: now.Add(300 * time.Second), want: nil},
		{name: "301 s in the future", secrets: []string{cur}, header: sig(cur), now: now.Add(-301 * time.Second), want: webhooks.ErrTimestampOutOfTolerance},
		{name: "custom tolerance", secrets: []string{cur}, header: sig(cur), now: now.Add(time.Hour), tolerance: 2 * time.Hour, want: nil},
		{name: "custom tolerance exceeded", secrets: []string{cur}, header: sig(cur), now: now.Add(11 * time.Second), tolerance: 10 * time.Second, want: webhooks.ErrTimestampOutOfTolerance},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, tsh, n := body, tsHeader, now
			if tc.body != nil {
				b = tc.body
			}
			if tc.timestamp == "-" {
				tsh = ""
			} else if tc.timestamp != "" {
				tsh = tc.timestamp
			}
			if !tc.now.IsZero() {
				n = tc.now
			}
			err := webhooks.VerifyAt(n, tc.secrets, tc.header, tsh, b, tc.tolerance)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("VerifyAt = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyRequest(t *testing.T) {
	secret := "whsec_receiver_0123456789abcdef"
	body := []byte(`{"id":"evt_1","type":"t"}`) // the headers the sender sets are the body's
	var got []byte
	var gotErr error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, gotErr = webhooks.VerifyRequest(r, []string{secret}, 0)
	}))
	defer srv.Close()
	m := &webhooks.Message{URL: srv.URL, EventID: "evt_1", EventType: "t", DeliveryID: "dlv_1", Attempt: 1, Timestamp: time.Now().Unix(), Body: body}
	m.Sign(secret)
	send := func() {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(string(m.Body)))
		req.Header = m.Header()
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send()
	if gotErr != nil || string(got) != string(body) {
		t.Fatalf("VerifyRequest = %q, %v", got, gotErr)
	}
	m.Body = []byte(`{"id":"evt_2","type":"t"}`) // signature no longer fits
	send()
	if !errors.Is(gotErr, webhooks.ErrSignatureMismatch) {
		t.Fatalf("tampered body: %v", gotErr)
	}
}

// FuzzVerify feeds arbitrary headers and bodies to the verifier: it must
// never panic, must refuse everything not signed with the secret, and must
// accept a correct signature whatever else the header carries.
func FuzzVerify(f *testing.F) {
	f.Add("v1="+vectorSignature, "1776086400", []byte(vectorBody), "")
	f.Add("v1=,v1==,=,,", "0", []byte{}, "v2=x")
	f.Add("v1="+strings.Repeat("0", 64), "99999999999999999999", []byte("{}"), " ")
	now := time.Unix(vectorTimestamp, 0)
	f.Fuzz(func(t *testing.T, header, ts string, body []byte, extra string) {
		err := webhooks.VerifyAt(now, []string{vectorSecret}, header, ts, body, 0)
		if err == nil {
			// Accepted: the header must really carry the signature.
			n, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || !strings.Contains(strings.ToLower(header), webhooks.Signature(vectorSecret, n, body)) {
				t.Fatalf("accepted a header without the right signature: %q %q", header, ts)
			}
		}
		if strings.Contains(extra, ",") {
			return // a comma would split the extra entry into parts that may be well-formed
		}
		good := webhooks.SignatureHeader(vectorTimestamp, body, vectorSecret)
		if err := webhooks.VerifyAt(now, []string{vectorSecret}, extra+","+good, "1776086400", body, 0); err != nil {
			t.Fatalf("refused a correct signature next to %q: %v", extra, err)
		}
	})
}

func BenchmarkSignatureHeader(b *testing.B) {
	body := []byte(strings.Repeat("x", 4096))
	b.ReportAllocs()
	for b.Loop() {
		webhooks.SignatureHeader(1776086400, body, "whsec_a_0123456789abcdef", "whsec_b_0123456789abcdef")
	}
}

func BenchmarkVerify(b *testing.B) {
	body := []byte(strings.Repeat("x", 4096))
	header := webhooks.SignatureHeader(1776086400, body, "whsec_a_0123456789abcdef", "whsec_b_0123456789abcdef")
	now := time.Unix(1776086400, 0)
	b.ReportAllocs()
	for b.Loop() {
		if err := webhooks.VerifyAt(now, []string{"whsec_b_0123456789abcdef"}, header, "1776086400", body, 0); err != nil {
			b.Fatal(err)
		}
	}
}
