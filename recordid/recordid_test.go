package recordid

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/internal/faultfs"
)

// TestLoadOrCreate: the first call writes a 32-byte hex key, mode 0600,
// from rnd; the next reads it back (the same ids, the same fingerprint)
// without reading rnd; a key file that is not 32 bytes of hex, or that
// others may read, is refused.
func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreate(dir, bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, KeyFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if got := strings.TrimSpace(string(raw)); got != strings.Repeat("07", 32) {
		t.Fatalf("key file holds %q", got)
	}
	k2, err := LoadOrCreate(dir, bytes.NewReader(nil)) // an empty rnd: it must not be read
	if err != nil {
		t.Fatal(err)
	}
	if k1.ID("eip155:8453", "0xab") != k2.ID("eip155:8453", "0xab") || k1.Fingerprint() != k2.Fingerprint() {
		t.Fatal("the key read back makes other ids")
	}
	sum := sha256.Sum256(bytes.Repeat([]byte{7}, 32))
	if want := "sha256:" + hex.EncodeToString(sum[:]); k1.Fingerprint() != want {
		t.Fatalf("fingerprint %s, want %s", k1.Fingerprint(), want)
	}
	for name, content := range map[string]string{"short": strings.Repeat("07", 31), "not hex": strings.Repeat("zz", 32)} {
		bad := t.TempDir()
		if err := os.WriteFile(filepath.Join(bad, KeyFile), []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreate(bad, nil); err == nil {
			t.Errorf("a %s key file was accepted", name)
		}
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(dir, nil); err == nil || !strings.Contains(err.Error(), "looser than 0600") {
		t.Fatalf("a key file others may read: %v", err)
	}
	if _, err := New(make([]byte, 16)); err == nil {
		t.Fatal("New took a 16-byte key")
	}
}

// TestIDIsTheKeyedHMAC: ID is "x402-" and the first 16 bytes, in hex, of
// HMAC-SHA256 under the key of network ":" lower-case tx hash, computed
// here with crypto/hmac, from several goroutines at once on one Keyed
// (run with -race: they clone one keyed HMAC).
func TestIDIsTheKeyedHMAC(t *testing.T) {
	key := bytes.Repeat([]byte{0x5a}, 32)
	k, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d", g, i))
				tx := "0x" + hex.EncodeToString(sum[:])
				if i%2 == 1 {
					tx = "0x" + strings.ToUpper(tx[2:])
				}
				network := []string{"eip155:8453", "eip155:1"}[i%2]
				m := hmac.New(sha256.New, key)
				m.Write([]byte(network + ":" + strings.ToLower(tx)))
				if got, want := k.ID(network, tx), "x402-"+hex.EncodeToString(m.Sum(nil)[:16]); got != want {
					t.Errorf("ID(%s, %s) = %s, want %s", network, tx, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkID(b *testing.B) {
	k, err := New(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = k.ID("eip155:8453", "0x9f2c5e3b1a7d4f6e8c0b2a4d6f8e0c2b4a6d8f0e2c4b6a8d0f2e4c6b8a0d2f4e")
	}
}

// TestLoadOrCreateRace: processes (here goroutines) that create the key at
// once all end up under one key, the first linked, not each under its own.
func TestLoadOrCreateRace(t *testing.T) {
	dir := t.TempDir()
	fps := make([]string, 8)
	var wg sync.WaitGroup
	for i := range fps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreate(dir, bytes.NewReader(bytes.Repeat([]byte{byte(i + 1)}, 32)))
			if err != nil {
				t.Error(err)
				return
			}
			fps[i] = k.Fingerprint()
		}()
	}
	wg.Wait()
	for i, fp := range fps {
		if fp != fps[0] {
			t.Fatalf("creator %d is under key %s, creator 0 under %s", i, fp, fps[0])
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestLoadOrCreateSurvivesPowerCut: a key just made is on the disk after a
// power cut that keeps nothing unsynced (internal/faultfs): the same key,
// not an empty file that would stop the engine. (A lost name, which would
// make a new key and new ids for payments already recorded, is what the
// directory's sync prevents; faultfs does not model directories.)
func TestLoadOrCreateSurvivesPowerCut(t *testing.T) {
	f := faultfs.Mount(t)
	k, err := LoadOrCreate(f.Dir, bytes.NewReader(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	f.PowerCut(t, 1, 0)
	after, err := LoadOrCreate(f.Disk, bytes.NewReader(nil)) // nothing to draw: it must load
	if err != nil {
		t.Fatalf("the key after the power cut: %v", err)
	}
	if after.Fingerprint() != k.Fingerprint() {
		t.Fatalf("key %s after the power cut, %s before", after.Fingerprint(), k.Fingerprint())
	}
}
