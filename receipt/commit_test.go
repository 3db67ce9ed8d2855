package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// The commitment test vector of doc.go "# Commitments": field /buyer/name,
// value "Jan Kowalski", salt the 16 bytes 00 01 … 0f. Its value was
// computed by testdata/verify.mjs (Node's crypto, no code shared with
// Commit): node verify.mjs --commit /buyer/name "Jan Kowalski" AAECAwQFBgcICQoLDA0ODw
const (
	vectorField      = "/buyer/name"
	vectorValue      = "Jan Kowalski"
	vectorSalt       = "AAECAwQFBgcICQoLDA0ODw"
	vectorCommitment = "sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA"
)

func TestCommitVector(t *testing.T) {
	salt := make([]byte, 16)
	for i := range salt {
		salt[i] = byte(i)
	}
	if base64.RawURLEncoding.EncodeToString(salt) != vectorSalt {
		t.Fatal("salt encoding")
	}
	// The definition, spelled out byte by byte.
	var msg []byte
	for _, part := range [][]byte{[]byte("fiscal402/receipt-commitment/v1"), []byte(vectorField), salt, []byte(vectorValue)} {
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(part)))
		msg = append(msg, part...)
	}
	sum := sha256.Sum256(msg)
	if byHand := "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:]); byHand != vectorCommitment {
		t.Errorf("definition gives %s, vector is %s", byHand, vectorCommitment)
	}
	got, err := Commit(vectorField, vectorValue, salt)
	if err != nil || got != vectorCommitment {
		t.Errorf("Commit = %s, %v; want %s", got, err, vectorCommitment)
	}
	got, err = Opening{Field: vectorField, Value: vectorValue, Salt: vectorSalt}.Commitment()
	if err != nil || got != vectorCommitment {
		t.Errorf("Opening.Commitment = %s, %v", got, err)
	}
	// doc.go publishes the vector; keep it true.
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{vectorField, vectorValue, vectorSalt, vectorCommitment} {
		if !bytes.Contains(doc, []byte(s)) {
			t.Errorf("doc.go does not show the test vector's %q", s)
		}
	}
}

// TestCommitVectorNode has the Node verifier compute the vector.
func TestCommitVectorNode(t *testing.T) {
	node := testtool.LookPath(t, "node")
	out, err := exec.Command(node, filepath.Join("testdata", "verify.mjs"), "--commit", vectorField, vectorValue, vectorSalt).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != vectorCommitment {
		t.Errorf("node computes %s, want %s", got, vectorCommitment)
	}
}

func TestCommitRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		field, value string
		salt         []byte
	}{
		"salt of 15 bytes":  {vectorField, vectorValue, make([]byte, 15)},
		"salt of 65 bytes":  {vectorField, vectorValue, make([]byte, 65)},
		"empty field":       {"", vectorValue, make([]byte, 16)},
		"value not UTF-8":   {vectorField, "\xff", make([]byte, 16)},
		"field not UTF-8":   {"/buyer/\xff", vectorValue, make([]byte, 16)},
		"nil salt":          {vectorField, vectorValue, nil},
		"64-byte salt (ok)": {vectorField, vectorValue, make([]byte, 64)},
	} {
		_, err := Commit(tc.field, tc.value, tc.salt)
		if ok := strings.HasSuffix(name, "(ok)"); ok != (err == nil) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestConcealReveal: every personal field present is committed, blanked
// and given back by Reveal; the openings are exactly the committed fields.
func TestConcealReveal(t *testing.T) {
	for _, clear := range []Claims{sampleClaimsV3Clear(0), sampleClaimsV3B2BClear(1), sampleClaimsV3UKClear(2), pendingClaimsV3Clear(3)} {
		public, openings := conceal(t, clear, 7)
		if len(openings) != len(public.Commitments) {
			t.Errorf("%d openings for %d commitments", len(openings), len(public.Commitments))
		}
		for _, o := range openings {
			if err := VerifyOpening(&public, o); err != nil {
				t.Errorf("opening %s: %v", o.Field, err)
			}
		}
		revealed, err := Reveal(&public, openings...)
		if err != nil {
			t.Fatal(err)
		}
		want := cloneClaims(&clear)
		want.Commitments = public.Commitments
		if !reflect.DeepEqual(*revealed, want) {
			t.Errorf("Reveal(Conceal(c)) != c:\n got %+v\nwant %+v", *revealed, want)
		}
		// Conceal did not touch its input, nor Reveal the public claims.
		if clear.Buyer.Name != "" && public.Buyer.Name != "" {
			t.Errorf("public claims keep the buyer name")
		}
		again, _ := conceal(t, clear, 7)
		if !reflect.DeepEqual(again, public) {
			t.Errorf("Conceal is not deterministic for a deterministic salt source")
		}
	}
	// Fresh salts: the same value never gives the same commitment twice.
	a, _, _ := Conceal(sampleClaimsV3Clear(0), nil)
	b, _, _ := Conceal(sampleClaimsV3Clear(0), nil)
	if a.Commitments["/buyer/name"] == b.Commitments["/buyer/name"] {
		t.Errorf("two Conceal calls with crypto/rand gave equal commitments")
	}
	if _, _, err := Conceal(sampleClaimsV3Clear(0), bytes.NewReader(make([]byte, 20))); err == nil {
		t.Errorf("Conceal with an exhausted random source succeeded")
	}
	concealed, _ := conceal(t, sampleClaimsV3Clear(0), 1)
	if _, _, err := Conceal(concealed, testRand(1)); err == nil {
		t.Errorf("Conceal accepted claims that carry commitments")
	}
}

func TestVerifyOpeningRefuses(t *testing.T) {
	public, openings := conceal(t, sampleClaimsV3Clear(0), 3)
	byField := map[string]Opening{}
	for _, o := range openings {
		byField[o.Field] = o
	}
	name := byField["/buyer/name"]
	other, _ := conceal(t, sampleClaimsV3Clear(0), 4)
	for _, tc := range []struct {
		name   string
		claims *Claims
		o      Opening
		want   string // in the message
	}{
		{"value changed", &public, Opening{name.Field, "Jan Kowalsky", name.Salt}, "is not the one committed"},
		{"salt of another receipt", &other, name, "is not the one committed"},
		{"moved to another field", &public, Opening{"/buyer/postal_code", name.Value, name.Salt}, "is not the one committed"},
		{"field not committed", &public, Opening{"/buyer/vat_number", "PL1", name.Salt}, "has no commitment for this field"},
		{"salt not base64url", &public, Opening{name.Field, name.Value, name.Salt + "="}, "not unpadded base64url"},
		{"salt too short", &public, Opening{name.Field, name.Value, "AAECAw"}, "salt has 4 bytes"},
		{"old receipt", ptr(sampleClaims(0)), name, "commits no fields"},
	} {
		err := VerifyOpening(tc.claims, tc.o)
		var oe *OpeningError
		if !errors.As(err, &oe) || !errors.Is(err, ErrBadOpening) || oe.Field != tc.o.Field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an OpeningError for %s saying %q", tc.name, err, tc.o.Field, tc.want)
		}
	}
	if _, err := Reveal(&public, name, name); err == nil || !strings.Contains(err.Error(), "opened twice") {
		t.Errorf("Reveal with a field opened twice: %v", err)
	}
}

