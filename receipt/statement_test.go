package receipt

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatement: a statement verifies under the key set that lists its
// key, and fails when its payload, type or key changes, or its key is
// revoked; a receipt type is no statement type.
func TestStatement(t *testing.T) {
	s, err := NewSigner(seedKey(1))
	if err != nil {
		t.Fatal(err)
	}
	key, err := NewKey(s.PublicKey(), fixedTime)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(KeySet{Keys: []Key{key}})
	payload := []byte(`{"period":"2026-Q1","vatEur":"150.37"}`)
	const typ = "fiscal402.oss-return+jws"
	jws, err := s.SignStatement(typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.SignStatement(typ, payload)
	if again != jws {
		t.Fatal("Ed25519 statements are deterministic: the same payload gave two JWS")
	}
	got, kid, err := VerifyStatement(jws, jwks, typ)
	if err != nil || string(got) != string(payload) || kid != s.KeyID() {
		t.Fatalf("verify: %q %s %v", got, kid, err)
	}

	other, _ := NewSigner(seedKey(2))
	otherJWS, _ := other.SignStatement(typ, payload)
	parts := strings.Split(jws, ".")
	altered, _ := s.SignStatement(typ, []byte(`{"period":"2026-Q1","vatEur":"150.38"}`))
	revoked := key
	revoked.Revoked = true
	revokedSet, _ := json.Marshal(KeySet{Keys: []Key{revoked}})
	for _, c := range []struct {
		name, jws, typ string
		jwks           []byte
		want           string
	}{
		{"payload changed", parts[0] + "." + strings.Split(altered, ".")[1] + "." + parts[2], typ, jwks, "signature does not verify"},
		{"other type", jws, "fiscal402.other+jws", jwks, "typ"},
		{"unknown key", otherJWS, typ, jwks, "does not list"},
		{"revoked key", jws, typ, revokedSet, "revoked"},
		{"not compact", "a.b", typ, jwks, "three base64url parts"},
	} {
		if _, _, err := VerifyStatement(c.jws, c.jwks, c.typ); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	for _, bad := range []string{TypeV3, TypeV1, "Upper+jws", "no-suffix", ""} {
		if _, err := s.SignStatement(bad, payload); err == nil {
			t.Errorf("statement type %q accepted", bad)
		}
	}
}
