package receipt

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestParseKeySetRefusesPrivateKeys: issue 19 item 15. A key set whose key
// carries a private member (any of RFC 7518 §6 and RFC 8037 §2) is refused
// by ParseKeySet and by Verify, with a message that says what to do.
func TestParseKeySetRefusesPrivateKeys(t *testing.T) {
	s := newTamperSet(t)
	key := string(mustJSON(t, s.f.keys.Keys[0]))
	for _, member := range privateMembers {
		jwks := []byte(`{"keys":[` + strings.Replace(key, `"kty"`, `"`+member+`":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","kty"`, 1) + `]}`)
		_, err := ParseKeySet(jwks)
		if !errors.Is(err, ErrPrivateKeyPublished) || !strings.Contains(err.Error(), `"`+member+`"`) || strings.Count(err.Error(), "receipt:") != 1 {
			t.Errorf("member %s: %v", member, err)
		}
		_, err = Verify(s.rs[1], jwks, s.f.log.vkey)
		if stepOf(err) != StepJWKS || !errors.Is(err, ErrPrivateKeyPublished) || !strings.Contains(err.Error(), "forge") {
			t.Errorf("Verify with member %s: %v", member, err)
		}
	}
	// Even on a key this package would not use (another kty), and even
	// when the member is null: its presence is the leak.
	for _, jwks := range []string{
		`{"keys":[{"kty":"oct","kid":"h","k":"c2VjcmV0"}]}`,
		`{"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB","p":null}]}`,
	} {
		if _, err := ParseKeySet([]byte(jwks)); !errors.Is(err, ErrPrivateKeyPublished) {
			t.Errorf("%s: %v", jwks, err)
		}
	}
}

// TestKeyNeverMarshalsPrivateMembers: the Key struct is what every key set
// of this package is written from; it has no member that could carry a
// private key, now or after a careless edit.
func TestKeyNeverMarshalsPrivateMembers(t *testing.T) {
	typ := reflect.TypeFor[Key]()
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"alg", "crv", "exp", "kid", "kty", "nbf", "revoked", "use", "x"}; !slices.Equal(names, want) {
		t.Errorf("Key marshals members %v, want exactly %v", names, want)
	}
	for _, n := range names {
		if slices.Contains(privateMembers[:], n) {
			t.Errorf("Key has the private member %q", n)
		}
	}
	// And a fully populated key set really marshals to nothing else.
	exp := int64(2)
	b, _ := json.Marshal(KeySet{Keys: []Key{{Kty: "OKP", Crv: "Ed25519", X: "x", Kid: "k", Alg: "EdDSA", Use: "sig", NotBefore: 1, Expires: &exp, Revoked: true}}})
	var doc struct{ Keys []map[string]any }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for m := range doc.Keys[0] {
		if slices.Contains(privateMembers[:], m) {
			t.Errorf("marshalled key has %q", m)
		}
	}
}