func TestParseOpenings(t *testing.T) {
	good := `[{"field":"/buyer/name","value":"Jan","salt":"AAECAwQFBgcICQoLDA0ODw"}]`
	os, err := ParseOpenings([]byte(good))
	if err != nil || len(os) != 1 || os[0] != (Opening{"/buyer/name", "Jan", "AAECAwQFBgcICQoLDA0ODw"}) {
		t.Fatalf("%+v, %v", os, err)
	}
	for name, doc := range map[string]string{
		"object":          `{"field":"/buyer/name"}`,
		"extra member":    `[{"field":"/buyer/name","value":"Jan","salt":"AAECAwQFBgcICQoLDA0ODw","note":"x"}]`,
		"missing salt":    `[{"field":"/buyer/name","value":"Jan","x":"y"}]`,
		"value a number":  `[{"field":"/buyer/name","value":1,"salt":"AAECAwQFBgcICQoLDA0ODw"}]`,
		"repeated member": `[{"field":"/buyer/name","field":"/buyer/name","value":"Jan","salt":"AAECAwQFBgcICQoLDA0ODw"}]`,
		"field twice":     `[` + good[1:len(good)-1] + `,` + good[1:len(good)-1] + `]`,
		"short salt":      `[{"field":"/buyer/name","value":"Jan","salt":"AAECAw"}]`,
		"padded salt":     `[{"field":"/buyer/name","value":"Jan","salt":"AAECAwQFBgcICQoLDA0ODw=="}]`,
		"empty field":     `[{"field":"","value":"Jan","salt":"AAECAwQFBgcICQoLDA0ODw"}]`,
		"trailing data":   good + `[]`,
		"lone surrogate":  `[{"field":"/buyer/name","value":"\ud800","salt":"AAECAwQFBgcICQoLDA0ODw"}]`,
	} {
		if _, err := ParseOpenings([]byte(doc)); !errors.Is(err, ErrBadOpening) {
			t.Errorf("%s: %v, want ErrBadOpening", name, err)
		}
	}
	if os, err := ParseOpenings([]byte(`[]`)); err != nil || len(os) != 0 {
		t.Errorf("empty list: %v, %v", os, err)
	}
}

// TestIsCommitment holds the alloc-free syntax check to the definition:
// "sha256:" and the canonical unpadded base64url of exactly 32 bytes.
func TestIsCommitment(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		n := 30 + r.IntN(5)
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		s := base64.RawURLEncoding.EncodeToString(raw)
		if r.IntN(3) == 0 {
			b := []byte(s)
			b[r.IntN(len(b))] = "A_-+/=.\n"[r.IntN(8)]
			s = string(b)
		}
		decoded, err := base64.RawURLEncoding.Strict().DecodeString(s)
		want := err == nil && len(decoded) == 32 && base64.RawURLEncoding.EncodeToString(decoded) == s
		if got := isCommitment("sha256:" + s); got != want {
			t.Fatalf("isCommitment(sha256:%s) = %v, want %v", s, got, want)
		}
	}
	if isCommitment(vectorCommitment[len("sha256:"):]) || !isCommitment(vectorCommitment) {
		t.Errorf("prefix not required")
	}
}

// TestHasControl holds the word-at-a-time check to the byte loop.
func TestHasControl(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0xe0))
			if r.IntN(50) == 0 {
				b[i] = byte(r.IntN(0x20))
			}
		}
		want := false
		for _, c := range b {
			want = want || c < 0x20
		}
		if hasControl(b) != want {
			t.Fatalf("hasControl(%q) = %v", b, !want)
		}
	}
}
