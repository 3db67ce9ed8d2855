package receipt

import (
	"bytes"
	"crypto/ed25519"
	cryptorand "crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/internal/durable"
)

// Errors of the keyring. Each is wrapped with the file or key it concerns.
var (
	// ErrKeyFileMode: a private key file is readable or writable by group or
	// others. The keyring refuses to use it rather than silently tighten it.
	ErrKeyFileMode = errors.New("receipt: private key file mode is looser than 0600")
	// ErrKeyringInconsistent: the key file and the JWKS file do not belong
	// together (one is missing, or the active JWKS key is not the key file's).
	// Restore both from the same backup; never recreate one alone, or old
	// receipts become unverifiable.
	ErrKeyringInconsistent = errors.New("receipt: keyring files are inconsistent")
	// ErrOutsideKeyWindow: Keyring.Sign was given claims whose iat is before
	// the active key's nbf; Verify would reject the receipt.
	ErrOutsideKeyWindow = errors.New("receipt: iat is outside the active key's validity window")
	// ErrRevokeActive: the active key cannot be revoked; Rotate first.
	ErrRevokeActive = errors.New("receipt: cannot revoke the active key; rotate first")
)

// Keyring holds the receipt signing keys of one environment in a directory:
//
//	<name>.key       the active private key, PKCS#8 PEM, mode 0600
//	<name>.jwks.json every public key ever used, with its window (KeySet)
//	<name>.key.next  only between the steps of a create or a rotation
//
// Its methods are safe for concurrent use. One process owns a keyring
// directory at a time (the server's data directory is already owned by one
// process: bbolt locks its file, ledger/doc.go).
type Keyring struct {
	dir, name string

	mu     sync.RWMutex
	signer *Signer
	keys   KeySet
	// held counts the Holds on the active key; retired are keys rotated
	// out while held, which keep cosigning until their holds are
	// released (Hold, Cosigners). Guarded by mu; the counts are atomic.
	held    *keyHolds
	retired []*keyHolds
	// maxIAT is the highest iat signed by the active key through Sign or
	// admitted by Hold, at least the time OpenKeyring was called with, so
	// that Rotate never sets an exp that a receipt already issued in the
	// same second would fall outside of. Guarded by mu (read-locked signers
	// update it under maxMu).
	maxMu  sync.Mutex
	maxIAT int64
}

// OpenKeyring opens the keyring name ("production" or "sandbox") in dir,
// creating dir (0700), a new key (from rand; nil means crypto/rand) valid
// from now, and both files on first use. It finishes or undoes a rotation
// that a crash interrupted (see Rotate). It refuses a key file whose mode is
// looser than 0600 (ErrKeyFileMode) and a key file without its JWKS or the
// reverse (ErrKeyringInconsistent).
func OpenKeyring(dir, name string, now time.Time, rand io.Reader) (*Keyring, error) {
	if name != EnvProduction && name != EnvSandbox {
		return nil, fmt.Errorf("receipt: keyring name %q is neither %q nor %q", name, EnvProduction, EnvSandbox)
	}
	if rand == nil {
		rand = cryptorand.Reader
	}
	k := &Keyring{dir: dir, name: name}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("receipt: keyring %s: %w", name, err)
	}
	if err := k.recover(); err != nil {
		return nil, err
	}
	_, keyErr := os.Stat(k.keyPath())
	_, jwksErr := os.Stat(k.jwksPath())
	switch {
	case errors.Is(keyErr, fs.ErrNotExist) && errors.Is(jwksErr, fs.ErrNotExist):
		if err := k.create(now, rand); err != nil {
			return nil, err
		}
	case keyErr != nil && !errors.Is(keyErr, fs.ErrNotExist):
		return nil, fmt.Errorf("receipt: keyring %s: %w", name, keyErr)
	case jwksErr != nil && !errors.Is(jwksErr, fs.ErrNotExist):
		return nil, fmt.Errorf("receipt: keyring %s: %w", name, jwksErr)
	case keyErr != nil:
		return nil, fmt.Errorf("%w: %s exists but %s does not", ErrKeyringInconsistent, k.jwksPath(), k.keyPath())
	case jwksErr != nil:
		return nil, fmt.Errorf("%w: %s exists but %s does not", ErrKeyringInconsistent, k.keyPath(), k.jwksPath())
	}
	if err := k.load(); err != nil {
		return nil, err
	}
	// Receipts the active key vouched for in an earlier process (a server
	// stopped a moment ago, before the operator's rotation) may carry an
	// iat up to now, which this process never saw: Rotate gives the key an
	// exp after it, as after an iat it saw itself.
	k.maxIAT = now.Unix()
	return k, nil
}

