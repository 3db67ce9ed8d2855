package ledger

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestGenerateLogKey(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	skey, vkey, err := GenerateLogKey(testOrigin, bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	skey2, vkey2, _ := GenerateLogKey(testOrigin, bytes.NewReader(seed))
	if skey != skey2 || vkey != vkey2 {
		t.Error("the same randomness gave different keys")
	}
	if !strings.HasPrefix(skey, "PRIVATE+KEY+"+testOrigin+"+") || !strings.HasPrefix(vkey, testOrigin+"+") {
		t.Errorf("keys %q %q are not note keys named after the origin", skey, vkey)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := note.Sign(&note.Note{Text: "hello\n"}, s)
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Errorf("vkey does not verify skey's signature: %v", err)
	}
	if _, _, err := GenerateLogKey("bad origin", bytes.NewReader(seed)); !errors.Is(err, ErrInvalid) {
		t.Errorf("origin with a space: %v", err)
	}
	if _, _, err := GenerateLogKey(testOrigin, bytes.NewReader(seed[:10])); err == nil {
		t.Error("short randomness accepted")
	}
	if _, _, err := GenerateLogKey(testOrigin, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil randomness: %v", err)
	}
}

func TestLoadOrCreateLogKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.key")
	s1, vkey1, err := LoadOrCreateLogKey(path, testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "PRIVATE+KEY+"+testOrigin+"+") || !strings.HasSuffix(string(data), "\n") {
		t.Errorf("key file holds %q", data)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".logkey-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	s2, vkey2, err := LoadOrCreateLogKey(path, testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	if vkey1 != vkey2 || s1.KeyHash() != s2.KeyHash() {
		t.Error("second load gave another key")
	}
	// The derived vkey is the signer's public key: it verifies its notes
	// and is what a ledger opened with the signer accepts.
	v, err := note.NewVerifier(vkey1)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := note.Sign(&note.Note{Text: "x\n"}, s2)
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Errorf("derived vkey does not verify: %v", err)
	}
	l, err := Open(filepath.Join(dir, "ledger.db"), Options{Origin: testOrigin, Signer: s1, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()

	t.Run("other origin", func(t *testing.T) {
		if _, _, err := LoadOrCreateLogKey(path, "other.example/log"); !errors.Is(err, ErrOriginMismatch) {
			t.Errorf("err = %v, want ErrOriginMismatch", err)
		}
	})
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o700 | 0o020} {
		t.Run("mode "+mode.String(), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "k")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
			if _, _, err := LoadOrCreateLogKey(p, testOrigin); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "chmod 600") {
				t.Errorf("err = %v, want a refusal naming chmod 600", err)
			}
		})
	}
	for name, content := range map[string]string{
		"garbage":           "not a key\n",
		"a verifier key":    vkey1 + "\n",
		"empty":             "",
		"hash of other key": strings.Replace(string(data), "+"+strings.Split(vkey1, "+")[1]+"+", "+00000000+", 1),
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "k")
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := LoadOrCreateLogKey(p, testOrigin); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "k")
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadOrCreateLogKey(p, testOrigin); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, _, err := LoadOrCreateLogKey(filepath.Join(t.TempDir(), "no", "k"), testOrigin); err == nil {
			t.Error("created a key in a missing directory")
		}
	})
}

// TestLoadOrCreateLogKeyRace: concurrent first uses agree on one key.
func TestLoadOrCreateLogKeyRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.key")
	const n = 16
	vkeys := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, vkey, err := LoadOrCreateLogKey(path, testOrigin)
			if err != nil {
				t.Error(err)
			}
			vkeys[i] = vkey
		})
	}
	wg.Wait()
	for _, vk := range vkeys {
		if vk != vkeys[0] {
			t.Fatalf("racing creators got different keys: %q vs %q", vk, vkeys[0])
		}
	}
}

// TestParseSignerKeyPlusInBase64: the key data is base64, which may contain
// '+', the note key separator; the derived vkey must still be right.
func TestParseSignerKeyPlusInBase64(t *testing.T) {
	prefix := len("PRIVATE+KEY+" + testOrigin + "+01234567+")
	for i := range 256 {
		skey, vkey, err := GenerateLogKey(testOrigin, bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 32)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(skey[prefix:], "+") {
			continue
		}
		_, got, err := parseSignerKey(skey)
		if err != nil || got != vkey {
			t.Fatalf("parseSignerKey(%q) = %q, %v; want %q", skey, got, err, vkey)
		}
		return
	}
	t.Fatal("no seed gave a '+' in the key data")
}
