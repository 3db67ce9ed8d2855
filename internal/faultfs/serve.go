//go:build linux

package faultfs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// extent is a byte range written to a file: [Off, Off+Len).
type extent struct{ Off, Len int64 }

// overlaps reports whether the extent meets [off, off+n).
func (e extent) overlaps(off, n int64) bool { return e.Off < off+n && off < e.Off+e.Len }

// fault is an armed failure: the first sync of file whose writes since
// its last sync meet [off, off+n) (or, outside, were made and all miss it).
type fault struct {
	file    string // its path from the mount's root
	off, n  int64
	outside bool
}

// fires reports whether a sync of file, written at written since its last
// sync, is the one f fails.
func (f fault) fires(file string, written []extent) bool {
	return file == f.file && len(written) > 0 && meets(written, f.off, f.n) != f.outside
}

// fsState is the served file system's fault and counters.
type fsState struct {
	mu     sync.Mutex
	armed  *fault // nil when none
	failed int    // syncs answered EIO
	syncs  int    // syncs seen
}

// sync decides one sync of file, which was written at written.
func (f *fsState) sync(file string, written []extent) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	if f.armed != nil && f.armed.fires(file, written) {
		f.armed = nil
		f.failed++
		return syscall.EIO
	}
	return 0
}

// Serve mounts the loopback file system of backing at dir (mount(2)
// itself: root, no fusermount), prints "ready" on out and then answers the
// commands read from in, one line each, until in ends, when it unmounts
// (lazily, should a file still be open) and returns. Commands:
//
//	fail touches FILE OFF N  the first sync of FILE after a write that meets [OFF, OFF+N) fails
//	fail avoids FILE OFF N   the first sync of FILE after writes none of which meets it fails
//	stat                     answers "armed A syncs S failed F"
//
// FILE is the file's path from the mount's root, without spaces. Each
// command is answered "ok", the stat line or "error: ...". Mount runs it in
// its child process.
func Serve(backing, dir string, in io.Reader, out io.Writer) error {
	st := &fsState{}
	root := &fs.LoopbackRoot{Path: backing}
	var bst syscall.Stat_t
	if err := syscall.Stat(backing, &bst); err != nil {
		return err
	}
	root.Dev = uint64(bst.Dev)
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, st: st}
	}
	root.RootNode = root.NewNode(root, nil, "", &bst)
	// No attribute or entry caching: a file's size is the backing file's
	// at every stat, as on a local file system.
	zero := time.Duration(0)
	server, err := fs.Mount(dir, root.RootNode, &fs.Options{
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, // mount(2) itself: no fusermount binary
			FsName:            "faultfs",
			Name:              "faultfs",
		},
		AttrTimeout:  &zero,
		EntryTimeout: &zero,
	})
	if err != nil {
		return fmt.Errorf("faultfs: mount %s: %w", dir, err)
	}
	defer func() {
		if server.Unmount() != nil {
			// A file is still open: detach the mount from the tree.
			// This process exits next, which ends the FUSE connection:
			// the file's later calls fail (ENOTCONN) rather than wait.
			detach(dir)
		}
	}()
	if _, err := fmt.Fprintln(out, "ready"); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if _, err := fmt.Fprintln(out, st.command(sc.Text())); err != nil {
			return err
		}
	}
	return sc.Err()
}

// command runs one command line and returns its answer.
func (f *fsState) command(line string) string {
	w := strings.Fields(line)
	switch {
	case len(w) == 1 && w[0] == "stat":
		f.mu.Lock()
		defer f.mu.Unlock()
		armed := 0
		if f.armed != nil {
			armed = 1
		}
		return fmt.Sprintf("armed %d syncs %d failed %d", armed, f.syncs, f.failed)
	case len(w) == 5 && w[0] == "fail" && (w[1] == "touches" || w[1] == "avoids"):
		off, err1 := strconv.ParseInt(w[3], 10, 64)
		n, err2 := strconv.ParseInt(w[4], 10, 64)
		if err1 != nil || err2 != nil || off < 0 || n <= 0 {
			return "error: bad range in " + strconv.Quote(line)
		}
		f.mu.Lock()
		f.armed = &fault{file: w[2], off: off, n: n, outside: w[1] == "avoids"}
		f.mu.Unlock()
		return "ok"
	}
	return "error: unknown command " + strconv.Quote(line)
}

// meets reports whether any written extent meets [off, off+n).
func meets(written []extent, off, n int64) bool {
	for _, e := range written {
		if e.overlaps(off, n) {
			return true
		}
	}
	return false
}

// node is a loopback node whose files are faultable.
type node struct {
	fs.LoopbackNode
	st *fsState
}

var (
	_ fs.NodeOpener  = (*node)(nil)
	_ fs.NodeCreater = (*node)(nil)
)

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	f, errno := n.wrap(fh, n.Path(nil))
	return f, fuseFlags, errno
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	f, errno := n.wrap(fh, path.Join(n.Path(nil), name))
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return in, f, fuseFlags, 0
}

// wrap makes the loopback's file handle of the file at name faultable.
func (n *node) wrap(fh fs.FileHandle, name string) (fs.FileHandle, syscall.Errno) {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		// go-fuse's loopback returns its *LoopbackFile; anything else
		// would bypass the fault: refuse the open.
		if r, ok := fh.(fs.FileReleaser); ok {
			r.Release(context.Background())
		}
		return nil, syscall.EIO
	}
	return &file{LoopbackFile: lf, st: n.st, name: name}, 0
}

// file is a loopback file that records its writes and asks the FS at each
// sync. It offers no passthrough file descriptor (PassthroughFd), so the
// kernel sends every read and write here rather than to the backing file.
type file struct {
	*fs.LoopbackFile
	st   *fsState
	name string // its path from the mount's root

	mu      sync.Mutex
	written []extent // since the last sync
}

var (
	_ fs.FileWriter  = (*file)(nil)
	_ fs.FileFsyncer = (*file)(nil)
)

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, errno := f.LoopbackFile.Write(ctx, data, off)
	if n > 0 {
		f.mu.Lock()
		f.written = append(f.written, extent{Off: off, Len: int64(n)})
		f.mu.Unlock()
	}
	return n, errno
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	f.mu.Lock()
	written := f.written
	f.written = nil
	f.mu.Unlock()
	if errno := f.st.sync(f.name, written); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Fsync(ctx, flags)
}

// PassthroughFd shadows the loopback file's: no passthrough, so that the
// writes come through Write.
func (f *file) PassthroughFd() (int, bool) { return 0, false }

// detach takes a mount out of the tree (lazily: it ends once unused); a
// directory that is no mount (any more) is left as it is.
func detach(dir string) { _ = syscall.Unmount(dir, syscall.MNT_DETACH) }
