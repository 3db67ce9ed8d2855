package httpserver

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/durable"
	"github.com/fiscal402/fiscal402/webhooks"
)

// HeaderServiceKey is the request header that carries an account's API key.
const HeaderServiceKey = "X-Service-Key"

// AccountsFile is the server's accounts configuration (the -accounts file):
// per account its seller (the engine's account), the SHA-256 hashes of its
// API keys (this package's business: the engine knows no keys) and the
// webhook endpoints the operator set (package webhooks).
type AccountsFile struct {
	// Generation numbers the file's versions for replicas that share a
	// log (webhooks.Options.ConfigGeneration): raise it with a change that
	// removes webhook endpoints. 0 (absent) is the first.
	Generation int64          `json:"generation,omitempty"`
	Accounts   []AccountEntry `json:"accounts"`
}

// AccountEntry is one account of the accounts file.
type AccountEntry struct {
	ID        string        `json:"id"`
	KeyHashes []string      `json:"keyHashes"` // "sha256:<hex>" of each valid X-Service-Key (HashKey)
	Seller    fiscal.Seller `json:"seller"`
	// Webhooks are endpoints set by the operator; more can be added through
	// the API. Their secrets are written here in plain text, as the operator
	// chose them (the file is mode 0600): HMAC needs the secret itself.
	Webhooks []webhooks.EndpointConfig `json:"webhooks,omitempty"`
}

// LoadAccountsFile reads an accounts file (JSON; unknown fields are errors
// so that a typo in a seller setting cannot pass unnoticed) and checks it:
// every account needs at least one key hash, and its webhooks must be
// valid. Sellers are checked by fiscal.New.
func LoadAccountsFile(path string) (*AccountsFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accounts file: %w", err)
	}
	var f AccountsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("accounts file %s: %w", path, err)
	}
	// A seller's registrations left out are not checked; null, which
	// the decoder reads as left out, is refused as a typo would be: it
	// asks for more than any list (README "Errors").
	var nulls struct {
		Accounts []struct {
			Seller map[string]json.RawMessage `json:"seller"`
		} `json:"accounts"`
	}
	if json.Unmarshal(raw, &nulls) == nil {
		for i, a := range nulls.Accounts {
			if string(a.Seller["registrations"]) == "null" {
				return nil, fmt.Errorf("accounts file %s: account %d: seller.registrations is null: leave it out (registrations not stated, not checked) or list them ([] for none)", path, i)
			}
		}
	}
	if f.Generation < 0 {
		return nil, fmt.Errorf("accounts file %s: generation %d: must be 0 or more", path, f.Generation)
	}
	if _, err := f.Keys(); err != nil {
		return nil, fmt.Errorf("accounts file %s: %w", path, err)
	}
	for _, a := range f.Accounts {
		if err := webhooks.ValidateConfigs(a.Webhooks); err != nil {
			return nil, fmt.Errorf("accounts file %s: account %q: %w", path, a.ID, err)
		}
	}
	return &f, nil
}

// WriteAccountsFile writes f to path atomically (temporary file, fsync,
// rename) with mode 0600: it holds key hashes, webhook secrets and seller
// data.
func WriteAccountsFile(path string, f AccountsFile) error {
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(path, append(raw, '\n'), 0o600)
}

// EngineAccounts returns the engine's accounts (Config.Accounts).
func (f *AccountsFile) EngineAccounts() []fiscal.Account {
	out := make([]fiscal.Account, 0, len(f.Accounts))
	for _, a := range f.Accounts {
		out = append(out, fiscal.Account{ID: a.ID, Seller: a.Seller})
	}
	return out
}

// Webhooks returns the configured endpoints per account id
// (webhooks.Options.Configured).
func (f *AccountsFile) Webhooks() map[string][]webhooks.EndpointConfig {
	out := map[string][]webhooks.EndpointConfig{}
	for _, a := range f.Accounts {
		if len(a.Webhooks) > 0 {
			out[a.ID] = a.Webhooks
		}
	}
	return out
}

// Keys returns the API keys of the file's accounts.
func (f *AccountsFile) Keys() (*Keys, error) {
	k := &Keys{}
	seen := map[string]bool{}
	for _, a := range f.Accounts {
		if seen[a.ID] {
			return nil, fmt.Errorf("account %q appears twice", a.ID)
		}
		seen[a.ID] = true
		if len(a.KeyHashes) == 0 {
			return nil, fmt.Errorf("account %q has no key hash (make one with HashKey, or the server's accounts create)", a.ID)
		}
		for i, kh := range a.KeyHashes {
			h, err := parseKeyHash(kh)
			if err != nil {
				return nil, fmt.Errorf("account %q: keyHashes[%d]: %w", a.ID, i, err)
			}
			k.hashes = append(k.hashes, keyHash{hash: h, account: a.ID})
		}
	}
	return k, nil
}

// Keys authenticates API keys: which account a key belongs to. Only SHA-256
// hashes of keys are held: keys are 256-bit random strings, so a plain hash
// is not brute-forceable and needs no password-hashing function.
type Keys struct {
	hashes []keyHash
}

type keyHash struct {
	hash    [sha256.Size]byte
	account string
}

// Authenticate returns the id of the account that key belongs to. It
// hashes the key once and compares the hash with every stored hash in
// constant time, so the time taken does not depend on which account (if
// any) matches.
func (k *Keys) Authenticate(key string) (string, error) {
	if key == "" {
		return "", &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Detail: "the X-Service-Key header is required"}
	}
	h := sha256.Sum256([]byte(key))
	found := -1
	for i, kh := range k.hashes {
		if subtle.ConstantTimeCompare(h[:], kh.hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Detail: "the X-Service-Key is not valid"}
	}
	return k.hashes[found].account, nil
}

// HashKey returns the "sha256:<hex>" form of an API key, as stored in the
// accounts file.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(h[:])
}

func parseKeyHash(s string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	b, err := hex.DecodeString(hexPart)
	if !ok || err != nil || len(b) != sha256.Size {
		// Never the value: it may be the key itself, pasted where its
		// hash belongs, and this error reaches logs and terminals.
		if strings.HasPrefix(s, "sk_") {
			return h, errors.New("this entry looks like an API key itself, not its hash: store \"sha256:\" and the key's SHA-256 in hex (httpserver.HashKey), or make a new key with the server's accounts rotate-key, and treat the pasted key as disclosed")
		}
		return h, errors.New("must be \"sha256:\" followed by 64 hex digits (httpserver.HashKey)")
	}
	copy(h[:], b)
	return h, nil
}

// NewAPIKey returns a new random API key ("sk_" + 43 base64url characters,
// 256 bits) read from rand.
func NewAPIKey(rand io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("api key: %w", err)
	}
	return "sk_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}
