package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
)

// The bbolt v2 file format (go.etcd.io/bbolt/internal/common, unchanged
// since 2014), as far as checkPages reads it. Integers are in the machine's
// byte order, which is how bbolt writes them.
const (
	boltMagic         = 0xED0CDAED
	boltVersion       = 2
	pageHeaderSize    = 16 // id u64, flags u16, count u16, overflow u32
	elementSize       = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaChecksumStart = 56 // offset of the checksum in the meta struct
	bucketHeaderSize  = 16 // root pgid u64, sequence u64
	branchPageFlag    = 0x01
	leafPageFlag      = 0x02
	freelistPageFlag  = 0x10
	noFreelist        = 0xFFFFFFFFFFFFFFFF // meta freelist of a file written with NoFreelistSync
	bucketLeafFlag    = 0x01
	maxTreeDepth      = 64
)

// checkPages walks the B+tree pages of a bbolt file reachable from its
// current meta page, with bounds checks on every page, element, key and
// value, and fails on cycles, pages referenced twice, out-of-range page ids,
// unknown page types and keys out of order. It then reads the freelist and
// fails when a free page is also in use, is listed twice, or when a page is
// neither in use nor free (the accounting bbolt's own Tx.Check does). bbolt
// follows these structures without such checks, so on a damaged file its
// cursors can loop forever or read outside the file (found by FuzzCheck),
// Open can panic on a damaged freelist, and a free page that is in use would
// be handed out again and overwritten; Open and Check run this walk first so
// that bbolt only ever reads a structurally sound tree. It reads with ReadAt
// (no memory map), so a truncated file is an error, not a fault, and keeps
// one bit per page in memory (125 KB per GB of file).
func checkPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkPagesOf(f, false)
}

// checkPagesOf is checkPages on an open file. quick (Open) reads the
// elements of an ordinary leaf page (one that holds no nested bucket) only
// as far as their bounds: not their keys (their order is not checked) nor
// their values; every other check is made. It then touches little more
// than one cache line per leaf page instead of the whole file: bbolt
// detects what it skips only when it reads such a page, and every read and
// write recovers that into a *CorruptError.
func checkPagesOf(f *os.File, quick bool) (err error) {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	w := &pageWalker{f: f, fileSize: fi.Size(), quick: quick}
	var unmap func()
	w.mem, unmap = mapFile(f, fi.Size())
	defer unmap()
	// The file is read through a memory map: a file cut while it is read
	// faults, which is reported, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the file cannot be read while it is checked: %s", panicText(r))
		}
	}()
	root, err := w.readMeta()
	if err != nil {
		return err
	}
	if err := w.tree(root, 0); err != nil {
		return err
	}
	return w.freelist()
}

type pageWalker struct {
	f            *os.File
	mem          []byte // the file mapped, or nil: then pages are read with ReadAt
	quick        bool
	fileSize     int64
	pageSize     int64
	highMark     uint64   // meta pgid: first page id past the data
	freelistPage uint64   // meta freelist: page id of the freelist, or noFreelist
	seen         []uint64 // bitmap of the page ids reached
	bufs         [][]byte // one reusable page buffer per tree level
}

func (w *pageWalker) isSeen(id uint64) bool { return w.seen[id/64]&(1<<(id%64)) != 0 }
func (w *pageWalker) setSeen(id uint64)     { w.seen[id/64] |= 1 << (id % 64) }

// readMeta finds the page size and the meta page bbolt uses (the valid one
// with the highest transaction id) and returns the root bucket's page.
func (w *pageWalker) readMeta() (uint64, error) {
	// The first meta page gives the page size; if it is damaged, look for
	// the second one at the page sizes bbolt supports (1 KB … 16 MB).
	var candidates []int64
	if m, ok := w.metaAt(0); ok {
		candidates = append(candidates, int64(binary.NativeEndian.Uint32(m[8:12])))
	}
	for i := range 15 {
		candidates = append(candidates, int64(1024)<<i)
	}
	var best []byte
	for _, ps := range candidates {
		if ps < 1024 || ps > 16<<20 {
			continue
		}
		for _, off := range []int64{0, ps} {
			m, ok := w.metaAt(off)
			if !ok || int64(binary.NativeEndian.Uint32(m[8:12])) != ps {
				continue
			}
			if best == nil || binary.NativeEndian.Uint64(m[48:56]) > binary.NativeEndian.Uint64(best[48:56]) {
				best = m
			}
		}
		if best != nil {
			w.pageSize = ps
			break
		}
	}
	if best == nil {
		return 0, errors.New("no valid meta page")
	}
	w.highMark = binary.NativeEndian.Uint64(best[40:48])
	if w.highMark < 2 || int64(w.highMark) > w.fileSize/w.pageSize {
		return 0, fmt.Errorf("meta high-water mark %d does not fit a file of %d pages (truncated?)", w.highMark, w.fileSize/w.pageSize)
	}
	w.freelistPage = binary.NativeEndian.Uint64(best[32:40])
	w.seen = make([]uint64, (w.highMark+63)/64)
	w.setSeen(0) // the meta pages
	w.setSeen(1)
	return binary.NativeEndian.Uint64(best[16:24]), nil
}

