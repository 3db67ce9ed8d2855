package receipt

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testRand is a deterministic random source (ChaCha8) for reproducible keys.
func testRand(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

func openTestKeyring(t *testing.T, dir, name string, now time.Time, seed byte) *Keyring {
	t.Helper()
	k, err := OpenKeyring(dir, name, now, testRand(seed))
	if err != nil {
		t.Fatalf("OpenKeyring: %v", err)
	}
	return k
}

// issueWithKeyring logs receipts signed through the keyring and returns them.
func issueWithKeyring(t *testing.T, f *fixture, k *Keyring, cs ...Claims) [][]byte {
	t.Helper()
	return f.issueWith(t, k.Sign, cs...)
}

func jwksOf(t testing.TB, k *Keyring) []byte { return mustJSON(t, k.KeySet()) }

func TestOpenKeyringCreatesAndReopens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	k := openTestKeyring(t, dir, EnvProduction, fixedTime, 1)

	st, err := os.Stat(filepath.Join(dir, "production.key"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %04o, want 0700", st.Mode().Perm())
	}
	ks := k.KeySet()
	if len(ks.Keys) != 1 || ks.Keys[0].Kid != k.Signer().KeyID() || ks.Keys[0].NotBefore != fixedTime.Unix() || ks.Keys[0].Expires != nil {
		t.Fatalf("new key set %+v, signer %s", ks, k.Signer().KeyID())
	}
	// The key file is standard PKCS#8 PEM (RFC 8410), readable by other tools.
	block, _ := pem.Decode(readFile(t, filepath.Join(dir, "production.key")))
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil || !priv.(ed25519.PrivateKey).Public().(ed25519.PublicKey).Equal(k.Signer().PublicKey()) {
		t.Errorf("key file does not hold the signer's key: %v", err)
	}
	// The JWKS on disk is what KeySet serves.
	onDisk, err := ParseKeySet(readFile(t, filepath.Join(dir, "production.jwks.json")))
	if err != nil || onDisk.Keys[0] != ks.Keys[0] {
		t.Errorf("jwks file %+v, %v", onDisk, err)
	}

	again := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(time.Hour), 2)
	if again.Signer().KeyID() != k.Signer().KeyID() || len(again.KeySet().Keys) != 1 {
		t.Errorf("reopening made a new key")
	}
	sandbox := openTestKeyring(t, dir, EnvSandbox, fixedTime, 3)
	if sandbox.Signer().KeyID() == k.Signer().KeyID() {
		t.Errorf("sandbox and production share a key")
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenKeyringRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		want  error
	}{
		{"key file 0644", func(dir string) error { return os.Chmod(filepath.Join(dir, "production.key"), 0o644) }, ErrKeyFileMode},
		{"key file 0640", func(dir string) error { return os.Chmod(filepath.Join(dir, "production.key"), 0o640) }, ErrKeyFileMode},
		{"key file 0602", func(dir string) error { return os.Chmod(filepath.Join(dir, "production.key"), 0o602) }, ErrKeyFileMode},
		{"key file 0400 is fine", func(dir string) error { return os.Chmod(filepath.Join(dir, "production.key"), 0o400) }, nil},
		{"jwks missing", func(dir string) error { return os.Remove(filepath.Join(dir, "production.jwks.json")) }, ErrKeyringInconsistent},
		{"key missing", func(dir string) error { return os.Remove(filepath.Join(dir, "production.key")) }, ErrKeyringInconsistent},
		{"jwks of another keyring", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "production.jwks.json"), readFile(t, filepath.Join(dir, "sandbox.jwks.json")), 0o644)
		}, ErrKeyringInconsistent},
		{"jwks active key revoked", func(dir string) error {
			p := filepath.Join(dir, "production.jwks.json")
			ks, _ := ParseKeySet(readFile(t, p))
			ks.Keys[0].Revoked = true
			return os.WriteFile(p, mustJSON(t, ks), 0o644)
		}, ErrKeyringInconsistent},
		{"jwks active key has exp", func(dir string) error {
			p := filepath.Join(dir, "production.jwks.json")
			ks, _ := ParseKeySet(readFile(t, p))
			ks.Keys[0].Expires = ptr(fixedTime.Unix() + 100)
			return os.WriteFile(p, mustJSON(t, ks), 0o644)
		}, ErrKeyringInconsistent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			openTestKeyring(t, dir, EnvProduction, fixedTime, 1)
			openTestKeyring(t, dir, EnvSandbox, fixedTime, 2)
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			_, err := OpenKeyring(dir, EnvProduction, fixedTime, testRand(9))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("OpenKeyring: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := OpenKeyring(t.TempDir(), "staging", fixedTime, testRand(1)); err == nil {
		t.Errorf("keyring name staging accepted")
	}
}

