package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/internal/durable"
)

// maxKeyFile bounds what LoadOrCreateLogKey reads: an encoded Ed25519 signer
// key is the name plus about 70 bytes.
const maxKeyFile = 4096

// GenerateLogKey generates an Ed25519 log key named after origin, reading the
// 32-byte seed from rand (crypto/rand.Reader in production; a fixed reader
// makes tests reproducible). skey is the secret note signer key
// "PRIVATE+KEY+<origin>+<hash>+<base64>" (note.NewSigner reads it); vkey the
// public note verifier key "<origin>+<hash>+<base64>" (note.NewVerifier)
// that verifiers of checkpoints and receipts pin.
func GenerateLogKey(origin string, rand io.Reader) (skey, vkey string, err error) {
	if err := validOrigin(origin); err != nil {
		return "", "", err
	}
	if rand == nil {
		return "", "", fmt.Errorf("ledger: generate log key: nil random source: %w", ErrInvalid)
	}
	skey, vkey, err = note.GenerateKey(rand, origin)
	if err != nil {
		return "", "", fmt.Errorf("ledger: generate log key: %w", err)
	}
	return skey, vkey, nil
}

// LoadOrCreateLogKey returns the log key stored at path, creating it on first
// use. The file holds the signer key (GenerateLogKey's skey) and a newline.
// Creation writes a temporary file (mode 0600) in the same directory, fsyncs
// it, links it into place without replacing anything (two processes racing
// end up with the same key) and fsyncs the directory. An existing file is
// refused when it is not a regular file, when group or other may read or
// write it (mode & 0o077 ≠ 0), or when it names another origin
// (ErrOriginMismatch). vkey is the public note verifier key.
func LoadOrCreateLogKey(path, origin string) (signer note.Signer, vkey string, err error) {
	if err := validOrigin(origin); err != nil {
		return nil, "", err
	}
	signer, vkey, err = loadLogKey(path, origin)
	if err == nil {
		durable.Tidy(path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return signer, vkey, err
	}
	skey, _, err := GenerateLogKey(origin, rand.Reader)
	if err != nil {
		return nil, "", err
	}
	// Losing the race to another creator (os.ErrExist) is not an error:
	// whichever key won is loaded.
	if err := durable.Create(path, []byte(skey+"\n"), 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, "", fmt.Errorf("ledger: create log key %s: %w", path, err)
	}
	return loadLogKey(path, origin)
}

// loadLogKey reads and checks an existing key file; a missing file is an
// error wrapping os.ErrNotExist.
func loadLogKey(path, origin string) (note.Signer, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("ledger: log key %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("ledger: log key %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("ledger: log key %s: not a regular file: %w", path, ErrInvalid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, "", fmt.Errorf("ledger: log key %s: mode %04o lets group or other access the secret key; chmod 600 it: %w", path, perm, ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, "", fmt.Errorf("ledger: log key %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, "", fmt.Errorf("ledger: log key %s: larger than %d bytes: %w", path, maxKeyFile, ErrInvalid)
	}
	skey := strings.TrimSuffix(string(data), "\n")
	signer, vkey, err := parseSignerKey(skey)
	if err != nil {
		return nil, "", fmt.Errorf("ledger: log key %s: %w", path, err)
	}
	if signer.Name() != origin {
		return nil, "", fmt.Errorf("ledger: log key %s is named %q, not the origin %q: %w", path, signer.Name(), origin, ErrOriginMismatch)
	}
	return signer, vkey, nil
}

// parseSignerKey parses an encoded note signer key and derives its verifier
// key, which the note package does not expose: the seed after the algorithm
// byte gives the Ed25519 public key (RFC 8032 §5.1.5).
func parseSignerKey(skey string) (note.Signer, string, error) {
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", fmt.Errorf("not a note signer key: %w: %w", ErrInvalid, err)
	}
	// note.NewSigner validated the layout PRIVATE+KEY+name+hash+base64(alg‖seed)
	// (a name holds no '+'; base64 may) and that the hash matches the
	// derived public key.
	b64 := skey
	for range 4 {
		_, b64, _ = strings.Cut(b64, "+")
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return nil, "", fmt.Errorf("not an Ed25519 note signer key: %w", ErrInvalid)
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(signer.Name(), pub)
	if err != nil {
		return nil, "", fmt.Errorf("derive verifier key: %w", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil || v.KeyHash() != signer.KeyHash() {
		return nil, "", fmt.Errorf("derived verifier key does not match the signer: %w", ErrInvalid)
	}
	return signer, vkey, nil
}
