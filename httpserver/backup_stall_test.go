package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/httpserver"
)

// chunkedBackup writes size bytes in 32 KB writes, as a bbolt copy does,
// and says on done when its WriteTo returned: the moment the ledger's
// read transaction ends.
type chunkedBackup struct {
	size int
	done chan error
}

func (b chunkedBackup) WriteTo(w io.Writer) (int64, error) {
	chunk := []byte(strings.Repeat("page", 8192))
	var n int64
	for n < int64(b.size) {
		m, err := w.Write(chunk)
		n += int64(m)
		if err != nil {
			b.done <- err
			return n, err
		}
	}
	b.done <- nil
	return n, nil
}

// TestBackupCutWhenTheClientStalls: a backup download whose client stops
// taking bytes is cut after Options.BackupStall, and the copy (one read
// transaction of the ledger, which keeps bbolt from reusing freed pages
// while it lasts) ends with it, instead of waiting for the client for ever
// while the ledger file grows with every commit.
func TestBackupCutWhenTheClientStalls(t *testing.T) {
	done := make(chan error, 1)
	// Far more than the socket buffers of both ends hold.
	f := newOpsFixture(t, httpserver.Options{Backup: chunkedBackup{size: 512 << 20, done: done}, BackupStall: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/admin/backup HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", operatorKey)
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("status line %q: %v", status, err)
	}
	// The client takes nothing more.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the whole copy was written to a client that took nothing")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy still runs 20 s after its client stopped taking bytes (BackupStall 300 ms)")
	}
	// A client that reads goes on past BackupStall as long as it reads.
	done2 := make(chan error, 1)
	g := newOpsFixture(t, httpserver.Options{Backup: chunkedBackup{size: 8 << 20, done: done2}, BackupStall: 300 * time.Millisecond})
	r := g.do("GET", "/v1/admin/backup", "", nil, "Authorization", "Bearer "+operatorKey)
	if r.status != 200 || len(r.body) != 8<<20 {
		t.Fatalf("a reading client: %d, %d bytes", r.status, len(r.body))
	}
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
}