// TestRotateKeepsOldReceiptsValid is the issue's "a receipt signed with a
// retired key still verifies", plus the converse: the retired key cannot
// sign receipts dated after its retirement.
func TestRotateKeepsOldReceiptsValid(t *testing.T) {
	dir := t.TempDir()
	k := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(-48*time.Hour), 1)
	oldSigner, oldKid := k.Signer(), k.Signer().KeyID()
	f := newFixture(t)

	before := sampleClaims(0)
	before.IssuedAt = fixedTime.Add(-time.Hour).Unix()
	rOld := issueWithKeyring(t, f, k, before)[0]

	if err := k.Rotate(fixedTime, testRand(2)); err != nil {
		t.Fatal(err)
	}
	if k.Signer().KeyID() == oldKid {
		t.Fatal("rotate kept the key")
	}
	ks := k.KeySet()
	if len(ks.Keys) != 2 || ks.Keys[0].Kid != oldKid || *ks.Keys[0].Expires != fixedTime.Unix() || ks.Keys[1].NotBefore != fixedTime.Unix() {
		t.Fatalf("key set after rotate: %+v", ks)
	}
	rNew := issueWithKeyring(t, f, k, sampleClaims(1))[0]

	// A signer held from before the rotation still signs with the old key,
	// but Verify refuses receipts it dates after the key's exp.
	late := sampleClaims(2)
	late.IssuedAt = fixedTime.Add(time.Minute).Unix()
	rLate := f.issueWith(t, oldSigner.Sign, late)[0]

	jwks := jwksOf(t, k)
	for name, tc := range map[string]struct {
		r    []byte
		step string
	}{"signed by the retired key": {rOld, ""}, "signed by the new key": {rNew, ""}, "retired key after exp": {rLate, StepKeyWindow}} {
		if _, err := Verify(tc.r, jwks, f.log.vkey); stepOf(err) != tc.step {
			t.Errorf("%s: %v, want step %q", name, err, tc.step)
		}
	}

	// The new key is what a restart loads; the retired private key is gone.
	again := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(time.Hour), 3)
	if again.Signer().KeyID() != k.Signer().KeyID() || len(again.KeySet().Keys) != 2 {
		t.Errorf("reopen after rotate: kid %s, %d keys", again.Signer().KeyID(), len(again.KeySet().Keys))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d files after rotate, want 2 (key, jwks)", len(entries))
	}
}

// TestRotateSameSecond: a receipt signed in the second of the rotation must
// not fall outside its key's window (nbf ≤ iat < exp).
func TestRotateSameSecond(t *testing.T) {
	k := openTestKeyring(t, t.TempDir(), EnvProduction, fixedTime.Add(-time.Hour), 1)
	f := newFixture(t)
	r := issueWithKeyring(t, f, k, sampleClaims(0))[0] // iat = fixedTime
	if err := k.Rotate(fixedTime, testRand(2)); err != nil {
		t.Fatal(err)
	}
	if exp := *k.KeySet().Keys[0].Expires; exp != fixedTime.Unix()+1 {
		t.Errorf("retired key exp %d, want %d (one past the last iat)", exp, fixedTime.Unix()+1)
	}
	r2 := issueWithKeyring(t, f, k, sampleClaims(1))[0] // same second, new key
	for i, x := range [][]byte{r, r2} {
		if _, err := Verify(x, jwksOf(t, k), f.log.vkey); err != nil {
			t.Errorf("receipt %d: %v", i, err)
		}
	}
	if err := k.Rotate(fixedTime.Add(-time.Hour), testRand(3)); err == nil {
		t.Errorf("rotate with a clock before the active key's nbf succeeded")
	}
}

