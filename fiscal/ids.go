package fiscal

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
)

// Record ids. A record's receipt is public (GET /v1/receipts/rcpt_<id>, no
// key), so its id must not be computable by someone who only saw the
// payment on chain. The id of a production record is "x402-" + the first
// 16 bytes (32 hex) of HMAC-SHA256(record-id key, network ":" lower-case tx
// hash): still the same for every replay and every replica holding the
// key, so a payment keeps one id, but unguessable without the key. The key
// (keys/record-id.key, 32 random bytes, 0600) is made on first use; replicas
// share it like the receipt and log keys. Records made before the key
// existed keep their ids (the (network, txHash) claim, not the id, makes a
// payment unique).

const recordIDKeyFile = "record-id.key"

// loadOrCreateIDKey reads the record-id key, or creates it from rnd.
func loadOrCreateIDKey(dir string, rnd io.Reader) ([]byte, error) {
	path := filepath.Join(dir, recordIDKeyFile)
	raw, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("%s: not a 32-byte hex key", path)
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%s: mode %v is looser than 0600", path, fi.Mode().Perm())
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := io.ReadFull(rnd, key); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return key, nil
}

// newIDMAC is HMAC-SHA256 under the record-id key with its key blocks
// hashed (Reset keeps the inner and outer states: FIPS 198-1 §6 allows
// precomputing them once per key). keyedID clones it: two SHA-256 blocks
// per id instead of four.
func newIDMAC(key []byte) hash.Cloner {
	m := hmac.New(sha256.New, key)
	m.Reset()
	return m.(hash.Cloner) // crypto/hmac over crypto/sha256 clones (Go 1.25)
}

// keyedID is the id of the record of the payment (network, txHash).
func (e *Engine) keyedID(network, txHash string) string {
	c, err := e.idMAC.Clone()
	if err != nil {
		panic("fiscal: the record-id HMAC cannot be cloned: " + err.Error()) // newIDMAC's hash always can
	}
	m := c.(hash.Hash)
	m.Write([]byte(network + ":" + strings.ToLower(txHash)))
	var sum [sha256.Size]byte
	return "x402-" + hex.EncodeToString(m.Sum(sum[:0])[:16])
}

// RecordID is the id the record of the payment (network, txHash) has, or
// will have, in this engine's production books (the sandbox draws random
// ids). It needs the engine's record-id key: nobody else can compute it.
func (e *Engine) RecordID(network, txHash string) string {
	return e.keyedID(network, txHash)
}
