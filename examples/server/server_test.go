package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// These tests run the real server binary, as a user would, and kill it with
// SIGKILL: an acknowledged settlement (a 201) must survive anything.

const demoKey = "sk_test_crash_0123456789"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// serverBinary builds ./examples/server once per test run, or, when
// FISCAL402_SERVER_BIN is set, runs that binary instead: bench/sidebyside.sh
// drives the servers of two commits with the same load generator.
func serverBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("FISCAL402_SERVER_BIN"); bin != "" {
			binPath, buildErr = filepath.Abs(bin)
			return
		}
		dir, err := os.MkdirTemp("", "fiscal402-server-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type serverProc struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// startServer starts the binary on dataDir on a free port, with extra
// flags, and waits until it says where it listens.
func startServer(t testing.TB, dataDir string, extra ...string) *serverProc {
	t.Helper()
	return startServerWith(t, dataDir, nil, io.Discard, extra...)
}

// startServerWith is startServer with more environment variables and the
// server's stderr (its log) written to stderr.
func startServerWith(t testing.TB, dataDir string, env []string, stderr io.Writer, extra ...string) *serverProc {
	t.Helper()
	// -rate-limit 0: the crash tests post as fast as 8 clients can.
	cmd := exec.Command(serverBinary(t), append([]string{"-data", dataDir, "-listen", "127.0.0.1:0", "-rate-limit", "0", "-fx-refresh=false"}, extra...)...)
	cmd.Env = append(append(os.Environ(), "FISCAL402_DEMO_KEY="+demoKey), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "fiscal402 listening on "); ok {
				ready <- strings.Fields(rest)[0]
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case p.base = <-ready:
	case <-p.done:
		t.Fatal("server exited before listening")
	case <-time.After(20 * time.Second):
		p.kill()
		t.Fatal("server did not start within 20s")
	}
	t.Cleanup(p.kill)
	return p
}

func (p *serverProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends the server cleanly (SIGTERM: in-flight requests finish, the
// ledger closes, a -cpuprofile is written), or kills it after 30 s.
func (p *serverProc) stop(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if ps := p.cmd.ProcessState; ps != nil && !ps.Success() {
			t.Errorf("server stopped with %v", ps)
		}
	case <-time.After(30 * time.Second):
		t.Error("server did not stop within 30s of SIGTERM")
		p.kill()
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

func (p *serverProc) get(t *testing.T, path string, auth bool) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	if auth {
		req.Header.Set("X-Service-Key", demoKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// post sends one settlement; it returns the status (0 when the connection
// failed, i.e. the outcome is unknown) and the body.
func (p *serverProc) post(n int) (int, []byte) {
	req, _ := http.NewRequest("POST", p.base+"/settlements", strings.NewReader(settlementBody(n)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", demoKey)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	return resp.StatusCode, raw
}

// settlementBody is the JSON body of settlement n: its own transaction
// (crashTx), amounts and consumer countries that vary with n.
func settlementBody(n int) string {
	return fmt.Sprintf(`{"amountUsdc":"%d.%02d","txHash":"%s","timestamp":"2026-04-10T14:30:00Z",`+
		`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",`+
		`"network":"eip155:8453","consumerCountry":"%s"}`, 1+n%500, n%100, crashTx(n), []string{"DE", "FR", "IT", "ES", "NL", "PL"}[n%6])
}

func crashTx(n int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	sum := sha256.Sum256(b[:])
	return "0x" + hex.EncodeToString(sum[:])
}

// checkpointSize parses a C2SP checkpoint's tree size.
func checkpointSize(t *testing.T, cp []byte) int64 {
	t.Helper()
	lines := strings.SplitN(string(cp), "\n", 3)
	var n int64
	if len(lines) < 2 {
		t.Fatalf("not a checkpoint: %q", cp)
	}
	if _, err := fmt.Sscan(lines[1], &n); err != nil {
		t.Fatalf("checkpoint size %q: %v", lines[1], err)
	}
	return n
}

// verifyAcknowledged checks every acknowledged record: the record reads back
// byte for byte, its UBL has the recorded SHA-256, its receipt verifies
// offline, and re-posting it is answered with the existing record (200),
// never a second one.
func verifyAcknowledged(t *testing.T, p *serverProc, acked map[int][]byte) {
	t.Helper()
	_, jwks := p.get(t, "/.well-known/jwks.json", false)
	_, vkey := p.get(t, "/.well-known/log-key", false)
	logKey := strings.TrimSpace(string(vkey))
	for n, want := range acked {
		var rec struct {
			ID      string
			Invoice struct{ UblSha256 string }
		}
		if err := json.Unmarshal(want, &rec); err != nil {
			t.Fatal(err)
		}
		status, got := p.get(t, "/settlements/"+rec.ID, true)
		if status != 200 || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Fatalf("acknowledged settlement %d (%s) lost or changed: status %d", n, rec.ID, status)
		}
		status, ubl := p.get(t, "/settlements/"+rec.ID+"/ubl", true)
		sum := sha256.Sum256(ubl)
		if status != 200 || hex.EncodeToString(sum[:]) != rec.Invoice.UblSha256 {
			t.Fatalf("UBL of %s: status %d, sha256 %x, want %s", rec.ID, status, sum, rec.Invoice.UblSha256)
		}
		status, rc := p.get(t, "/v1/receipts/rcpt_"+rec.ID, false)
		if status != 200 {
			t.Fatalf("receipt of %s: %d", rec.ID, status)
		}
		if _, err := receipt.Verify(rc, jwks, logKey); err != nil {
			t.Fatalf("receipt of %s does not verify: %v", rec.ID, err)
		}
	}
}

// verifyGrowth checks that the log after a restart is consistent with a
// checkpoint seen before the kill: the server proves it only grew.
func verifyGrowth(t *testing.T, p *serverProc, before []byte) []byte {
	t.Helper()
	_, after := p.get(t, "/v1/log/checkpoint", false)
	_, vkey := p.get(t, "/.well-known/log-key", false)
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	oldCP, err := ledger.ParseCheckpoint(before, v)
	if err != nil {
		t.Fatalf("checkpoint before the kill: %v", err)
	}
	newCP, err := ledger.ParseCheckpoint(after, v)
	if err != nil {
		t.Fatalf("checkpoint after the restart: %v", err)
	}
	if newCP.Size < oldCP.Size {
		t.Fatalf("the log shrank from %d to %d", oldCP.Size, newCP.Size)
	}
	if oldCP.Size > 0 && newCP.Size > oldCP.Size {
		status, raw := p.get(t, fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", oldCP.Size, newCP.Size), false)
		if status != 200 {
			t.Fatalf("consistency proof: %d %s", status, raw)
		}
		var proof struct{ Hashes []tlog.Hash }
		if err := json.Unmarshal(raw, &proof); err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(proof.Hashes, newCP.Size, newCP.Root, oldCP.Size, oldCP.Root); err != nil {
			t.Fatalf("log %d → %d is not an extension: %v", oldCP.Size, newCP.Size, err)
		}
	} else if oldCP.Size == newCP.Size && oldCP.Root != newCP.Root {
		t.Fatalf("same size %d, different roots", oldCP.Size)
	}
	return after
}

// TestKillRestartKeepsAcknowledged: post settlements, SIGKILL the server,
// restart it, and find every acknowledged record, UBL and receipt intact.
func TestKillRestartKeepsAcknowledged(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	acked := map[int][]byte{}
	for n := 0; n < 25; n++ {
		status, body := p.post(n)
		if status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
		acked[n] = body
	}
	_, cp := p.get(t, "/v1/log/checkpoint", false)
	p.kill()
	p = startServer(t, dir)
	verifyAcknowledged(t, p, acked)
	verifyGrowth(t, p, cp)
	for n := range acked {
		if status, _ := p.post(n); status != 200 {
			t.Fatalf("re-post of acknowledged %d after restart: %d, want 200 (existing)", n, status)
		}
	}
}

// TestCrashUnderLoad kills the server with SIGKILL at random moments while
// concurrent clients post settlements, 20 times. After every restart all
// acknowledged records are present and intact, none is duplicated, the log
// is consistent with the last checkpoint seen before the kill, and at the
// end ledger.Check re-verifies the whole file.
func TestCrashUnderLoad(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[int][]byte{}
	fresh := map[int][]byte{} // acknowledged since the last kill: checked after each restart
	var next, unknown int
	var lastCP []byte // the last checkpoint seen before a kill
	for round := 0; round < rounds; round++ {
		p := startServer(t, dir)
		if round > 0 {
			verifyAcknowledged(t, p, fresh)
			fresh = map[int][]byte{}
			verifyGrowth(t, p, lastCP)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					mu.Lock()
					n := next
					next++
					mu.Unlock()
					status, body := p.post(n)
					mu.Lock()
					switch status {
					case 201:
						acked[n] = body
						fresh[n] = body
					case 0:
						unknown++
					default:
						if ctx.Err() == nil {
							t.Errorf("post %d: status %d %s", n, status, body)
						}
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		_, cp := p.get(t, "/v1/log/checkpoint", false)
		lastCP = cp
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		cancel() // clients finish the request in flight, which the kill may cut
		p.kill()
		wg.Wait()
	}
	p := startServer(t, dir)
	verifyAcknowledged(t, p, acked)
	lastCP = verifyGrowth(t, p, lastCP)
	size := checkpointSize(t, lastCP)
	if size < int64(len(acked)) {
		t.Fatalf("log has %d entries but %d settlements were acknowledged", size, len(acked))
	}
	// Every entry is a distinct settlement: the acknowledged ones plus at
	// most the ones whose answer the kill swallowed.
	if size > int64(len(acked)+unknown) {
		t.Fatalf("log has %d entries, more than %d acknowledged + %d unknown: a duplicate", size, len(acked), unknown)
	}
	// Invoice numbers stay gap-free across the kills: the processed
	// settlements carry F402-<year>-000001 … -00000n, each once.
	invoices := invoiceNumbers(t, p)
	slices.Sort(invoices)
	for i, id := range invoices {
		if want := fmt.Sprintf("F402-2026-%06d", i+1); id != want {
			t.Fatalf("invoice numbers after %d kills: position %d is %s, want %s (of %d)", rounds, i, id, want, len(invoices))
		}
	}
	_, vkey := p.get(t, "/.well-known/log-key", false)
	// Stopped cleanly: the file alone, after the restarts' replays of the
	// journal, is what ledger.Check reads (a killed writer's file needs
	// the next writer's replay first: ErrNeedsRecovery).
	p.stop(t)
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Check(filepath.Join(dir, "ledger.db"), v); err != nil {
		t.Fatalf("ledger.Check after %d kills: %v", rounds, err)
	}
	t.Logf("%d SIGKILLs under 8 concurrent clients: %d settlements acknowledged and intact, %d answers lost to the kill, %d log entries, invoices 1..%d without a gap, ledger.Check clean",
		rounds, len(acked), unknown, size, len(invoices))
}

// invoiceNumbers lists the invoice numbers of every settlement of the demo
// account, following the list's cursor.
func invoiceNumbers(t *testing.T, p *serverProc) []string {
	t.Helper()
	var out []string
	cursor := ""
	for {
		path := "/settlements?limit=200"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, body := p.get(t, path, true)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var page struct {
			Data []struct {
				Invoice *struct {
					ID string `json:"id"`
				} `json:"invoice"`
			} `json:"data"`
			HasMore    bool   `json:"has_more"`
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Data {
			if r.Invoice != nil {
				out = append(out, r.Invoice.ID)
			}
		}
		if !page.HasMore {
			return out
		}
		cursor = page.NextCursor
	}
}