// TestKeyringConcurrentSignAndRotate signs from several goroutines while
// rotating; every receipt must verify against the final key set. Run with
// -race.
func TestKeyringConcurrentSignAndRotate(t *testing.T) {
	k := openTestKeyring(t, t.TempDir(), EnvProduction, fixedTime, 1)
	var mu sync.Mutex
	var jwss []string
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				jws, err := k.Sign(sampleClaims(g*20 + i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				jwss = append(jwss, jws)
				mu.Unlock()
			}
		})
	}
	for i := range 5 {
		if err := k.Rotate(fixedTime, testRand(byte(10+i))); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	// Receipts were signed with log index 0; check the signature and window
	// through a one-leaf log per receipt.
	jwks := jwksOf(t, k)
	for _, jws := range jwss {
		l := newMemLog(t, testOrigin, 7)
		l.append(t, []byte(jws))
		r, err := Assemble(jws, 0, l.prove(t, 0), l.checkpoint(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(r, jwks, l.vkey); err != nil {
			t.Errorf("%v", err)
		}
	}
	if n := len(k.KeySet().Keys); n != 6 {
		t.Errorf("%d keys after 5 rotations", n)
	}
}

func TestRotateCrashRecovery(t *testing.T) {
	t.Run("crash before the JWKS was written", func(t *testing.T) {
		dir := t.TempDir()
		k := openTestKeyring(t, dir, EnvProduction, fixedTime, 1)
		kid := k.Signer().KeyID()
		if err := k.writePrivateKey(k.nextPath(), seedKey(42)); err != nil {
			t.Fatal(err)
		}
		again := openTestKeyring(t, dir, EnvProduction, fixedTime, 2)
		if again.Signer().KeyID() != kid {
			t.Errorf("an unpublished key became active")
		}
		if _, err := os.Stat(k.nextPath()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("unpublished key left behind: %v", err)
		}
	})
	t.Run("crash after the JWKS was written", func(t *testing.T) {
		dir := t.TempDir()
		k := openTestKeyring(t, dir, EnvProduction, fixedTime, 1)
		next := seedKey(42)
		if err := k.writePrivateKey(k.nextPath(), next); err != nil {
			t.Fatal(err)
		}
		ks := k.KeySet()
		ks.Keys[0].Expires = ptr(fixedTime.Unix() + 60)
		ks.Keys = append(ks.Keys, mustKey(t, next, fixedTime.Add(time.Minute)))
		if err := k.writeKeySet(ks); err != nil {
			t.Fatal(err)
		}
		again := openTestKeyring(t, dir, EnvProduction, fixedTime, 2)
		if again.Signer().KeyID() != ks.Keys[1].Kid {
			t.Errorf("published key %s not made active (have %s)", ks.Keys[1].Kid, again.Signer().KeyID())
		}
	})
	t.Run("crash during the first start", func(t *testing.T) {
		dir := t.TempDir()
		k := &Keyring{dir: dir, name: EnvProduction}
		if err := k.writePrivateKey(k.nextPath(), seedKey(42)); err != nil {
			t.Fatal(err)
		}
		again := openTestKeyring(t, dir, EnvProduction, fixedTime, 2)
		if again.Signer().KeyID() == mustKey(t, seedKey(42), fixedTime).Kid {
			t.Errorf("an unpublished first key was kept")
		}
	})
	t.Run("loose mode on a pending key", func(t *testing.T) {
		dir := t.TempDir()
		k := openTestKeyring(t, dir, EnvProduction, fixedTime, 1)
		if err := k.writePrivateKey(k.nextPath(), seedKey(42)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(k.nextPath(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenKeyring(dir, EnvProduction, fixedTime, testRand(2)); !errors.Is(err, ErrKeyFileMode) {
			t.Errorf("OpenKeyring: %v, want ErrKeyFileMode", err)
		}
	})
}

func TestRevoke(t *testing.T) {
	dir := t.TempDir()
	k := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(-time.Hour), 1)
	f := newFixture(t)
	r := issueWithKeyring(t, f, k, sampleClaims(0))[0]
	oldKid := k.Signer().KeyID()

	if err := k.Revoke(oldKid); !errors.Is(err, ErrRevokeActive) {
		t.Errorf("revoke active key: %v", err)
	}
	if err := k.Revoke("no-such-kid"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("revoke unknown kid: %v", err)
	}
	if err := k.Rotate(fixedTime.Add(time.Minute), testRand(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(r, jwksOf(t, k), f.log.vkey); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	if err := k.Revoke(oldKid); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(r, jwksOf(t, k), f.log.vkey); stepOf(err) != StepKeyRevoked {
		t.Errorf("after revocation: %v", err)
	}
	again := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(time.Hour), 3)
	if !again.KeySet().Keys[0].Revoked {
		t.Errorf("revocation not persisted")
	}
}

func TestKeyringEnvironments(t *testing.T) {
	dir := t.TempDir()
	prod := openTestKeyring(t, dir, EnvProduction, fixedTime.Add(-time.Hour), 1)
	sandbox := openTestKeyring(t, dir, EnvSandbox, fixedTime.Add(-time.Hour), 2)

	if _, err := prod.Sign(sandboxClaims(0)); !errors.Is(err, ErrWrongEnvironment) {
		t.Errorf("production key signed sandbox claims: %v", err)
	}
	if _, err := sandbox.Sign(sampleClaims(0)); !errors.Is(err, ErrWrongEnvironment) {
		t.Errorf("sandbox key signed production claims: %v", err)
	}
	if _, err := prod.Signer().Sign(sandboxClaims(0)); !errors.Is(err, ErrWrongEnvironment) {
		t.Errorf("production Signer() signed sandbox claims: %v", err)
	}

	f := newFixture(t)
	r := issueWithKeyring(t, f, sandbox, sandboxClaims(0))[0]
	if _, err := Verify(r, jwksOf(t, prod), f.log.vkey); stepOf(err) != StepKid {
		t.Errorf("sandbox receipt against the production JWKS: %v", err)
	}
	c, err := Verify(r, jwksOf(t, sandbox), f.log.vkey)
	if err != nil || c.Environment != EnvSandbox || c.Watermark != SandboxWatermark {
		t.Errorf("sandbox receipt against the sandbox JWKS: %+v, %v", c, err)
	}

	early := sampleClaims(1)
	early.IssuedAt = fixedTime.Add(-2 * time.Hour).Unix()
	if _, err := prod.Sign(early); !errors.Is(err, ErrOutsideKeyWindow) {
		t.Errorf("signing before the key's nbf: %v", err)
	}
}
