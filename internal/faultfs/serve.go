//go:build linux

package faultfs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
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
// With cut set, that sync is a power cut (cutSpec) before it answers EIO.
type fault struct {
	file    string // its path from the mount's root
	off, n  int64
	outside bool
	cut     *cutSpec
}

// fires reports whether a sync of file, written at written since its last
// sync, is the one f fails.
func (f fault) fires(file string, written []extent) bool {
	return file == f.file && len(written) > 0 && meets(written, f.off, f.n) != f.outside
}

// cutSpec is a power cut: which of the blocks written since their file's
// last sync reach the disk. Each does with probability keep/1000, drawn
// from a generator seeded with seed over the files and blocks in order, so
// that a cut is repeatable.
type cutSpec struct {
	seed uint64
	keep int // per mille
	// only, when set, replaces the draw: the cut keeps exactly the blocks
	// of the file at this path (from the mount's root) that meet
	// [off, off+n), and puts every other unsynced block back.
	only *keepOnly
}

// keepOnly is the blocks a cut keeps when it draws none.
type keepOnly struct {
	file   string
	off, n int64
}

// blockSize is the unit of the power-cut model: a page of the kernel's
// page cache, which write-back writes whole and in no promised order.
const blockSize = 4096

// cache is the power-cut model's view of one file: what a disk holds of it
// since its last sync. The file system writes through to the backing file
// and keeps, for each block first written since the last sync, the bytes
// the block held then (shorter than a block where the file ended: the rest
// was beyond its end); a sync forgets them.
type cache struct {
	syncedSize int64            // the file's size at its last sync (or when first written)
	old        map[int64][]byte // block number -> its bytes at the last sync
}

// truncated records a truncation (durable at once in the model) to size.
func (c *cache) truncated(size int64) {
	c.syncedSize = size
	for b, old := range c.old {
		switch start := b * blockSize; {
		case start >= size:
			delete(c.old, b)
		case start+int64(len(old)) > size:
			c.old[b] = old[:size-start]
		}
	}
}

// fsState is the served file system's fault, its power-cut model and
// counters. Its mutex is held across every write and sync, so that a cut
// sees no write half done.
type fsState struct {
	mu      sync.Mutex
	backing string            // the backing directory
	disk    string            // where a power cut writes what the disk holds
	armed   *fault            // nil when none
	failed  int               // syncs answered EIO
	syncs   int               // syncs seen
	files   map[uint64]*cache // by the backing file's inode, which a rename keeps
	// Power cuts armed at the k-th write and the k-th sync from now.
	atWrite, atSync countdown
	cutErr          error // what kept the last cut from writing the disk
	// After a power cut every write, sync or truncation answers EIO, so
	// that nothing more is acknowledged; the disk directory holds the disk.
	dead           bool
	kept, reverted int // the cut's blocks
}

// countdown is a power cut armed at the left-th event (a write or a sync)
// from now; left 0: none.
type countdown struct {
	left int
	spec cutSpec
}

// due counts one event and reports whether it is the one the cut is for.
func (c *countdown) due() bool {
	if c.left == 0 {
		return false
	}
	c.left--
	return c.left == 0
}

// sync decides one sync of file, which was written at written: 0 to go
// on, EIO for an armed fault (after the power cut, for a cut), EIO once
// the file system is dead. Called with f.mu held.
func (f *fsState) sync(file string, written []extent) syscall.Errno {
	if f.dead {
		return syscall.EIO
	}
	f.syncs++
	if f.atSync.due() {
		f.failed++
		f.cut(f.atSync.spec)
		return syscall.EIO
	}
	if f.armed != nil && f.armed.fires(file, written) {
		a := f.armed
		f.armed = nil
		f.failed++
		if a.cut != nil {
			f.cut(*a.cut)
		}
		return syscall.EIO
	}
	return 0
}

// remember keeps, before a write of n bytes at off to file, the bytes of
// each block the write meets that was not written since the file's last
// sync. Called with f.mu held.
func (f *fsState) remember(file *file, off, n int64) syscall.Errno {
	if n <= 0 {
		return 0
	}
	c := f.files[file.ino]
	if c == nil {
		// First written now: its size counts as synced (a file created
		// on the mount is durable, empty, from its creation: directory
		// operations are outside the model).
		st, err := file.ro.Stat()
		if err != nil {
			return fs.ToErrno(err)
		}
		c = &cache{syncedSize: st.Size(), old: map[int64][]byte{}}
		f.files[file.ino] = c
	}
	for b := off / blockSize; b <= (off+n-1)/blockSize; b++ {
		if _, ok := c.old[b]; ok {
			continue
		}
		buf := make([]byte, blockSize)
		got, err := file.ro.ReadAt(buf, b*blockSize)
		if err != nil && err != io.EOF {
			return fs.ToErrno(err)
		}
		c.old[b] = buf[:got]
	}
	return 0
}

