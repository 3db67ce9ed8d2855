package faultfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// FS is a mount served by a faultfsd child process. Dir is its mount
// point.
type FS struct {
	Dir string

	mu  sync.Mutex
	in  io.Writer
	out *bufio.Reader
}

var (
	buildOnce sync.Once
	daemon    string // the built cmd/faultfsd
	buildErr  error
)

// Mount mounts a loopback file system over a new temporary backing
// directory at a new temporary mount point, served by a child process
// (cmd/faultfsd, built once per test binary): a test process that dies with
// a file of the mount open would otherwise wait forever for its own FUSE
// server, the kernel flushing the file on its exit. The mount ends with
// the test (or, however the test process ends, with the child's stdin).
// Mount skips the test (fails it under FISCAL402_STRICT=1) when FUSE cannot
// be mounted here: not root, or no /dev/fuse.
func Mount(t testing.TB) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		testtool.Missing(t, "FUSE (root)", "mounting a FUSE file system without fusermount needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testtool.Missing(t, "FUSE (/dev/fuse)", err.Error())
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "faultfsd")
		if err != nil {
			buildErr = err
			return
		}
		daemon = filepath.Join(dir, "faultfsd")
		cmd := exec.Command("go", "build", "-o", daemon, "./internal/faultfs/cmd/faultfsd")
		cmd.Dir = testtool.RepoDir(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build faultfsd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	backing, dir := t.TempDir(), t.TempDir()
	cmd := exec.Command(daemon, backing, dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &FS{Dir: dir, in: in, out: bufio.NewReader(outPipe)}
	// Registered before the callers' own cleanups, so it runs after them
	// (they close their files first).
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("faultfsd: %v: %s", err, stderr.String())
		}
	})
	if line, err := f.out.ReadString('\n'); err != nil || line != "ready\n" {
		in.Close()
		_ = cmd.Wait()
		testtool.Missing(t, "FUSE", fmt.Sprintf("faultfsd did not mount: %q %v: %s", line, err, stderr.String()))
	}
	return f
}

// command sends one command and returns the answer.
func (f *FS) command(t testing.TB, format string, args ...any) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := fmt.Fprintf(f.in, format+"\n", args...); err != nil {
		t.Fatalf("faultfsd: %v", err)
	}
	line, err := f.out.ReadString('\n')
	if err != nil {
		t.Fatalf("faultfsd: %v", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if strings.HasPrefix(line, "error") {
		t.Fatalf("faultfsd: %s", line)
	}
	return line
}

// FailSyncAfterWriteTo arms a one-shot fault: the first later sync (fsync
// or fdatasync) of a file that was written in [off, off+n) since its last
// sync answers EIO.
func (f *FS) FailSyncAfterWriteTo(t testing.TB, off, n int64) {
	f.command(t, "fail touches %d %d", off, n)
}

// FailSyncAfterWriteOutside arms a one-shot fault: the first later sync of
// a file that was written since its last sync, but nowhere in
// [off, off+n), answers EIO.
func (f *FS) FailSyncAfterWriteOutside(t testing.TB, off, n int64) {
	f.command(t, "fail avoids %d %d", off, n)
}

// Stat returns whether a fault is armed and has not fired, how many syncs
// the mount has seen and how many it failed.
func (f *FS) Stat(t testing.TB) (armed bool, syncs, failed int) {
	var a int
	line := f.command(t, "stat")
	if _, err := fmt.Sscanf(line, "armed %d syncs %d failed %d", &a, &syncs, &failed); err != nil {
		t.Fatalf("faultfsd: stat %q: %v", line, err)
	}
	return a == 1, syncs, failed
}
