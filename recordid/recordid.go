package recordid

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fiscal402/fiscal402/internal/durable"
)

// KeyFile is the key's file name in the key directory.
const KeyFile = "record-id.key"

// Keyed makes record ids under one key. It is safe for concurrent use.
type Keyed struct {
	// mac is HMAC-SHA256 under the key with its two key blocks hashed
	// (Reset keeps the inner and outer states, which FIPS 198-1 §6 allows
	// precomputing once per key); ID clones it, so that an id costs two
	// SHA-256 blocks instead of four. Never written after New.
	mac         hash.Cloner
	fingerprint string
}

// New is Keyed under a 32-byte key.
func New(key []byte) (*Keyed, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("recordid: a key of %d bytes, not 32", len(key))
	}
	m := hmac.New(sha256.New, key)
	m.Reset()
	c, ok := m.(hash.Cloner) // crypto/hmac over crypto/sha256 clones (Go 1.25)
	if !ok {
		return nil, errors.New("recordid: the HMAC cannot be cloned")
	}
	sum := sha256.Sum256(key)
	return &Keyed{mac: c, fingerprint: "sha256:" + hex.EncodeToString(sum[:])}, nil
}

// LoadOrCreate reads the key in dir, or creates it from rnd, and returns
// Keyed under it. A key file that is not 32 bytes in hex, or whose mode
// lets anyone but its owner read it, is an error. A new key is durable
// before it is used (its file and the directory entry fsynced): a key lost
// to a power cut after records were made under it would change every id
// made after the restart. Two processes creating it at once use the one
// that was linked first.
func LoadOrCreate(dir string, rnd io.Reader) (*Keyed, error) {
	path := filepath.Join(dir, KeyFile)
	raw, err := durable.ReadOrCreate(path, 0o600, func() ([]byte, error) {
		key := make([]byte, 32)
		if _, err := io.ReadFull(rnd, key); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(key) + "\n"), nil
	})
	if err != nil {
		return nil, fmt.Errorf("recordid: %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s: not a 32-byte hex key", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %v is looser than 0600", path, fi.Mode().Perm())
	}
	return New(key)
}

// ID is the id of the record of the payment (network, txHash).
func (k *Keyed) ID(network, txHash string) string {
	c, err := k.mac.Clone()
	if err != nil {
		panic("recordid: the HMAC cannot be cloned: " + err.Error()) // New checked that it can
	}
	m := c.(hash.Hash)
	m.Write([]byte(network + ":" + strings.ToLower(txHash)))
	var sum [sha256.Size]byte
	return "x402-" + hex.EncodeToString(m.Sum(sum[:0])[:16])
}

// Fingerprint names the key without revealing it: "sha256:" and the hex
// SHA-256 of the key (a PostgreSQL log records it, so that a replica with
// another key is refused).
func (k *Keyed) Fingerprint() string { return k.fingerprint }