// synced records a successful sync of file: what it holds is on the disk.
// Called with f.mu held.
func (f *fsState) synced(file *file) {
	c := f.files[file.ino]
	if c == nil {
		return
	}
	if st, err := file.ro.Stat(); err == nil {
		c.syncedSize = st.Size()
	}
	clear(c.old)
}

// cut is powerCut, its error kept for stat (a cut fired by a write or a
// sync has nobody else to tell). Called with f.mu held.
func (f *fsState) cut(spec cutSpec) {
	if err := f.powerCut(spec); err != nil {
		f.cutErr = err
		fmt.Fprintf(os.Stderr, "faultfs: power cut: %v\n", err)
	}
}

// powerCut writes to the disk directory what a disk would hold had power
// been cut now: every file of the backing directory, each block written
// since its file's last sync kept or put back as it was at that sync
// (cutSpec), a file that grew since its last sync ending after its last
// kept block (or at its synced size); every name of a file (hard links)
// the same file; directories and symbolic links as they are, modes kept.
// The backing directory, the page cache of the model, stays as it is, so
// that the program keeps reading what it wrote (a machine that lost power
// runs nothing more; the program under test has to be stopped instead),
// but from now on every write, sync, truncation or change of names
// answers EIO. Called with f.mu held, which every change of names takes:
// the walk sees one tree.
func (f *fsState) powerCut(spec cutSpec) error {
	f.dead = true
	rng := rand.New(rand.NewPCG(spec.seed, 0x9e3779b97f4a7c15))
	var only *uint64
	if spec.only != nil {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(f.backing, spec.only.file), &st); err != nil {
			return err
		}
		only = &st.Ino
	}
	first := map[uint64]string{} // inode -> its first name on the disk
	return filepath.WalkDir(f.backing, func(src string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(f.backing, src)
		if err != nil {
			return err
		}
		dst := filepath.Join(f.disk, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return err
			}
			return os.Chmod(dst, info.Mode().Perm())
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case !d.Type().IsRegular():
			return nil
		}
		ino := info.Sys().(*syscall.Stat_t).Ino
		if name, ok := first[ino]; ok {
			return os.Link(name, dst)
		}
		first[ino] = dst
		keep := func(b int64) bool { return rng.IntN(1000) < spec.keep }
		if only != nil {
			keep = func(b int64) bool {
				return ino == *only && b*blockSize < spec.only.off+spec.only.n && spec.only.off < (b+1)*blockSize
			}
		}
		return f.cutFile(src, dst, info.Mode().Perm(), f.files[ino], keep)
	})
}

// cutFile is powerCut's work on one file: src copied to dst with mode
// perm, and what c (nil: nothing written since a sync) says was not synced
// kept or put back as keep decides for each block.
func (f *fsState) cutFile(src, dst string, perm os.FileMode, c *cache, keep func(block int64) bool) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if c != nil {
		size, end := int64(len(data)), c.syncedSize
		blocks := make([]int64, 0, len(c.old))
		for b := range c.old {
			blocks = append(blocks, b)
		}
		slices.Sort(blocks)
		for _, b := range blocks {
			start := b * blockSize
			if keep(b) {
				f.kept++
				end = max(end, min(size, start+blockSize))
				continue
			}
			f.reverted++
			if start >= size {
				continue
			}
			// The block as it was: its old bytes, zeros where the file
			// had ended (trimmed below when past the end).
			block := data[start:min(size, start+blockSize)]
			clear(block[copy(block, c.old[b]):])
		}
		if size > c.syncedSize && end < size {
			data = data[:end]
		}
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // as the disk holds it
}

