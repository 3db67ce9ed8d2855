//go:build linux

package faultfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fiscal402/fiscal402/internal/faultfs"
)

// TestFailSync: through the mount, a write and an fdatasync reach the
// backing file system; an armed rule fails the first matching sync with
// EIO (the program's own fdatasync(2) returns it), once; the written bytes
// stay readable, through mmap too.
func TestFailSync(t *testing.T) {
	f := faultfs.Mount(t)
	path := filepath.Join(f.Dir, "data")
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.WriteAt([]byte("first"), 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(file.Fd())); err != nil {
		t.Fatalf("fdatasync without a fault: %v", err)
	}
	// Only a sync after a write at offset 4096 fails.
	f.FailSyncAfterWriteTo(t, "data", 4096, 1)
	if _, err := file.WriteAt([]byte("second"), 100); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(file.Fd())); err != nil {
		t.Fatalf("fdatasync after a write the rule does not match: %v", err)
	}
	if armed, _, _ := f.Stat(t); !armed {
		t.Fatal("the fault fired on a sync its rule does not match")
	}
	if _, err := file.WriteAt([]byte("third"), 4096); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(file.Fd())); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fdatasync after the matching write: %v, want EIO", err)
	}
	if err := file.Sync(); err != nil {
		t.Fatalf("the next sync (the fault is one-shot): %v", err)
	}
	if armed, seen, failed := f.Stat(t); armed || seen != 4 || failed != 1 {
		t.Fatalf("armed %v, syncs seen %d, failed %d; want false, 4 and 1", armed, seen, failed)
	}
	m, err := syscall.Mmap(int(file.Fd()), 0, 8192, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatalf("mmap through the mount: %v", err)
	}
	defer syscall.Munmap(m)
	if string(m[100:106]) != "second" || string(m[4096:4101]) != "third" {
		t.Fatalf("mapped bytes %q, %q", m[100:106], m[4096:4101])
	}
}

// TestFailSyncNamedFileOnly: a rule is armed on one file, by its path from
// the mount's root (here in a subdirectory): another file's sync after the
// same writes succeeds. FailSyncAfterWriteOutside fires on writes that all
// miss its range, not on one that meets it, nor on a sync after no write.
func TestFailSyncNamedFileOnly(t *testing.T) {
	f := faultfs.Mount(t)
	if err := os.Mkdir(filepath.Join(f.Dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	open := func(name string) *os.File {
		file, err := os.OpenFile(filepath.Join(f.Dir, name), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
		return file
	}
	other, target := open("other"), open("sub/target")
	write := func(file *os.File, off int64) {
		if _, err := file.WriteAt([]byte("x"), off); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(file *os.File) error { return syscall.Fdatasync(int(file.Fd())) }

	f.FailSyncAfterWriteOutside(t, "sub/target", 0, 4096)
	write(other, 8192)
	if err := sync(other); err != nil {
		t.Fatalf("another file's sync: %v", err)
	}
	write(target, 0) // meets the range: no fault
	if err := sync(target); err != nil {
		t.Fatalf("sync after a write inside the range: %v", err)
	}
	if err := sync(target); err != nil {
		t.Fatalf("sync after no write: %v", err)
	}
	write(target, 8192)
	if err := sync(target); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync after a write outside the range: %v, want EIO", err)
	}
	if armed, seen, failed := f.Stat(t); armed || seen != 4 || failed != 1 {
		t.Fatalf("armed %v, syncs seen %d, failed %d; want false, 4 and 1", armed, seen, failed)
	}
}
