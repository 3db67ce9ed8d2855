package settlement

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// fingerprintStruct is the struct whose json.Marshal bytes the first
// fingerprint hash was defined on.
type fingerprintStruct struct {
	A, T, Ts, P, R, N, As, Sc, Pr, BC, BP, BV, BN, K, D string
}

func marshalFingerprint(t testing.TB, v [len(fingerprintNames)]string) []byte {
	t.Helper()
	s := fingerprintStruct{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14]}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// randomJSONText draws strings that exercise every branch of the
// escaper: safe ASCII, quotes and backslashes, named and numbered control
// characters, HTML characters, multi-byte UTF-8, U+2028/U+2029, U+FFFD
// itself and invalid bytes.
func randomJSONText(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "-", "~", "\x7f", `"`, `\`, "<", ">", "&", "\b", "\f", "\n", "\r", "\t",
		"\x00", "\x01", "\x1f", "é", "€", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "/"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestFingerprintJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var v [len(fingerprintNames)]string
		for j := range v {
			v[j] = randomJSONText(r)
		}
		want := marshalFingerprint(t, v)
		if got := appendFingerprintJSON(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("case %d %q:\n got %s\nwant %s", i, v, got, want)
		}
	}
}

func FuzzFingerprintJSON(f *testing.F) {
	f.Add("11.9", "0xab", "<&>\u2028", "\xff\"\\\n")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		v := [len(fingerprintNames)]string{a, b, c, d, a + b, c + d, "", a, b, c, d, "x", d + a, b, c}
		if got, want := appendFingerprintJSON(nil, v), marshalFingerprint(t, v); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", v, got, want)
		}
	})
}

// TestFingerprintUnchanged holds Fingerprint to its definition, the
// SHA-256 of json.Marshal of the fields, for a payment as Request.Payment
// makes it.
func TestFingerprintUnchanged(t *testing.T) {
	p := Payment{
		Amount: decimal.RequireFromString("11.90"), TxHash: "0x" + strings.Repeat("ab", 32),
		Timestamp: time.Date(2026, 4, 10, 14, 30, 0, 123, time.UTC), PayerWallet: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
		ReceiverWallet: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", Network: "eip155:8453", Asset: "USDC", Scheme: "exact", Protocol: "x402",
		Buyer: Buyer{Country: "DE", PostalCode: "10115", VATNumber: "DE123456789", Name: "Müller & Söhne <GmbH>", SupplyKind: "digital", Description: "Line\u2028two"},
	}
	want := sha256.Sum256(marshalFingerprint(t, [...]string{"11.9", p.TxHash, "2026-04-10T14:30:00.000000123Z", p.PayerWallet, p.ReceiverWallet,
		p.Network, "USDC", "exact", "x402", "DE", "10115", "DE123456789", p.Buyer.Name, "digital", p.Buyer.Description}))
	if got := p.Fingerprint(); !bytes.Equal(got, want[:]) {
		t.Fatalf("Fingerprint = %x, want %x", got, want)
	}
}

func BenchmarkFingerprint(b *testing.B) {
	p := Payment{Amount: decimal.RequireFromString("11.90"), TxHash: "0x" + strings.Repeat("ab", 32), Timestamp: time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC),
		PayerWallet: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", ReceiverWallet: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
		Network: "eip155:8453", Asset: "USDC", Scheme: "exact", Protocol: "x402", Buyer: Buyer{Country: "DE"}}
	b.ReportAllocs()
	for b.Loop() {
		p.Fingerprint()
	}
}