// Serve mounts the loopback file system of backing at dir (mount(2)
// itself: root, no fusermount), with disk the directory a power cut writes
// the disk's contents to, prints "ready" on out and then answers the
// commands read from in, one line each, until in ends, when it unmounts
// (lazily, should a file still be open) and returns. Commands:
//
//	fail touches FILE OFF N  the first sync of FILE after a write that meets [OFF, OFF+N) fails
//	fail avoids FILE OFF N   the first sync of FILE after writes none of which meets it fails
//	cut touches FILE OFF N SEED KEEP
//	cut avoids FILE OFF N SEED KEEP
//	                         as fail, and that sync is a power cut first (powerCut):
//	                         each block written since its file's last sync stays
//	                         with probability KEEP/1000 (SEED seeds the draw)
//	cut write K SEED KEEP    a power cut at the K-th write from now (on any file),
//	                         which answers EIO
//	cut sync K SEED KEEP     a power cut at the K-th sync from now (of any file),
//	                         which answers EIO
//	cut sync K only FILE OFF N
//	                         the same, keeping exactly the unsynced blocks of
//	                         FILE that meet [OFF, OFF+N) and putting back all others
//	cut now SEED KEEP        a power cut now
//	stat                     answers "armed A syncs S failed F cut C kept K reverted R cuterr E"
//
// FILE is the file's path from the mount's root, without spaces. Each
// command is answered "ok", the stat line or "error: ...". Mount runs it in
// its child process.
func Serve(backing, disk, dir string, in io.Reader, out io.Writer) error {
	st := &fsState{backing: backing, disk: disk, files: map[uint64]*cache{}}
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
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case len(w) == 1 && w[0] == "stat":
		armed, dead := 0, 0
		if f.armed != nil || f.atWrite.left > 0 || f.atSync.left > 0 {
			armed = 1
		}
		if f.dead {
			dead = 1
		}
		cutErr := 0
		if f.cutErr != nil {
			cutErr = 1
		}
		return fmt.Sprintf("armed %d syncs %d failed %d cut %d kept %d reverted %d cuterr %d", armed, f.syncs, f.failed, dead, f.kept, f.reverted, cutErr)
	case len(w) == 5 && w[0] == "fail" && (w[1] == "touches" || w[1] == "avoids"),
		len(w) == 7 && w[0] == "cut" && (w[1] == "touches" || w[1] == "avoids"):
		off, err1 := strconv.ParseInt(w[3], 10, 64)
		n, err2 := strconv.ParseInt(w[4], 10, 64)
		if err1 != nil || err2 != nil || off < 0 || n <= 0 {
			return "error: bad range in " + strconv.Quote(line)
		}
		a := &fault{file: w[2], off: off, n: n, outside: w[1] == "avoids"}
		if w[0] == "cut" {
			spec, err := parseCut(w[5], w[6])
			if err != nil {
				return "error: " + err.Error() + " in " + strconv.Quote(line)
			}
			a.cut = &spec
		}
		f.armed = a
		return "ok"
	case len(w) == 5 && w[0] == "cut" && w[1] == "write":
		k, err := strconv.Atoi(w[2])
		spec, err2 := parseCut(w[3], w[4])
		if err != nil || k <= 0 || err2 != nil {
			return "error: bad count, seed or share kept in " + strconv.Quote(line)
		}
		f.atWrite = countdown{k, spec}
		return "ok"
	case len(w) == 5 && w[0] == "cut" && w[1] == "sync",
		len(w) == 7 && w[0] == "cut" && w[1] == "sync" && w[3] == "only":
		k, err := strconv.Atoi(w[2])
		if err != nil || k <= 0 {
			return "error: bad count in " + strconv.Quote(line)
		}
		var spec cutSpec
		if w[3] == "only" {
			off, err1 := strconv.ParseInt(w[5], 10, 64)
			n, err2 := strconv.ParseInt(w[6], 10, 64)
			if err1 != nil || err2 != nil || off < 0 || n <= 0 {
				return "error: bad range in " + strconv.Quote(line)
			}
			spec.only = &keepOnly{file: w[4], off: off, n: n}
		} else if spec, err = parseCut(w[3], w[4]); err != nil {
			return "error: " + err.Error() + " in " + strconv.Quote(line)
		}
		f.atSync = countdown{k, spec}
		return "ok"
	case len(w) == 4 && w[0] == "cut" && w[1] == "now":
		spec, err := parseCut(w[2], w[3])
		if err != nil {
			return "error: " + err.Error() + " in " + strconv.Quote(line)
		}
		if f.dead {
			return "error: the power was cut already"
		}
		if err := f.powerCut(spec); err != nil {
			return "error: power cut: " + err.Error()
		}
		return "ok"
	}
	return "error: unknown command " + strconv.Quote(line)
}

