package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// blockedWriter takes its first Write only after release is closed,
// saying on started when it is waiting.
type blockedWriter struct {
	buf     bytes.Buffer
	started chan struct{}
	release chan struct{}
	once    bool
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	if !b.once {
		b.once = true
		close(b.started)
		<-b.release
	}
	return b.buf.Write(p)
}

// TestBackupHoldsNoTransactionWhileItsReaderWaits: a hot copy whose reader
// is slow (a download over a slow link) no longer holds bbolt's read
// transaction while it waits, so the commits meanwhile reuse freed pages
// instead of growing the file (it is spooled beside the file first); the
// copy is the ledger as of the call, and opens and checks as such. Where
// the spool cannot be taken (here: too little free space), the copy is
// streamed within its transaction as before, and is the same ledger.
func TestBackupHoldsNoTransactionWhileItsReaderWaits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spool bool
	}{{"spooled", true}, {"no room for a spool", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ledger.db")
			l := reopen(t, path)
			for i := range 20 {
				mustAppend(t, l, fmt.Sprintf("e%d", i))
			}
			bs := l.store.(*boltStore)
			if !tc.spool {
				bs.spoolFree = func() (uint64, bool) { return 1 << 20, true }
			}
			// The checkpoint's own hold ends within 50 ms of the last commit.
			time.Sleep(200 * time.Millisecond)
			baseline := bs.db.Stats().OpenTxN
			w := &blockedWriter{started: make(chan struct{}), release: make(chan struct{})}
			done := make(chan error, 1)
			go func() { _, err := l.WriteTo(w); done <- err }()
			select {
			case <-w.started:
			case <-time.After(30 * time.Second):
				t.Fatal("the copy never wrote")
			}
			during := bs.db.Stats().OpenTxN
			for i := range 5 {
				mustAppend(t, l, fmt.Sprintf("later%d", i))
			}
			close(w.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if tc.spool && during != baseline {
				t.Fatalf("%d read transactions open while the copy's reader waits, %d before: the copy holds one", during, baseline)
			}
			if !tc.spool && during != baseline+1 {
				t.Fatalf("streamed within its transaction: %d open while its reader waits, %d before", during, baseline)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if filepath.Ext(e.Name()) != ".db" && !bytes.HasPrefix([]byte(e.Name()), []byte("ledger.db.journal")) {
					t.Fatalf("the copy left %s beside the ledger", e.Name())
				}
			}
			out := filepath.Join(t.TempDir(), "copy.db")
			if err := os.WriteFile(out, w.buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			_, v, _ := testKey(t, testOrigin, "log key 1")
			ro, err := Open(out, Options{Origin: testOrigin, Verifier: v})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			if ro.Size() != 20 {
				t.Fatalf("the copy opened at size %d, want 20 (the ledger as of the call)", ro.Size())
			}
			if err := Check(out, v); err != nil {
				t.Fatalf("Check of the copy: %v", err)
			}
		})
	}
}
