// Command soak is the crash soak of the real server: it runs the server
// binary under concurrent clients posting settlements, SIGKILLs it at
// random points, restarts it, and at the end checks that every settlement
// the server acknowledged (201 or 200) is in the ledger exactly once and
// that ledger.Check passes on the file (the server's check command). It is
// not part of go test ./...; .ci/run runs it with 10 kills.
//
//	go build -o /tmp/fiscal402-server ./examples/server
//	go run ./examples/soak -server /tmp/fiscal402-server -kills 100
//
// A request whose connection the kill cut has an unknown outcome; soak
// posts it again after the restart (the same payment is idempotent: 200
// with the existing record, or 201 if the cut came before the commit), so
// it becomes acknowledged too. It prints one summary line and exits 1 when
// an acknowledged settlement is missing or duplicated, or the check fails.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const demoKey = "sk_test_soak_0123456789abcdef"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type soak struct {
	bin, data string
	client    *http.Client

	mu      sync.Mutex
	acked   map[int]string // settlement number → record id
	unknown map[int]bool   // posted, outcome unknown (the connection was cut)
	refused int            // 4xx answers (none expected)
	next    atomic.Int64
}

func run() error {
	bin := flag.String("server", "", "the server binary (go build -o ... ./examples/server); required")
	data := flag.String("data", "", "data directory (default: a new temporary one, removed when all is well)")
	kills := flag.Int("kills", 100, "how many times to SIGKILL and restart the server")
	clients := flag.Int("clients", 32, "concurrent clients posting settlements")
	minRun := flag.Duration("min-run", 100*time.Millisecond, "shortest time the server runs under load before a kill")
	maxRun := flag.Duration("max-run", 700*time.Millisecond, "longest time the server runs under load before a kill")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the random kill points")
	flag.Parse()
	if *bin == "" {
		return errors.New("-server is required")
	}
	if *maxRun < *minRun {
		return errors.New("-max-run is shorter than -min-run")
	}
	dir := *data
	if dir == "" {
		d, err := os.MkdirTemp("", "fiscal402-soak")
		if err != nil {
			return err
		}
		dir = d
	}
	s := &soak{bin: *bin, data: dir, acked: map[int]string{}, unknown: map[int]bool{},
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *clients}}}
	rng := rand.New(rand.NewPCG(*seed, 0x50a4))
	start := time.Now()
	for k := 0; k < *kills; k++ {
		p, err := s.start()
		if err != nil {
			return fmt.Errorf("start %d: %w", k+1, err)
		}
		s.retryUnknown(p.base)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range *clients {
			wg.Add(1)
			go func() { defer wg.Done(); s.load(ctx, p.base) }()
		}
		time.Sleep(*minRun + time.Duration(rng.Int64N(int64(*maxRun-*minRun)+1)))
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		cancel()
		wg.Wait()
	}
	// The last start: settle what is still unknown, then read everything.
	p, err := s.start()
	if err != nil {
		return fmt.Errorf("final start: %w", err)
	}
	s.retryUnknown(p.base)
	found, dups, err := s.readAll(p.base)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if err != nil {
		return err
	}
	missing := 0
	for n, id := range s.acked {
		if found[crashTx(n)] == 0 {
			missing++
			if missing <= 5 {
				fmt.Fprintf(os.Stderr, "soak: acknowledged settlement %d (%s) is missing\n", n, id)
			}
		}
	}
	out, checkErr := exec.Command(s.bin, "check", "-data", dir).CombinedOutput()
	fmt.Printf("soak: %d kills, %d clients, %s: acknowledged %d, found %d, missing %d, duplicates %d, still unknown %d, refused %d; check: %s\n",
		*kills, *clients, time.Since(start).Round(time.Second), len(s.acked), len(found), missing, dups, len(s.unknown), s.refused, strings.TrimSpace(string(out)))
	switch {
	case checkErr != nil:
		return fmt.Errorf("the ledger check failed on %s: %v", dir, checkErr)
	case missing > 0 || dups > 0 || len(s.unknown) > 0 || s.refused > 0:
		return fmt.Errorf("data directory kept for inspection: %s", dir)
	}
	if *data == "" {
		_ = os.RemoveAll(dir)
	}
	return nil
}

type proc struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// start runs the server on the data directory and waits until it listens.
func (s *soak) start() (*proc, error) {
	cmd := exec.Command(s.bin, "-data", s.data, "-listen", "127.0.0.1:0", "-rate-limit", "0", "-auth-fail-rate", "0",
		"-fx-refresh=false", "-log-level", "error")
	cmd.Env = append(os.Environ(), "FISCAL402_DEMO_KEY="+demoKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
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
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("the server exited: %s", stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-p.done
		return nil, errors.New("the server did not listen within 60 s")
	}
}

// load posts new settlements until ctx ends.
func (s *soak) load(ctx context.Context, base string) {
	for ctx.Err() == nil {
		n := int(s.next.Add(1))
		s.post(base, n)
	}
}

// post sends settlement n and files its outcome.
func (s *soak) post(base string, n int) {
	status, body := s.send(base, n)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case status == 201 || status == 200:
		var rec struct{ ID string }
		_ = json.Unmarshal(body, &rec)
		s.acked[n] = rec.ID
		delete(s.unknown, n)
	case status == 0 || status >= 500:
		s.unknown[n] = true // cut by the kill (or refused while it happened): ask again
	default:
		s.refused++
		fmt.Fprintf(os.Stderr, "soak: settlement %d refused: %d %.300s\n", n, status, body)
	}
}

// retryUnknown posts again every settlement whose outcome is unknown.
func (s *soak) retryUnknown(base string) {
	s.mu.Lock()
	var ns []int
	for n := range s.unknown {
		ns = append(ns, n)
	}
	s.mu.Unlock()
	for _, n := range ns {
		s.post(base, n)
	}
}

func (s *soak) send(base string, n int) (int, []byte) {
	body := fmt.Sprintf(`{"amountUsdc":"%d.%02d","txHash":"%s","timestamp":"2026-04-10T14:30:00Z",`+
		`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",`+
		`"network":"eip155:8453","consumerCountry":"%s"}`, 1+n%500, n%100, crashTx(n), []string{"DE", "FR", "IT", "ES", "NL", "PL"}[n%6])
	req, _ := http.NewRequest("POST", base+"/settlements", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", demoKey)
	resp, err := s.client.Do(req)
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

// readAll lists every settlement and counts each transaction hash.
func (s *soak) readAll(base string) (map[string]int, int, error) {
	found := map[string]int{}
	dups := 0
	cursor := ""
	for {
		url := base + "/settlements?limit=200"
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Service-Key", demoKey)
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		var page struct {
			Data []struct {
				Settlement struct {
					TxHash string `json:"txHash"`
				} `json:"settlement"`
			} `json:"data"`
			HasMore    bool   `json:"has_more"`
			NextCursor string `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return nil, 0, fmt.Errorf("list: %d %v", resp.StatusCode, err)
		}
		for _, r := range page.Data {
			if found[r.Settlement.TxHash]++; found[r.Settlement.TxHash] == 2 {
				dups++
			}
		}
		if !page.HasMore {
			return found, dups, nil
		}
		cursor = page.NextCursor
	}
}

// crashTx is settlement n's transaction hash.
func crashTx(n int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	sum := sha256.Sum256(b[:])
	return "0x" + hex.EncodeToString(sum[:])
}
