//go:build linux

package faultfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestPowerCut: a cut that keeps nothing leaves on the disk each file as
// its last sync left it (an overwritten block back, a grown file back to
// its synced size); one that keeps everything leaves what was written;
// after a cut, writes, syncs and truncations through the mount answer EIO
// and reads still see what was written.
func TestPowerCut(t *testing.T) {
	synced := bytes.Repeat([]byte("s"), 3*4096+100) // a last partial block
	for _, tc := range []struct {
		keep int
		want func(written []byte) []byte
	}{
		{0, func([]byte) []byte { return synced }},
		{1000, func(written []byte) []byte { return written }},
	} {
		t.Run(fmt.Sprintf("keep=%d", tc.keep), func(t *testing.T) {
			f := faultfs.Mount(t)
			file, err := os.OpenFile(filepath.Join(f.Dir, "data"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			written := slices.Clone(synced)
			writeAt := func(p []byte, off int64) {
				t.Helper()
				if _, err := file.WriteAt(p, off); err != nil {
					t.Fatal(err)
				}
				if end := off + int64(len(p)); end > int64(len(written)) {
					written = append(written, make([]byte, end-int64(len(written)))...)
				}
				copy(written[off:], p)
			}
			writeAt(synced, 0)
			if err := syscall.Fdatasync(int(file.Fd())); err != nil {
				t.Fatal(err)
			}
			writeAt([]byte("over block one"), 4096+10)
			writeAt(bytes.Repeat([]byte("g"), 2*4096), 3*4096+50) // the partial block and two more
			f.PowerCut(t, 1, tc.keep)
			if _, err := file.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EIO) {
				t.Errorf("a write after the cut: %v, want EIO", err)
			}
			if err := syscall.Fdatasync(int(file.Fd())); !errors.Is(err, syscall.EIO) {
				t.Errorf("a sync after the cut: %v, want EIO", err)
			}
			if err := file.Truncate(0); !errors.Is(err, syscall.EIO) {
				t.Errorf("a truncation after the cut: %v, want EIO", err)
			}
			if b := make([]byte, 4); func() error { _, err := file.ReadAt(b, 4096+10); return err }() != nil || string(b) != "over" {
				t.Errorf("a read after the cut: %q, want what was written (the page cache)", b)
			}
			got, err := os.ReadFile(filepath.Join(f.Disk, "data"))
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(written); !bytes.Equal(got, want) {
				t.Fatalf("the disk after the cut: %d bytes, want %d (equal prefix %d)", len(got), len(want), commonPrefix(got, want))
			}
			s := f.Stats(t)
			if !s.Cut || s.Kept+s.Reverted != 4 || (tc.keep == 0) != (s.Kept == 0) {
				t.Fatalf("stats %+v: want a cut over the 4 blocks written since the sync", s)
			}
		})
	}
}

// TestPowerCutAtSync: an armed cut fires at the sync its rule matches,
// which answers EIO; a block kept or put back is whole, so that the disk
// holds, block by block, either the last sync's bytes or the new ones.
// The draw is the seed's: the same seed cuts the same blocks.
func TestPowerCutAtSync(t *testing.T) {
	disk := func(seed uint64) ([]byte, faultfs.Stats) {
		f := faultfs.Mount(t)
		file, err := os.OpenFile(filepath.Join(f.Dir, "data"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		if _, err := file.WriteAt(bytes.Repeat([]byte("o"), 16*4096), 0); err != nil {
			t.Fatal(err)
		}
		if err := file.Sync(); err != nil {
			t.Fatal(err)
		}
		f.PowerCutAtSyncAfterWriteTo(t, "data", 0, 4096, seed, 500)
		if _, err := file.WriteAt(bytes.Repeat([]byte("n"), 15*4096), 4096); err != nil {
			t.Fatal(err)
		}
		if err := file.Sync(); err != nil { // no write to block 0: no cut
			t.Fatal(err)
		}
		if _, err := file.WriteAt(bytes.Repeat([]byte("N"), 16*4096), 0); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Fdatasync(int(file.Fd())); !errors.Is(err, syscall.EIO) {
			t.Fatalf("the sync of the cut: %v, want EIO", err)
		}
		got, err := os.ReadFile(filepath.Join(f.Disk, "data"))
		if err != nil {
			t.Fatal(err)
		}
		return got, f.Stats(t)
	}
	got, s := disk(7)
	if len(got) != 16*4096 || s.Kept+s.Reverted != 16 || s.Kept == 0 || s.Reverted == 0 {
		t.Fatalf("%d bytes, stats %+v: want 16 blocks, some kept and some put back", len(got), s)
	}
	reverted := 0
	for b := 0; b < 16; b++ {
		block := got[b*4096 : (b+1)*4096]
		switch {
		case b == 0 && bytes.Equal(block, bytes.Repeat([]byte("o"), 4096)),
			b > 0 && bytes.Equal(block, bytes.Repeat([]byte("n"), 4096)):
			reverted++
		case !bytes.Equal(block, bytes.Repeat([]byte("N"), 4096)):
			t.Fatalf("block %d is neither its synced bytes nor its new ones", b)
		}
	}
	if reverted != s.Reverted {
		t.Fatalf("%d blocks put back on the disk, the stats say %d", reverted, s.Reverted)
	}
	if again, _ := disk(7); !bytes.Equal(again, got) {
		t.Fatal("the same seed cut other blocks")
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestPowerCutFollowsRenames: the model follows a file, not a name: a file
// written, synced and renamed keeps its bytes on the disk, one written and
// renamed without a sync loses them (it stays as created: empty).
func TestPowerCutFollowsRenames(t *testing.T) {
	f := faultfs.Mount(t)
	write := func(name string, sync bool) {
		t.Helper()
		file, err := os.OpenFile(filepath.Join(f.Dir, name+".tmp"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		if _, err := file.WriteAt([]byte(name), 0); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := file.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(filepath.Join(f.Dir, name+".tmp"), filepath.Join(f.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("synced", true)
	write("unsynced", false)
	f.PowerCut(t, 1, 0)
	for name, want := range map[string]string{"synced": "synced", "unsynced": ""} {
		got, err := os.ReadFile(filepath.Join(f.Disk, name))
		if err != nil || string(got) != want {
			t.Errorf("%s on the disk after the cut: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestPowerCutNewFileOwnsItsInode: files synced, written again and
// removed leave nothing to the files created after them (which may get
// their inode numbers): a new file written but never synced is, after a
// cut that keeps nothing, as it was created: empty.
func TestPowerCutNewFileOwnsItsInode(t *testing.T) {
	f := faultfs.Mount(t)
	for i := 0; i < 20; i++ {
		file, err := os.OpenFile(filepath.Join(f.Dir, fmt.Sprintf("gone-%d", i)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := file.Write(bytes.Repeat([]byte("old"), 4000)); err != nil {
			t.Fatal(err)
		}
		if err := file.Sync(); err != nil {
			t.Fatal(err)
		}
		if _, err := file.WriteAt([]byte("again"), 0); err != nil {
			t.Fatal(err)
		}
		file.Close()
		if err := os.Remove(file.Name()); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		if err := os.WriteFile(filepath.Join(f.Dir, fmt.Sprintf("new-%d", i)), bytes.Repeat([]byte("new"), 2000), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.PowerCut(t, 1, 0)
	for i := 0; i < 20; i++ {
		got, err := os.ReadFile(filepath.Join(f.Disk, fmt.Sprintf("new-%d", i)))
		if err != nil || len(got) != 0 {
			t.Errorf("new-%d on the disk: %d bytes (%.12q), %v; want it empty, as created", i, len(got), got, err)
		}
	}
}

// TestPowerCutEdges: two names of one file are one file on the disk; a
// truncation is durable at once (a file grown by ftruncate keeps its size,
// one rewritten with O_TRUNC and never synced comes back empty); a cut at
// the k-th sync can keep exactly one range (the rest put back); after the
// cut every change of data or names answers EIO.
func TestPowerCutEdges(t *testing.T) {
	f := faultfs.Mount(t)
	p := func(name string) string { return filepath.Join(f.Dir, name) }
	open := func(name string) *os.File {
		t.Helper()
		file, err := os.OpenFile(p(name), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
		return file
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two names, 8 unsynced blocks.
	linked := open("linked")
	_, err := linked.Write(bytes.Repeat([]byte("L"), 8*4096))
	must(err)
	must(os.Link(p("linked"), p("other-name")))
	// Grown by ftruncate after a sync.
	grown := open("grown")
	_, err = grown.Write(bytes.Repeat([]byte("g"), 4096))
	must(err)
	must(grown.Sync())
	must(grown.Truncate(8 * 4096))
	// Synced, then rewritten with O_TRUNC and never synced.
	must(os.WriteFile(p("rewritten"), bytes.Repeat([]byte("A"), 3*4096), 0o600))
	rw := open("rewritten")
	must(rw.Sync())
	must(os.WriteFile(p("rewritten"), []byte("BBBB"), 0o600))
	// Four unsynced blocks; the cut at the next sync keeps block 0 only.
	ranged := open("ranged")
	_, err = ranged.Write(bytes.Repeat([]byte("o"), 4*4096))
	must(err)
	must(ranged.Sync())
	_, err = ranged.WriteAt(bytes.Repeat([]byte("n"), 4*4096), 0)
	must(err)
	f.PowerCutAtSyncKeepingOnly(t, 1, "ranged", 0, 4096)
	if err := ranged.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("the sync of the cut: %v, want EIO", err)
	}

	disk := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(f.Disk, name))
		must(err)
		return b
	}
	if a, b := disk("linked"), disk("other-name"); !bytes.Equal(a, b) {
		t.Error("two names of one file differ on the disk")
	}
	if n := len(disk("grown")); n != 8*4096 {
		t.Errorf("a file grown by ftruncate after its sync: %d bytes on the disk, want %d", n, 8*4096)
	}
	if b := disk("rewritten"); len(b) != 0 {
		t.Errorf("a file truncated by O_TRUNC and written without a sync: %q on the disk, want it empty", b)
	}
	want := append(bytes.Repeat([]byte("n"), 4096), bytes.Repeat([]byte("o"), 3*4096)...)
	if !bytes.Equal(disk("ranged"), want) {
		t.Error("the cut that keeps block 0 only: not block 0 new and the others old")
	}
	s := f.Stats(t)
	if s.Kept != 1 {
		t.Errorf("stats %+v: want exactly one block kept", s)
	}

	for what, err := range map[string]error{
		"truncate(path)":    os.Truncate(p("grown"), 10),
		"open with O_TRUNC": func() error { _, err := os.OpenFile(p("grown"), os.O_WRONLY|os.O_TRUNC, 0); return err }(),
		"rename":            os.Rename(p("grown"), p("renamed")),
		"link":              os.Link(p("grown"), p("linked-again")),
		"unlink":            os.Remove(p("grown")),
		"mkdir":             os.Mkdir(p("dir"), 0o700),
		"create":            func() error { _, err := os.Create(p("new")); return err }(),
		"a directory's fsync": func() error {
			d, err := os.Open(f.Dir)
			if err != nil {
				return err
			}
			defer d.Close()
			return d.Sync()
		}(),
	} {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s after the cut: %v, want EIO", what, err)
		}
	}
}