// Name returns the keyring's environment name.
func (k *Keyring) Name() string { return k.name }

// Signer returns the signer of the active key, bound to the keyring's
// environment. A Signer taken before Rotate keeps signing with the retired
// key, whose receipts fail the key-window check once iat ≥ exp; the engine
// should call Keyring.Sign, which always uses the active key.
func (k *Keyring) Signer() *Signer {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.signer
}

// Sign signs c with the active key (see Signer.Sign). It refuses claims of
// another environment (ErrWrongEnvironment) and claims issued before the
// active key's nbf (ErrOutsideKeyWindow), and remembers the latest iat so
// that a concurrent Rotate cannot retire the key before a receipt it just
// signed.
func (k *Keyring) Sign(c Claims) (string, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	active := k.keys.Keys[len(k.keys.Keys)-1]
	if c.IssuedAt < active.NotBefore {
		return "", fmt.Errorf("%w: iat %d, key %s has nbf %d", ErrOutsideKeyWindow, c.IssuedAt, active.Kid, active.NotBefore)
	}
	jws, err := k.signer.Sign(c)
	if err != nil {
		return "", err
	}
	k.maxMu.Lock()
	k.maxIAT = max(k.maxIAT, c.IssuedAt)
	k.maxMu.Unlock()
	return jws, nil
}

// keyHolds is a key and the number of Holds on it not yet released.
type keyHolds struct {
	signer *Signer
	n      atomic.Int64
}

// Hold is a receipt admitted for issue under a key (Keyring.Hold): until
// Release, that key cosigns every checkpoint, rotated or not. The zero
// Hold holds nothing.
type Hold struct{ h *keyHolds }

// Release ends the hold. Call it once, when the receipt's append has been
// answered (committed or failed): its checkpoint is signed by then.
func (h Hold) Release() {
	if h.h != nil {
		h.h.n.Add(-1)
	}
}

// KeyID is the kid of the held key, "" for the zero Hold.
func (h Hold) KeyID() string {
	if h.h == nil {
		return ""
	}
	return h.h.signer.kid
}

// Hold admits claims for a 4.0.0 receipt under the active key, as Sign
// admits claims for a JWS: it refuses claims of another environment
// (ErrWrongEnvironment) and claims issued before the active key's nbf
// (ErrOutsideKeyWindow), and remembers the latest iat, so that a Rotate
// gives the key an exp after it. It does not check the claims against the
// format: Seal does. Until the Hold is released, the key is among
// Cosigners even if Rotate retires it meanwhile: the receipt, admitted
// within the key's window, may be logged after the rotation, and the
// checkpoint of its commit must carry a signature by a key whose window
// holds its iat (doc.go "# Version 4.0.0"). Release the Hold once the
// append is answered. Nil claims (an entry without a receipt) hold nothing:
// the zero Hold.
func (k *Keyring) Hold(c *Claims) (Hold, error) {
	if c == nil {
		return Hold{}, nil
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.signer.env != "" && c.Environment != k.signer.env {
		return Hold{}, fmt.Errorf("%w: claims are %q, key is %q", ErrWrongEnvironment, c.Environment, k.signer.env)
	}
	active := k.keys.Keys[len(k.keys.Keys)-1]
	if c.IssuedAt < active.NotBefore {
		return Hold{}, fmt.Errorf("%w: iat %d, key %s has nbf %d", ErrOutsideKeyWindow, c.IssuedAt, active.Kid, active.NotBefore)
	}
	k.maxMu.Lock()
	k.maxIAT = max(k.maxIAT, c.IssuedAt)
	k.maxMu.Unlock()
	k.held.n.Add(1)
	return Hold{h: k.held}, nil
}

// Cosigners returns the keys that sign the next checkpoint beside the log
// key (ledger.Options.Cosigners): the active key, and each retired key
// that a Hold still holds, as signed-note signers named by their kid. It
// is safe for concurrent use and cheap (one small slice), asked once per
// commit, so a Rotate takes effect at the next commit.
func (k *Keyring) Cosigners() []note.Signer {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]note.Signer, 1, 1+len(k.retired))
	out[0] = k.signer.note
	for _, r := range k.retired {
		if r.n.Load() > 0 {
			out = append(out, r.signer.note)
		}
	}
	return out
}