// readAt reads from the mapped file, or with ReadAt.
func (w *pageWalker) readAt(b []byte, off int64) (int, error) {
	if w.mem == nil {
		return w.f.ReadAt(b, off)
	}
	if off < 0 || off+int64(len(b)) > int64(len(w.mem)) {
		return 0, io.EOF
	}
	return copy(b, w.mem[off:]), nil
}

// metaAt reads a meta struct from the page at off and validates magic,
// version and FNV-64a checksum, as bbolt's Meta.Validate does.
func (w *pageWalker) metaAt(off int64) ([]byte, bool) {
	m := make([]byte, metaChecksumStart+8)
	if _, err := w.readAt(m, off+pageHeaderSize); err != nil {
		return nil, false
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumStart])
	ok := binary.NativeEndian.Uint32(m[0:4]) == boltMagic &&
		binary.NativeEndian.Uint32(m[4:8]) == boltVersion &&
		binary.NativeEndian.Uint64(m[metaChecksumStart:]) == h.Sum64()
	return m, ok
}

// page reads page id with its overflow pages, after checking that the span
// lies below the high-water mark and was not reached before. The returned
// slice is valid until the next call at the same depth.
func (w *pageWalker) page(id uint64, depth int) ([]byte, error) {
	if id < 2 || id >= w.highMark {
		return nil, fmt.Errorf("page %d outside the data pages 2…%d", id, w.highMark-1)
	}
	if w.isSeen(id) {
		return nil, fmt.Errorf("page %d is referenced twice (cycle or shared page)", id)
	}
	var hb [pageHeaderSize]byte
	head := hb[:]
	if _, err := w.readAt(head, int64(id)*w.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := binary.NativeEndian.Uint64(head[0:8]); got != id {
		return nil, fmt.Errorf("page %d carries id %d", id, got)
	}
	overflow := uint64(binary.NativeEndian.Uint32(head[12:16]))
	if id+overflow >= w.highMark {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the high-water mark %d", id, overflow, w.highMark)
	}
	for p := id; p <= id+overflow; p++ {
		if w.isSeen(p) {
			return nil, fmt.Errorf("page %d overlaps page %d, which is referenced elsewhere", id, p)
		}
		w.setSeen(p)
	}
	n := int(int64(1+overflow) * w.pageSize)
	if w.mem != nil {
		off := int64(id) * w.pageSize
		if off+int64(n) > int64(len(w.mem)) {
			return nil, fmt.Errorf("page %d: the file ends inside it (truncated)", id)
		}
		return w.mem[off : off+int64(n)], nil
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	if cap(w.bufs[depth]) < n {
		w.bufs[depth] = make([]byte, n)
	}
	buf := w.bufs[depth][:n]
	if _, err := w.f.ReadAt(buf, int64(id)*w.pageSize); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("page %d: the file ends inside it (truncated)", id)
		}
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

// tree walks the B+tree rooted at page id.
func (w *pageWalker) tree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: tree deeper than %d levels", id, maxTreeDepth)
	}
	p, err := w.page(id, depth)
	if err != nil {
		return err
	}
	return w.node(p, id, depth)
}

