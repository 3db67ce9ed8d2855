package faultfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// The environment of Mount's child: the test binary started again, which
// serves the mount from init instead of running its tests.
const (
	envBacking = "FISCAL402_FAULTFS_BACKING"
	envDisk    = "FISCAL402_FAULTFS_DISK"
	envMount   = "FISCAL402_FAULTFS_MOUNT"
)

func init() {
	backing, ok := os.LookupEnv(envBacking)
	if !ok {
		return
	}
	// A signal to the test's process group (a CI job stopped) must not end
	// the server before its parent's files on the mount are closed: the
	// child ends when its stdin does. Nor may an answer to a parent that
	// died (SIGPIPE, which would end it without unmounting).
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	if err := Serve(backing, os.Getenv(envDisk), os.Getenv(envMount), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// FS is a mount served by a child process. Dir is its mount point; Disk
// the directory where a power cut writes what the disk holds after it
// (empty until then).
type FS struct {
	Dir  string
	Disk string

	mu     sync.Mutex
	in     io.Writer
	out    *bufio.Reader
	stderr *syncBuilder // the child's
}

// syncBuilder is a strings.Builder the child's stderr copier and the test
// can share.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Mount mounts a loopback file system over a new temporary backing
// directory at a new temporary mount point, served by a child process (the
// test binary itself, started again with the environment init reads): a
// test process that dies with a file of the mount open would otherwise
// wait forever for its own FUSE server, the kernel flushing the file on
// its exit. The mount ends with the test (or, however the test process
// ends, with the child's stdin). Mount skips the test (fails it under
// FISCAL402_STRICT=1) when FUSE cannot be mounted here: not Linux, not
// root, no /dev/fuse, or a mount(2) refused.
func Mount(t testing.TB) *FS {
	t.Helper()
	if runtime.GOOS != "linux" {
		testtool.Missing(t, "FUSE (Linux)", "faultfs runs on Linux only")
	}
	if os.Geteuid() != 0 {
		testtool.Missing(t, "FUSE (root)", "mounting a FUSE file system without fusermount needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testtool.Missing(t, "FUSE (/dev/fuse)", err.Error())
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	backing, disk, dir := t.TempDir(), t.TempDir(), t.TempDir()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envBacking+"="+backing, envDisk+"="+disk, envMount+"="+dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuilder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// end closes the child's stdin and waits for it (called once: on a
	// failed mount, or by the cleanup).
	end := func() error {
		in.Close()
		err := cmd.Wait()
		// Gone with its server, the mount could stay in the tree (a
		// child killed): take it out.
		detach(dir)
		return err
	}
	f := &FS{Dir: dir, Disk: disk, in: in, out: bufio.NewReader(outPipe), stderr: stderr}
	if line, err := f.out.ReadString('\n'); err != nil || line != "ready\n" {
		// mount(2) refused (no CAP_SYS_ADMIN, say): the child has exited.
		_ = end()
		testtool.Missing(t, "FUSE", fmt.Sprintf("the mount failed: %q %v: %s", line, err, stderr.String()))
	}
	// Registered before the callers' own cleanups, so it runs after them
	// (they close their files first); t.TempDir's removal runs after it.
	t.Cleanup(func() {
		// A cut that could not write Disk fails the test, whether or not
		// it looked at Stats.
		if line, err := f.ask("stat"); err == nil && strings.HasSuffix(line, "cuterr 1") {
			t.Errorf("faultfs: the power cut did not write the disk: %s", stderr.String())
		}
		if err := end(); err != nil {
			t.Errorf("faultfs server: %v: %s", err, stderr.String())
		}
	})
	return f
}

// command sends one command and returns the answer.
func (f *FS) command(t testing.TB, format string, args ...any) string {
	t.Helper()
	line, err := f.ask(format, args...)
	if err != nil {
		t.Fatalf("faultfs: %v", err)
	}
	if strings.HasPrefix(line, "error") {
		t.Fatalf("faultfs: %s", line)
	}
	return line
}

// ask sends one command and returns the answer line.
func (f *FS) ask(format string, args ...any) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := fmt.Fprintf(f.in, format+"\n", args...); err != nil {
		return "", err
	}
	line, err := f.out.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

// FailSyncAfterWriteTo arms a one-shot fault: the first later sync (fsync
// or fdatasync) of the file at name (its path from Dir, without spaces)
// that was written in [off, off+n) since its last sync answers EIO.
func (f *FS) FailSyncAfterWriteTo(t testing.TB, name string, off, n int64) {
	f.command(t, "fail touches %s %d %d", name, off, n)
}

// FailSyncAfterWriteOutside arms a one-shot fault: the first later sync of
// the file at name that was written since its last sync, but nowhere in
// [off, off+n), answers EIO.
func (f *FS) FailSyncAfterWriteOutside(t testing.TB, name string, off, n int64) {
	f.command(t, "fail avoids %s %d %d", name, off, n)
}

// PowerCutAtSyncAfterWriteTo arms a one-shot power cut at the sync that
// FailSyncAfterWriteTo would fail: before answering it EIO, the file
// system writes to Disk every file of the mount as a disk would hold it
// once the power came back: each block written since its file's last sync
// kept with probability keep/1000 (seed seeds the draw, so that a cut is
// repeatable), the others as they were at that sync, a file that grew
// since then ending after its last kept block. Every later write, sync or
// truncation through the mount answers EIO; reads go on (the page cache
// of a machine that is about to stop: stop the program under test, and
// read the disk in Disk).
func (f *FS) PowerCutAtSyncAfterWriteTo(t testing.TB, name string, off, n int64, seed uint64, keep int) {
	f.command(t, "cut touches %s %d %d %d %d", name, off, n, seed, keep)
}

// PowerCutAtSyncAfterWriteOutside is PowerCutAtSyncAfterWriteTo at the
// sync FailSyncAfterWriteOutside would fail.
func (f *FS) PowerCutAtSyncAfterWriteOutside(t testing.TB, name string, off, n int64, seed uint64, keep int) {
	f.command(t, "cut avoids %s %d %d %d %d", name, off, n, seed, keep)
}

// PowerCutAtWrite arms a one-shot power cut (PowerCutAtSyncAfterWriteTo
// says what a cut does) at the k-th write from now to any file of the
// mount, before that write, which answers EIO: a cut in the middle of
// whatever the program was writing.
func (f *FS) PowerCutAtWrite(t testing.TB, k int, seed uint64, keep int) {
	f.command(t, "cut write %d %d %d", k, seed, keep)
}

// PowerCutAtSync arms a one-shot power cut (PowerCutAtSyncAfterWriteTo
// says what a cut does) at the k-th sync from now of any file of the
// mount, before that sync, which answers EIO.
func (f *FS) PowerCutAtSync(t testing.TB, k int, seed uint64, keep int) {
	f.command(t, "cut sync %d %d %d", k, seed, keep)
}

// PowerCutAtSyncKeepingOnly is PowerCutAtSync with the disk keeping
// exactly the unsynced blocks of the file at name that meet [off, off+n)
// and none of the others: the write-back order a program's barriers must
// survive (for bbolt, a new meta page on the disk and no page it points
// at, where the program failed to sync those first).
func (f *FS) PowerCutAtSyncKeepingOnly(t testing.TB, k int, name string, off, n int64) {
	f.command(t, "cut sync %d only %s %d %d", k, name, off, n)
}

// PowerCut cuts the power now (PowerCutAtSyncAfterWriteTo says what a cut
// does), whatever the program is doing: a write in progress is either
// done before the cut or refused after it.
func (f *FS) PowerCut(t testing.TB, seed uint64, keep int) {
	f.command(t, "cut now %d %d", seed, keep)
}

// Stats is what the mount has seen: whether a fault (or cut) is armed and
// has not fired, the syncs seen and failed, whether the power was cut,
// and how many of the blocks written since their last sync the cut kept
// and put back.
type Stats struct {
	Armed          bool
	Syncs, Failed  int
	Cut            bool
	Kept, Reverted int
}

// Stats returns what the mount has seen. A power cut that could not write
// the disk directory fails the test (its error is on the test's log).
func (f *FS) Stats(t testing.TB) Stats {
	t.Helper()
	var s Stats
	var armed, cut, cutErr int
	line := f.command(t, "stat")
	if _, err := fmt.Sscanf(line, "armed %d syncs %d failed %d cut %d kept %d reverted %d cuterr %d",
		&armed, &s.Syncs, &s.Failed, &cut, &s.Kept, &s.Reverted, &cutErr); err != nil {
		t.Fatalf("faultfs: stat %q: %v", line, err)
	}
	if cutErr != 0 {
		t.Fatalf("faultfs: the power cut did not write the disk: %s", f.stderr.String())
	}
	s.Armed, s.Cut = armed == 1, cut == 1
	return s
}

// Stat returns whether a fault is armed and has not fired, how many syncs
// the mount has seen and how many it failed.
func (f *FS) Stat(t testing.TB) (armed bool, syncs, failed int) {
	s := f.Stats(t)
	return s.Armed, s.Syncs, s.Failed
}