// parseCut reads a power cut's seed and the blocks it keeps, per mille.
func parseCut(seed, keep string) (cutSpec, error) {
	s, err1 := strconv.ParseUint(seed, 10, 64)
	k, err2 := strconv.Atoi(keep)
	if err1 != nil || err2 != nil || k < 0 || k > 1000 {
		return cutSpec{}, fmt.Errorf("bad seed or share kept")
	}
	return cutSpec{seed: s, keep: k}, nil
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

// node is a loopback node whose files are faultable. Every operation that
// changes names or sizes holds the state's mutex, so that a power cut
// sees one consistent tree, and answers EIO after the cut.
type node struct {
	fs.LoopbackNode
	st *fsState
}

var (
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
)

// changing runs fn, an operation that changes names or sizes, holding the
// state's mutex (so that a power cut sees it done or not begun), or
// answers EIO once the power was cut.
func (n *node) changing(fn func() syscall.Errno) syscall.Errno {
	n.st.mu.Lock()
	defer n.st.mu.Unlock()
	if n.st.dead {
		return syscall.EIO
	}
	return fn()
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC) != 0 && n.st.isDead() {
		return nil, 0, syscall.EIO
	}
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	f, errno := n.wrap(fh, n.Path(nil))
	return f, fuseFlags, errno
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (in *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	errno = n.changing(func() syscall.Errno {
		rel := path.Join(n.Path(nil), name)
		_, err := os.Lstat(filepath.Join(n.RootData.Path, rel))
		isNew := os.IsNotExist(err)
		var lf fs.FileHandle
		if in, lf, fuseFlags, errno = n.LoopbackNode.Create(ctx, name, flags, mode, out); errno != 0 {
			return errno
		}
		if fh, errno = n.wrap(lf, rel); errno != 0 {
			return errno
		}
		if isNew {
			// A new file may have the inode number of one removed since
			// it was written: nothing of that one is this file's.
			delete(n.st.files, fh.(*file).ino)
		}
		return 0
	})
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return in, fh, fuseFlags, 0
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (in *fs.Inode, errno syscall.Errno) {
	errno = n.changing(func() syscall.Errno {
		if in, errno = n.LoopbackNode.Mknod(ctx, name, mode, rdev, out); errno == 0 {
			// A new inode, as in Create.
			var st syscall.Stat_t
			if syscall.Lstat(filepath.Join(n.RootData.Path, n.Path(nil), name), &st) == nil {
				delete(n.st.files, st.Ino)
			}
		}
		return errno
	})
	return in, errno
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (in *fs.Inode, errno syscall.Errno) {
	errno = n.changing(func() syscall.Errno { in, errno = n.LoopbackNode.Mkdir(ctx, name, mode, out); return errno })
	return in, errno
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.changing(func() syscall.Errno { return n.LoopbackNode.Rmdir(ctx, name) })
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.changing(func() syscall.Errno { return n.LoopbackNode.Unlink(ctx, name) })
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return n.changing(func() syscall.Errno { return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags) })
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (in *fs.Inode, errno syscall.Errno) {
	errno = n.changing(func() syscall.Errno { in, errno = n.LoopbackNode.Link(ctx, target, name, out); return errno })
	return in, errno
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (in *fs.Inode, errno syscall.Errno) {
	errno = n.changing(func() syscall.Errno { in, errno = n.LoopbackNode.Symlink(ctx, target, name, out); return errno })
	return in, errno
}

// Setattr: a truncation (ftruncate, truncate, open with O_TRUNC: the
// kernel sends them all here) is durable at once in the model: the file's
// synced size becomes the new size, and what the model remembers past it
// is dropped. After the cut it answers EIO.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return n.changing(func() syscall.Errno {
		if errno := n.LoopbackNode.Setattr(ctx, fh, in, out); errno != 0 {
			return errno
		}
		size, ok := in.GetSize()
		if !ok {
			return 0
		}
		var st syscall.Stat_t
		if f, isFile := fh.(*file); isFile {
			st.Ino = f.ino
		} else if err := syscall.Lstat(filepath.Join(n.RootData.Path, n.Path(nil)), &st); err != nil {
			return 0
		}
		if c := n.st.files[st.Ino]; c != nil {
			c.truncated(int64(size))
		}
		return 0
	})
}

// Tmpfile is refused: an unnamed file's writes would escape the model
// (programs fall back to a named temporary file).
func (n *node) Tmpfile(context.Context, uint32, uint32, *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// dirStream is what go-fuse's loopback directory handle implements.
type dirStream interface {
	fs.FileReleasedirer
	fs.FileSeekdirer
	fs.FileFsyncdirer
	fs.FileReaddirenter
	fs.FileIoctler
}

// dir is a directory handle whose fsync answers EIO after a power cut.
type dir struct {
	dirStream
	st *fsState
}

func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if d.st.isDead() {
		return syscall.EIO
	}
	return d.dirStream.Fsyncdir(ctx, flags)
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	ds, ok := fh.(dirStream)
	if !ok {
		// go-fuse's loopback directory stream implements them all;
		// anything else would let a directory fsync pass a cut.
		if r, ok := fh.(fs.FileReleasedirer); ok {
			r.Releasedir(ctx, 0)
		}
		return nil, 0, syscall.EIO
	}
	return &dir{dirStream: ds, st: n.st}, fuseFlags, 0
}

// wrap makes the loopback's file handle of the file at name (its path
// from the mount's root) faultable.
func (n *node) wrap(fh fs.FileHandle, name string) (fs.FileHandle, syscall.Errno) {
	release := func() {
		if r, ok := fh.(fs.FileReleaser); ok {
			r.Release(context.Background())
		}
	}
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		// go-fuse's loopback returns its *LoopbackFile; anything else
		// would bypass the fault: refuse the open.
		release()
		return nil, syscall.EIO
	}
	// The power-cut model reads a block's bytes before a write through a
	// descriptor of its own to the very inode the handle has open (its
	// descriptor's /proc link, not the name, which a rename may have
	// given another file meanwhile).
	fd, ok := lf.PassthroughFd() // the loopback's descriptor; no passthrough is offered
	if !ok {
		release()
		return nil, syscall.EIO
	}
	ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		release()
		return nil, fs.ToErrno(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(ro.Fd()), &st); err != nil {
		ro.Close()
		release()
		return nil, fs.ToErrno(err)
	}
	return &file{LoopbackFile: lf, st: n.st, name: name, ino: st.Ino, ro: ro}, 0
}