// node checks one branch or leaf page held in p (a page read from the
// file, or the inline page of a small bucket) and descends into it.
func (w *pageWalker) node(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return fmt.Errorf("page %d: truncated header", id)
	}
	flags := binary.NativeEndian.Uint16(p[8:10])
	count := int(binary.NativeEndian.Uint16(p[10:12]))
	if pageHeaderSize+count*elementSize > len(p) {
		return fmt.Errorf("page %d: %d elements do not fit the page", id, count)
	}
	// An ordinary leaf page (no nested bucket) in a quick walk: bounds only.
	skim := w.quick && flags == leafPageFlag
	for i := 0; skim && i < count; i++ {
		if binary.NativeEndian.Uint32(p[pageHeaderSize+i*elementSize:])&bucketLeafFlag != 0 {
			skim = false
		}
	}
	var prev []byte
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:][:elementSize]
		elemOff := pageHeaderSize + i*elementSize
		pos := int(binary.NativeEndian.Uint32(e[0:4]))
		if flags == leafPageFlag {
			pos = int(binary.NativeEndian.Uint32(e[4:8]))
		}
		var ksize, vsize int
		switch flags {
		case branchPageFlag:
			ksize = int(binary.NativeEndian.Uint32(e[4:8]))
		case leafPageFlag:
			ksize = int(binary.NativeEndian.Uint32(e[8:12]))
			vsize = int(binary.NativeEndian.Uint32(e[12:16]))
		default:
			return fmt.Errorf("page %d: type flags %#x, want branch or leaf", id, flags)
		}
		start := elemOff + pos
		if pos < 0 || ksize < 0 || vsize < 0 || start < 0 || start+ksize+vsize > len(p) || start+ksize+vsize < start {
			return fmt.Errorf("page %d: element %d points outside the page", id, i)
		}
		if skim {
			continue
		}
		key := p[start : start+ksize]
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			return fmt.Errorf("page %d: element %d: keys out of order", id, i)
		}
		prev = key
		switch {
		case flags == branchPageFlag:
			if err := w.tree(binary.NativeEndian.Uint64(e[8:16]), depth+1); err != nil {
				return err
			}
		case binary.NativeEndian.Uint32(e[0:4])&bucketLeafFlag != 0:
			if err := w.bucket(p[start+ksize:start+ksize+vsize], id, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// bucket descends into a nested bucket: a root page, or an inline page
// stored in the value itself when the root is 0.
func (w *pageWalker) bucket(v []byte, parent uint64, depth int) error {
	if len(v) < bucketHeaderSize {
		return fmt.Errorf("page %d: bucket value of %d bytes", parent, len(v))
	}
	root := binary.NativeEndian.Uint64(v[0:8])
	if root != 0 {
		return w.tree(root, depth+1)
	}
	if depth+1 > maxTreeDepth {
		return fmt.Errorf("page %d: buckets nested deeper than %d levels", parent, maxTreeDepth)
	}
	inline := v[bucketHeaderSize:]
	if len(inline) >= pageHeaderSize && binary.NativeEndian.Uint16(inline[8:10]) != leafPageFlag {
		return fmt.Errorf("page %d: inline bucket page is not a leaf", parent)
	}
	return w.node(inline, parent, depth+1)
}

// freelist checks the freelist page of the meta page against the pages the
// tree walk reached: every free page lies among the data pages, is listed
// once and is not in use, and every data page is in use or free.
func (w *pageWalker) freelist() error {
	if w.freelistPage == noFreelist {
		return nil // not synced (NoFreelistSync): bbolt rebuilds it from the tree
	}
	p, err := w.page(w.freelistPage, 0)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags := binary.NativeEndian.Uint16(p[8:10]); flags != freelistPageFlag {
		return fmt.Errorf("freelist page %d has type flags %#x", w.freelistPage, flags)
	}
	ids := p[pageHeaderSize:]
	count := uint64(binary.NativeEndian.Uint16(p[10:12]))
	if count == 0xFFFF { // the real count is the first element
		if len(ids) < 8 {
			return fmt.Errorf("freelist page %d: truncated count", w.freelistPage)
		}
		count = binary.NativeEndian.Uint64(ids[:8])
		ids = ids[8:]
	}
	if count > uint64(len(ids)/8) {
		return fmt.Errorf("freelist page %d: %d ids do not fit the page", w.freelistPage, count)
	}
	for i := range count {
		id := binary.NativeEndian.Uint64(ids[i*8:])
		if id < 2 || id >= w.highMark {
			return fmt.Errorf("freelist: free page %d outside the data pages 2…%d", id, w.highMark-1)
		}
		if w.isSeen(id) {
			return fmt.Errorf("freelist: page %d is free and in use (or listed twice)", id)
		}
		w.setSeen(id)
	}
	for id := uint64(2); id < w.highMark; id++ {
		if !w.isSeen(id) {
			return fmt.Errorf("page %d is neither in use nor free", id)
		}
	}
	return nil
}