// KeySet returns every key this keyring ever signed with, oldest first, the
// active key last: the document to serve at GET /.well-known/jwks.json (for
// the production keyring only; a sandbox key set is never merged into it).
func (k *Keyring) KeySet() KeySet {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return cloneKeySet(k.keys)
}

// Rotate retires the active key and makes a new one (from rand; nil means
// crypto/rand) active. The retired key gets exp = now, or one second past
// the latest iat it signed (or the time the keyring was opened, up to
// which an earlier process may have issued receipts) if that is later
// (windows are nbf ≤ iat < exp);
// the new key gets nbf = now. The retired key's public half and window stay
// in the JWKS so its receipts stay verifiable; its private key is deleted.
//
// The steps are crash-safe: (1) the new private key is written to
// <name>.key.next, (2) the JWKS naming it is written atomically, (3) .next is
// renamed over <name>.key. OpenKeyring finishes a rotation interrupted after
// (2) and discards one interrupted before it. Every file write is a
// write-to-temporary, fsync, rename, fsync of the directory.
func (k *Keyring) Rotate(now time.Time, rand io.Reader) error {
	if rand == nil {
		rand = cryptorand.Reader
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	active := k.keys.Keys[len(k.keys.Keys)-1]
	if now.Unix() < active.NotBefore {
		return fmt.Errorf("receipt: keyring %s: rotate at %d, before the active key's nbf %d (clock went backwards?)", k.name, now.Unix(), active.NotBefore)
	}
	priv, err := newPrivateKey(rand)
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: rotate: %w", k.name, err)
	}
	signer, key, err := k.newActive(priv, now)
	if err != nil {
		return err
	}
	if key.Kid == active.Kid {
		return fmt.Errorf("receipt: keyring %s: rotate: the random source repeated the active key", k.name)
	}
	k.maxMu.Lock()
	exp := max(now.Unix(), k.maxIAT+1)
	k.maxMu.Unlock()
	next := cloneKeySet(k.keys)
	next.Keys[len(next.Keys)-1].Expires = &exp
	next.Keys = append(next.Keys, key)

	if err := k.writePrivateKey(k.nextPath(), priv); err != nil {
		return fmt.Errorf("receipt: keyring %s: rotate: %w", k.name, err)
	}
	if err := k.writeKeySet(next); err != nil {
		// The key set on the disk may be the old one or, when only the
		// directory's sync failed, the new one: .next stays, and the
		// next OpenKeyring finishes the rotation or discards it by what
		// the key set says (recover), rather than a removal here leaving
		// a published key without its private half.
		return fmt.Errorf("receipt: keyring %s: rotate: %w", k.name, err)
	}
	// From here on the new key is published: use it even if the last step
	// fails, since OpenKeyring will complete the rename. The retired key
	// keeps cosigning while receipts admitted under it are on their way
	// (Hold); a key whose holds are all released never gets one again.
	retired := k.retired[:0:0]
	for _, r := range append(k.retired, k.held) {
		if r.n.Load() > 0 {
			retired = append(retired, r)
		}
	}
	k.signer, k.keys, k.held, k.retired = signer, next, &keyHolds{signer: signer}, retired
	k.maxMu.Lock()
	k.maxIAT = 0
	k.maxMu.Unlock()
	if err := durable.Rename(k.nextPath(), k.keyPath()); err != nil {
		return fmt.Errorf("receipt: keyring %s: rotate: new key %s is active, but %s was not renamed (the next OpenKeyring finishes it): %w",
			k.name, key.Kid, k.nextPath(), err)
	}
	return nil
}

