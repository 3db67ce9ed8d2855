package durable_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/durable"
	"github.com/fiscal402/fiscal402/internal/faultfs"
)

// TestPowerCut: on a FUSE file system that models a disk's volatile cache
// (internal/faultfs), a power cut that keeps nothing unsynced right after
// WriteFile and Create returned finds their files whole, with their modes,
// and no temporary file left; a cut at each of their writes finds the old
// content or none, never an empty or torn file.
func TestPowerCut(t *testing.T) {
	old, data := bytes.Repeat([]byte("o"), 5000), bytes.Repeat([]byte("n"), 9000)
	t.Run("after", func(t *testing.T) {
		f := faultfs.Mount(t)
		replaced, created := filepath.Join(f.Dir, "replaced"), filepath.Join(f.Dir, "created")
		if err := durable.WriteFile(replaced, old, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := durable.WriteFile(replaced, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := durable.Create(created, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f.PowerCut(t, 1, 0)
		for name, mode := range map[string]os.FileMode{"replaced": 0o644, "created": 0o600} {
			p := filepath.Join(f.Disk, name)
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s after the cut: %d bytes, %v; want the %d written", name, len(got), err, len(data))
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
				t.Fatalf("%s after the cut: mode %v, %v; want %v", name, fi.Mode().Perm(), err, mode)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(f.Disk, ".*")); len(left) != 0 {
			t.Fatalf("temporary files on the disk: %v", left)
		}
	})
	// One write each through the mount (a 9,000-byte write(2) is one
	// FUSE write): the first is WriteFile's, the second Create's.
	for _, cutAt := range []string{"WriteFile", "Create"} {
		t.Run("during "+cutAt, func(t *testing.T) {
			f := faultfs.Mount(t)
			replaced, created := filepath.Join(f.Dir, "replaced"), filepath.Join(f.Dir, "created")
			if err := durable.WriteFile(replaced, old, 0o600); err != nil {
				t.Fatal(err)
			}
			want := old
			if cutAt == "WriteFile" {
				f.PowerCutAtWrite(t, 1, 1, 0)
				if err := durable.WriteFile(replaced, data, 0o600); err == nil {
					t.Fatal("WriteFile returned nil although the power was cut in its write")
				}
			} else {
				f.PowerCutAtWrite(t, 2, 1, 0)
				if err := durable.WriteFile(replaced, data, 0o600); err != nil {
					t.Fatal(err)
				}
				want = data
			}
			if err := durable.Create(created, data, 0o600); err == nil {
				t.Fatal("Create returned nil although the power was cut")
			}
			if got, err := os.ReadFile(filepath.Join(f.Disk, "replaced")); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("replaced after the cut: %d bytes, %v; want %d", len(got), err, len(want))
			}
			if _, err := os.Stat(filepath.Join(f.Disk, "created")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("created after a cut in its write: %v; want no file", err)
			}
		})
	}
}

// TestCreateOnce: creators racing for one name: one wins, the others get
// os.ErrExist, the file holds the winner's bytes whole, no temporary file
// is left.
func TestCreateOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = durable.Create(path, bytes.Repeat([]byte{byte('a' + i)}, 100), 0o600)
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("creators %d and %d both created the file", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, os.ErrExist):
			t.Fatalf("creator %d: %v, want os.ErrExist", i, err)
		}
	}
	got, err := os.ReadFile(path)
	if won < 0 || err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + won)}, 100)) {
		t.Fatalf("the file after the race: %q, %v (winner %d)", got, err, won)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestStaleTemporaryFiles: what crashes left beside a file is removed by
// the next WriteFile or Create of it, even when the file exists (Create
// then writes nothing), and by Tidy, which a caller runs after loading
// the file: a second name of the file itself (a crash between the link
// and the removal: for a key, a second name of a secret) at any age,
// another temporary file once a minute old; a young one, perhaps another
// process's in flight, is kept.
func TestStaleTemporaryFiles(t *testing.T) {
	for _, how := range []string{"Create", "ReadOrCreate", "Tidy"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "key")
			if err := os.WriteFile(path, []byte("the key"), 0o600); err != nil {
				t.Fatal(err)
			}
			second, old, young := filepath.Join(dir, ".key.tmp-1"), filepath.Join(dir, ".key.tmp-2"), filepath.Join(dir, ".key.tmp-3")
			if err := os.Link(path, second); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{old, young} {
				if err := os.WriteFile(name, []byte("secret"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			then := time.Now().Add(-2 * time.Minute)
			if err := os.Chtimes(old, then, then); err != nil {
				t.Fatal(err)
			}
			if how == "Create" {
				if err := durable.Create(path, []byte("new"), 0o600); !errors.Is(err, os.ErrExist) {
					t.Fatalf("Create over an existing file: %v, want os.ErrExist", err)
				}
			} else if how == "ReadOrCreate" {
				if got, err := durable.ReadOrCreate(path, 0o600, nil); err != nil || string(got) != "the key" {
					t.Fatalf("ReadOrCreate of an existing file: %q, %v", got, err)
				}
			} else {
				durable.Tidy(path)
			}
			for name, want := range map[string]bool{second: false, old: false, young: true} {
				if _, err := os.Stat(name); (err == nil) != want {
					t.Errorf("%s: %v; want kept %v", filepath.Base(name), err, want)
				}
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != "the key" {
				t.Fatalf("the file itself: %q, %v", got, err)
			}
		})
	}
}

// TestReadOrCreate: a missing file without fresh is os.ErrNotExist and
// nothing is written; with fresh it is created once, mode perm, and read
// back after that without calling fresh again.
func TestReadOrCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if _, err := durable.ReadOrCreate(path, 0o600, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file without fresh: %v, want os.ErrNotExist", err)
	}
	calls := 0
	fresh := func() ([]byte, error) { calls++; return []byte("made"), nil }
	for i := 0; i < 2; i++ {
		if got, err := durable.ReadOrCreate(path, 0o640, fresh); err != nil || string(got) != "made" {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 || calls != 1 {
		t.Fatalf("mode %v (%v), fresh called %d times; want 0640, once", fi.Mode().Perm(), err, calls)
	}
}
