package ledger

import (
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// A hot copy is one read transaction of bbolt, and while it lasts bbolt
// reuses none of the pages the commits after it free: every commit writes
// to new pages at the end of the file. Streamed straight to a slow reader
// (a backup downloaded over a slow link), the transaction lasts as long as
// the download, and the file grows with every settlement meanwhile (a
// stalled download grew a 7 MB ledger to 1.26 GB over 2,400 settlements,
// stop 60 of issue 22), for good: bbolt never shrinks a file. So writeTo
// first copies the file into a spool beside it, at the speed of the local
// disk, ends the transaction, and only then streams the spool to w. The
// spool is unlinked as soon as it is created (where the platform allows):
// a crash leaves nothing behind.
//
// The spool needs as much free space as the file has bytes. Filling the
// disk with it would fail the commits running beside it (a journal write
// that fails halts the ledger: doc.go, "Durability"), so it is only taken
// when the file system has the file's size free twice over plus
// spoolMargin; otherwise (and wherever creating or writing the spool
// fails, a read-only directory, a platform without statfs, a failing
// disk the copy is meant to rescue) the copy is streamed within the
// transaction as before.

// spoolMargin is the free space a spool leaves beyond the file's size
// twice over: room for the commits that run while it is written.
const spoolMargin = 256 << 20

// writeTo writes a consistent copy of the whole bbolt file, as of one read
// transaction, to w (bbolt's Tx.WriteTo: the copy opens at that commit),
// through a spool when it can (above).
func (s *boltStore) writeTo(w io.Writer) (n int64, err error) {
	if sp := s.spool(); sp != nil {
		defer sp.close()
		if _, err := sp.f.Seek(0, io.SeekStart); err == nil {
			return io.Copy(w, plainReader{sp.f})
		}
	}
	return s.writeToInTx(w)
}

// writeToInTx is the copy streamed within its read transaction.
func (s *boltStore) writeToInTx(w io.Writer) (n int64, err error) {
	defer s.guard(&err)()
	err = s.db.View(func(tx *bolt.Tx) error {
		// Once durable; or, if the store halted first, the copy is
		// the operator's rescue of a failing disk: what bbolt holds.
		_ = s.durableSnapshot(tx)
		var werr error
		n, werr = tx.WriteTo(w)
		return werr
	})
	return n, err
}

// spoolFile is a spool holding a whole copy; close drops it.
type spoolFile struct {
	f    *os.File
	name string // removed at close when it could not be unlinked at once
}

func (sp *spoolFile) close() {
	_ = sp.f.Close()
	if sp.name != "" {
		_ = os.Remove(sp.name)
	}
}

// spool copies the file into a spool beside it within one read
// transaction, or returns nil when it should not or could not (see
// above); nothing is left on the disk then.
func (s *boltStore) spool() *spoolFile {
	if s.path == "" {
		return nil
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil
	}
	free, ok := freeBytes(filepath.Dir(s.path))
	if s.spoolFree != nil {
		free, ok = s.spoolFree()
	}
	if !ok || free < 2*uint64(fi.Size())+spoolMargin {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".backup-*")
	if err != nil {
		return nil
	}
	sp := &spoolFile{f: f}
	if os.Remove(f.Name()) != nil {
		sp.name = f.Name()
	}
	if _, err := s.writeToInTx(f); err != nil {
		sp.close()
		return nil
	}
	return sp
}

// plainReader hides an *os.File's ReadFrom/WriteTo so that io.Copy goes
// through a plain buffer: the destination's own ReadFrom (an HTTP
// response's) may take a file for sendfile, which ignores the write
// deadline a stalled download is cut by.
type plainReader struct{ r io.Reader }

func (o plainReader) Read(p []byte) (int, error) { return o.r.Read(p) }