// Revoke marks a retired key revoked in the JWKS: every receipt it signed
// then fails verification with StepKeyRevoked. Use it when a retired private
// key may have leaked; for the active key, Rotate first (ErrRevokeActive).
func (k *Keyring) Revoke(kid string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := k.keys.Lookup(kid); err != nil {
		return fmt.Errorf("receipt: keyring %s: revoke: %w", k.name, err)
	}
	if k.keys.Keys[len(k.keys.Keys)-1].Kid == kid {
		return fmt.Errorf("%w: %s", ErrRevokeActive, kid)
	}
	next := cloneKeySet(k.keys)
	for i := range next.Keys {
		if next.Keys[i].Kid == kid {
			next.Keys[i].Revoked = true
		}
	}
	if err := k.writeKeySet(next); err != nil {
		return fmt.Errorf("receipt: keyring %s: revoke: %w", k.name, err)
	}
	k.keys = next
	return nil
}

func (k *Keyring) keyPath() string  { return filepath.Join(k.dir, k.name+".key") }
func (k *Keyring) nextPath() string { return filepath.Join(k.dir, k.name+".key.next") }
func (k *Keyring) jwksPath() string { return filepath.Join(k.dir, k.name+".jwks.json") }

// create makes the first key: .next, then the JWKS, then the rename, so a
// crash at any point leaves a state that recover or create handles.
func (k *Keyring) create(now time.Time, rand io.Reader) error {
	priv, err := newPrivateKey(rand)
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: create: %w", k.name, err)
	}
	_, key, err := k.newActive(priv, now)
	if err != nil {
		return err
	}
	if err := k.writePrivateKey(k.nextPath(), priv); err != nil {
		return fmt.Errorf("receipt: keyring %s: create: %w", k.name, err)
	}
	if err := k.writeKeySet(KeySet{Keys: []Key{key}}); err != nil {
		// As in Rotate: .next stays for recover to decide.
		return fmt.Errorf("receipt: keyring %s: create: %w", k.name, err)
	}
	if err := durable.Rename(k.nextPath(), k.keyPath()); err != nil {
		return fmt.Errorf("receipt: keyring %s: create: %w", k.name, err)
	}
	return nil
}

// recover finishes or undoes an interrupted create or rotation: a .next key
// that the JWKS names as active was published, so it becomes the key file;
// any other .next key was never published and is deleted.
func (k *Keyring) recover() error {
	if _, err := os.Lstat(k.nextPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("receipt: keyring %s: %w", k.name, err)
	}
	priv, err := readPrivateKey(k.nextPath())
	if errors.Is(err, ErrKeyFileMode) {
		return err
	}
	published := false
	if err == nil {
		if data, rerr := os.ReadFile(k.jwksPath()); rerr == nil {
			if ks, perr := ParseKeySet(data); perr == nil && len(ks.Keys) > 0 {
				kid, terr := Thumbprint(priv.Public().(ed25519.PublicKey))
				last := ks.Keys[len(ks.Keys)-1]
				published = terr == nil && last.Kid == kid && last.Expires == nil
			}
		}
	}
	if published {
		if err := durable.Rename(k.nextPath(), k.keyPath()); err != nil {
			return fmt.Errorf("receipt: keyring %s: finish interrupted rotation: %w", k.name, err)
		}
		return nil
	}
	if err := os.Remove(k.nextPath()); err != nil {
		return fmt.Errorf("receipt: keyring %s: discard unpublished key: %w", k.name, err)
	}
	return durable.SyncDir(k.dir)
}

