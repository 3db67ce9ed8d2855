package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const crashDirEnv = "FISCAL402_LEDGER_CRASH_DIR"

// TestKill9KeepsAcknowledgedAppends runs appenders in a child process, kills
// it with SIGKILL mid-stream several times, and checks that every append the
// child acknowledged (printed after Append returned) is in the file at the
// index it was given, and that the file passes Check. This exercises the
// atomicity of bbolt commits and the rule that an answer comes only after
// the commit; power loss (the fsync half) cannot be simulated here.
func TestKill9KeepsAcknowledgedAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	dir := t.TempDir()
	acked := map[string]int64{}
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Helper$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, "FISCAL402_LEDGER_CRASH_ROUND="+strconv.Itoa(round))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() {
			id, index, ok := parseAck(sc.Text())
			if !ok {
				continue
			}
			acked[id] = index
			if n++; n == 150 {
				if err := cmd.Process.Kill(); err != nil { // SIGKILL
					t.Fatal(err)
				}
			}
		}
		// Acks printed before the kill are still in the pipe and were read.
		err = cmd.Wait()
		if n < 150 {
			t.Fatalf("round %d: child ended after %d acks: %v", round, n, err)
		}
		t.Logf("round %d: %d acks before and around SIGKILL", round, n)
	}
	_, v, _ := testKey(t, testOrigin, "log key 1")
	path := filepath.Join(dir, "ledger.db")
	// The file alone is not checked: the journal holds what the killed
	// writer did not checkpoint into it, so Check sends the auditor to
	// open it for writing first (a restart of the server does).
	if err := Check(path, v); !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("Check after kill -9, before a writer reopened the file: %v, want ErrNeedsRecovery", err)
	}
	if err := reopen(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("Check after kill -9 and a reopening: %v", err)
	}
	l := reopen(t, path)
	for id, index := range acked {
		e, err := l.Entry(id)
		if err != nil || e.Index != index {
			t.Fatalf("acknowledged %s at %d: after kill -9 Entry = %+v, %v", id, index, e, err)
		}
		// Its posting, whether in its index bucket or still in the
		// posting log (the goroutines' keys interleave, so most go behind).
		if got, err := l.Lookup("by_name", []byte(id)); err != nil || got != id {
			t.Fatalf("acknowledged %s: after kill -9 its posting names %q, %v", id, got, err)
		}
	}
	hits, err := l.Scan("by_name", []byte("r"), nil, false, 0)
	if err != nil || int64(len(hits)) != l.Size() {
		t.Fatalf("after kill -9 the postings scan %d of %d entries: %v", len(hits), l.Size(), err)
	}
	// The sequence drawn by the prebuilt appends has no gap and no number
	// beyond the ones written.
	n, err := l.Sequence("seq")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= n; i++ {
		name, err := l.Get("numbers", u64(i))
		if err != nil {
			t.Fatalf("sequence number %d of %d: %v", i, n, err)
		}
		if _, err := l.Entry(string(name)); err != nil {
			t.Fatalf("number %d names %q: %v", i, name, err)
		}
	}
	t.Logf("%d acknowledged appends survived; log size %d; sequence at %d", len(acked), l.Size(), n)
}

func parseAck(line string) (string, int64, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ACK" {
		return "", 0, false
	}
	i, err := strconv.ParseInt(f[2], 10, 64)
	return f[1], i, err == nil
}

// TestKill9Helper is the child process of TestKill9KeepsAcknowledgedAppends.
func TestKill9Helper(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child process of TestKill9KeepsAcknowledgedAppends")
	}
	round := os.Getenv("FISCAL402_LEDGER_CRASH_ROUND")
	s, _, _ := testKey(t, testOrigin, "log key 1")
	l, err := Open(filepath.Join(dir, "ledger.db"), Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // never outlive a dead parent for long
	defer cancel()
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				app := Append{Claims: []Claim{{Space: "payment", Key: name}}, Build: simpleEntry(name)}
				if g%2 == 0 { // half the appends prebuilt, with a hook
					app.Build = nil
					app.Entry = prebuiltEntry(name)
					app.Sequences = []string{"seq"}
					app.Hook = func(h *Hook) error {
						n, err := h.Sequence("seq")
						if err != nil {
							return err
						}
						return h.Put("numbers", u64(n), []byte(name))
					}
				}
				a, err := l.Append(ctx, app)
				if err != nil {
					return
				}
				mu.Lock()
				fmt.Fprintf(w, "ACK %s %d\n", a.ID, a.Index)
				w.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