// file is a loopback file that records its writes and asks the FS at each
// sync. It offers no passthrough file descriptor (PassthroughFd), so the
// kernel sends every read and write here rather than to the backing file.
type file struct {
	*fs.LoopbackFile
	st   *fsState
	name string   // its path from the mount's root, when opened
	ino  uint64   // the backing file's inode
	ro   *os.File // the backing file, read-only (the power-cut model's)

	mu      sync.Mutex
	written []extent // since the last sync
}

func (f *file) Release(ctx context.Context) syscall.Errno {
	f.ro.Close()
	return f.LoopbackFile.Release(ctx)
}

var (
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
)

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	if f.st.dead {
		return 0, syscall.EIO
	}
	if f.st.atWrite.due() {
		// The power goes before this write reaches the page cache.
		f.st.cut(f.st.atWrite.spec)
		return 0, syscall.EIO
	}

	if errno := f.st.remember(f, off, int64(len(data))); errno != 0 {
		return 0, errno
	}
	n, errno := f.LoopbackFile.Write(ctx, data, off)
	if n > 0 {
		f.mu.Lock()
		f.written = append(f.written, extent{Off: off, Len: int64(n)})
		f.mu.Unlock()
	}
	return n, errno
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	f.st.mu.Lock() // first, as in Write: no write comes between
	defer f.st.mu.Unlock()
	f.mu.Lock()
	written := f.written
	f.written = nil
	f.mu.Unlock()
	if errno := f.st.sync(f.name, written); errno != 0 {
		return errno
	}
	if errno := f.LoopbackFile.Fsync(ctx, flags); errno != 0 {
		return errno
	}
	f.st.synced(f)
	return 0
}

// Allocate answers EIO after a power cut; before it, it is the loopback's,
// durable at once in the model, as a truncation: a file it grew keeps its
// new size on the disk.
func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	if f.st.dead {
		return syscall.EIO
	}
	if errno := f.LoopbackFile.Allocate(ctx, off, size, mode); errno != 0 {
		return errno
	}
	if c := f.st.files[f.ino]; c != nil {
		if st, err := f.ro.Stat(); err == nil && st.Size() > c.syncedSize {
			c.syncedSize = st.Size()
		}
	}
	return 0
}

// isDead reports whether the power was cut.
func (f *fsState) isDead() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dead
}

// PassthroughFd shadows the loopback file's: no passthrough, so that the
// writes come through Write.
func (f *file) PassthroughFd() (int, bool) { return 0, false }

// detach takes a mount out of the tree (lazily: it ends once unused); a
// directory that is no mount (any more) is left as it is.
func detach(dir string) { _ = syscall.Unmount(dir, syscall.MNT_DETACH) }