// load reads both files and checks that they belong together: every JWKS key
// is a well-formed Ed25519 key with its own thumbprint as kid, kids are
// unique, exactly the last key is open-ended and not revoked, and it is the
// key file's public key.
func (k *Keyring) load() error {
	priv, err := readPrivateKey(k.keyPath())
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: %w", k.name, err)
	}
	data, err := os.ReadFile(k.jwksPath())
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: %w", k.name, err)
	}
	ks, err := ParseKeySet(data)
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: %s: %w", k.name, k.jwksPath(), err)
	}
	if len(ks.Keys) == 0 {
		return fmt.Errorf("%w: %s has no keys", ErrKeyringInconsistent, k.jwksPath())
	}
	for i, key := range ks.Keys {
		if _, err := ks.Lookup(key.Kid); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrKeyringInconsistent, k.jwksPath(), err)
		}
		if _, err := key.PublicKey(); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrKeyringInconsistent, k.jwksPath(), err)
		}
		last := i == len(ks.Keys)-1
		if last != (key.Expires == nil) {
			return fmt.Errorf("%w: %s: key %s: only the last (active) key may lack exp", ErrKeyringInconsistent, k.jwksPath(), key.Kid)
		}
	}
	active := ks.Keys[len(ks.Keys)-1]
	if active.Revoked {
		return fmt.Errorf("%w: %s: the active key %s is revoked; rotate needs a usable key file", ErrKeyringInconsistent, k.jwksPath(), active.Kid)
	}
	signer, err := NewSigner(priv)
	if err != nil {
		return fmt.Errorf("receipt: keyring %s: %s: %w", k.name, k.keyPath(), err)
	}
	if signer.KeyID() != active.Kid {
		return fmt.Errorf("%w: %s holds key %s, the JWKS's active key is %s", ErrKeyringInconsistent, k.keyPath(), signer.KeyID(), active.Kid)
	}
	signer.env = k.name
	k.signer, k.keys, k.held = signer, ks, &keyHolds{signer: signer}
	return nil
}

// newActive returns the bound signer and JWKS entry of a new active key.
func (k *Keyring) newActive(priv ed25519.PrivateKey, now time.Time) (*Signer, Key, error) {
	signer, err := NewSigner(priv)
	if err != nil {
		return nil, Key{}, fmt.Errorf("receipt: keyring %s: %w", k.name, err)
	}
	signer.env = k.name
	key, err := NewKey(signer.PublicKey(), now)
	if err != nil {
		return nil, Key{}, fmt.Errorf("receipt: keyring %s: %w", k.name, err)
	}
	return signer, key, nil
}

func newPrivateKey(rand io.Reader) (ed25519.PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return nil, fmt.Errorf("read random seed: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// readPrivateKey reads a PKCS#8 PEM Ed25519 key (RFC 8410 §7, what
// `openssl genpkey -algorithm ed25519` writes), refusing modes looser than
// 0600.
func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o", ErrKeyFileMode, path, st.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%s is not one PEM \"PRIVATE KEY\" block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not an Ed25519 key", path, key)
	}
	return priv, nil
}

func (k *Keyring) writePrivateKey(path string, priv ed25519.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	return durable.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func (k *Keyring) writeKeySet(ks KeySet) error {
	data, err := json.MarshalIndent(ks, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(k.jwksPath(), append(data, '\n'), 0o644)
}

func cloneKeySet(ks KeySet) KeySet {
	out := KeySet{Keys: make([]Key, len(ks.Keys))}
	for i, k := range ks.Keys {
		if k.Expires != nil {
			exp := *k.Expires
			k.Expires = &exp
		}
		out.Keys[i] = k
	}
	return out
}
