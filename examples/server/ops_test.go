package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ledger"
)

// These tests run the operations side of the real server binary: probes,
// metrics, the request log, backups, accounts and retention.

// syncBuffer collects a server's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// request sends one request; headers are name, value pairs.
func (p *serverProc) request(t testing.TB, method, path string, body []byte, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

// runCommand runs the binary with args (a subcommand) and returns its
// stdout and stderr.
func runCommand(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(serverBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func readOperatorKey(t *testing.T, dir string) string {
	t.Helper()
	key, err := operatorKeyIn(dir)
	if err != nil {
		t.Fatalf("the server made no operator key: %v", err)
	}
	return key
}

// operatorKeyIn is the operator key the server keeps in its data directory.
func operatorKeyIn(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "keys", "operator.key"))
	return strings.TrimSpace(string(raw)), err
}

// scrape reads /metrics with the operator key and parses it with the
// Prometheus text parser.
func (p *serverProc) scrape(t *testing.T, opKey string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := p.metrics(t, opKey)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// metrics is scrape that returns its failure (a refused key, an exposition
// that does not parse) instead of ending the test.
func (p *serverProc) metrics(t testing.TB, opKey string) (map[string]*dto.MetricFamily, error) {
	t.Helper()
	status, _, raw := p.request(t, "GET", "/metrics", nil, "Authorization", "Bearer "+opKey)
	if status != 200 {
		return nil, fmt.Errorf("GET /metrics: %d %s", status, raw)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the exposition does not parse: %w", err)
	}
	return fams, nil
}

// sample is the value of the sample of name whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		for k, v := range want {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == k && lp.GetValue() == v
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// freshRates writes a date,usd_per_eur file with a rate for each of the
// last ten weekdays before today, so that the newest rate is at most a
// long weekend old. The values are synthetic (only their dates matter to
// the readiness check); the dates lie after the embedded ECB series, so
// they never contradict a published value.
func freshRates(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("date,usd_per_eur\n")
	day := time.Now().UTC().Truncate(24 * time.Hour)
	for n := 0; n < 10; {
		day = day.AddDate(0, 0, -1)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		fmt.Fprintf(&b, "%s,1.1%03d\n", day.Format("2006-01-02"), n)
		n++
	}
	path := filepath.Join(t.TempDir(), "rates.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readiness(t *testing.T, p *serverProc) (int, httpserver.Readiness) {
	t.Helper()
	status, _, raw := p.request(t, "GET", "/readyz", nil)
	var rd httpserver.Readiness
	if err := json.Unmarshal(raw, &rd); err != nil {
		t.Fatalf("readyz body %q: %v", raw, err)
	}
	return status, rd
}

// TestProbesMetricsAndLog runs the binary with fresh rates and JSON logs:
// /healthz and /readyz answer 200; /metrics needs the operator key and
// parses with the Prometheus text parser; a settlement moves the
// settlements counter; its request line is JSON with route, status,
// account and duration, and no log line holds a key or the buyer's
// personal data.
func TestProbesMetricsAndLog(t *testing.T) {
	dir := t.TempDir()
	logs := &syncBuffer{}
	p := startServerWith(t, dir, nil, logs, "-fx-file", freshRates(t), "-log-format", "json", "-vat-rates", coveringRateTable(t))
	opKey := readOperatorKey(t, dir)
	if status, _, _ := p.request(t, "GET", "/healthz", nil); status != 200 {
		t.Fatalf("healthz: %d", status)
	}
	if status, rd := readiness(t, p); status != 200 || rd.Status != "ready" {
		t.Fatalf("readyz with fresh rates: %d %+v", status, rd)
	}
	if status, _, _ := p.request(t, "GET", "/metrics", nil); status != 401 {
		t.Fatalf("metrics without the operator key: %d", status)
	}
	if status, _, _ := p.request(t, "GET", "/metrics", nil, "Authorization", "Bearer "+demoKey); status != 401 {
		t.Fatalf("metrics with an account key: %d", status)
	}
	created := map[string]string{"source": "settlements", "outcome": "created", "status": "PROCESSED"}
	before, _ := sample(p.scrape(t, opKey), "fiscal402_settlements_total", created)

	body := `{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z",` +
		`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",` +
		`"network":"eip155:8453","consumerCountry":"DE","consumerName":"Erika Mustermann","consumerPostalCode":"80331"}`
	status, _, raw := p.request(t, "POST", "/settlements", []byte(body), "X-Service-Key", demoKey, "Idempotency-Key", "order-private-1001", "X-Request-Id", "trace-ops-1")
	if status != 201 {
		t.Fatalf("settle: %d %s", status, raw)
	}
	after, ok := sample(p.scrape(t, opKey), "fiscal402_settlements_total", created)
	if !ok || after != before+1 {
		t.Fatalf("fiscal402_settlements_total%v went from %v to %v", created, before, after)
	}

	var line map[string]any
	for attempt := 0; line == nil && attempt < 50; attempt++ {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("a log line is not JSON: %v: %s", err, sc.Bytes())
			}
			if m["msg"] == "request" && m["request_id"] == "trace-ops-1" {
				line = m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if line == nil {
		t.Fatalf("no request line for trace-ops-1 in:\n%s", logs.String())
	}
	for k, want := range map[string]any{"route": "POST /settlements", "status": 201.0, "account": "acct_demo", "method": "POST"} {
		if line[k] != want {
			t.Errorf("request line %s = %v, want %v", k, line[k], want)
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d <= 0 {
		t.Errorf("duration_ms = %v", line["duration_ms"])
	}
	all := strings.ToLower(logs.String())
	for _, secret := range []string{demoKey, opKey, "erika", "mustermann", "80331", "order-private-1001",
		"70997970c51812dc3a010c7d01b50e0d17dc79c8", "3c44cdddb6a900fa2b585dd299e03d12fa4293bc"} {
		if strings.Contains(all, strings.ToLower(secret)) {
			t.Errorf("the log holds %q", secret)
		}
	}
	raw, _ = json.Marshal(line)
	t.Logf("request line: %s", raw)
}

// TestReadyzStaleRates: with the embedded ECB series (it ends on
// 2026-04-13), the server is not ready, and /readyz names the fx check;
// -ready-fx-max-age 0 turns the check off.
func TestReadyzStaleRates(t *testing.T) {
	p := startServer(t, t.TempDir())
	status, rd := readiness(t, p)
	var fx httpserver.CheckState
	for _, c := range rd.Checks {
		if c.Name == "fx" {
			fx = c
		}
	}
	if status != 503 || rd.Status != "not_ready" || fx.OK || !strings.Contains(fx.Detail, "2026-04-13") {
		t.Fatalf("readyz with stale rates: %d %+v", status, rd)
	}
	if status, _, _ := p.request(t, "GET", "/healthz", nil); status != 200 {
		t.Errorf("healthz: %d", status)
	}
	q := startServer(t, t.TempDir(), "-ready-fx-max-age", "0", "-vat-rates", coveringRateTable(t))
	if status, rd := readiness(t, q); status != 200 {
		t.Fatalf("readyz with the fx check off: %d %+v", status, rd)
	}
}

// TestHotBackupAndRestore takes a hot backup with the backup command while
// 16 clients post settlements, restores it into a new data directory and
// proves it: ledger.Check passes on the copy, and the log root of the copy
// at its size is the root the live log had at that size (a consistency
// proof from the copy's checkpoint to the live one verifies).
func TestHotBackupAndRestore(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	if !httpserver.LedgerCanBackup() {
		// What this build does: the endpoint says why, and the command
		// fails without writing a file.
		opKey := readOperatorKey(t, dir)
		status, _, raw := p.request(t, "GET", "/v1/admin/backup", nil, "Authorization", "Bearer "+opKey)
		if status != 501 || !strings.Contains(string(raw), "NOT_IMPLEMENTED") {
			t.Fatalf("backup without ledger support: %d %s", status, raw)
		}
		out := filepath.Join(t.TempDir(), "copy.db")
		_, stderr, err := runCommand(t, nil, "backup", "-server", p.base, "-data", dir, "-o", out)
		if err == nil || !strings.Contains(stderr, "501") {
			t.Fatalf("backup command without ledger support: %v %s", err, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("a file was written: %v", err)
		}
		t.Skip("ledger.Ledger has no WriteTo(io.Writer) (int64, error) yet (httpserver.LedgerBackup): the hot backup runs once the ledger writes bbolt's Tx.WriteTo")
	}

	// 16 writers post until the backup is done.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	next, acked := 0, 0
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if status, _ := p.post(n); status == 201 {
					mu.Lock()
					acked++
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // writers under way
	out := filepath.Join(t.TempDir(), "backup.db")
	start := time.Now()
	_, stderr, err := runCommand(t, nil, "backup", "-server", p.base, "-data", dir, "-o", out)
	took := time.Since(start)
	time.Sleep(200 * time.Millisecond) // writers go on after the copy
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("backup command: %v\n%s", err, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	_, liveCP := p.get(t, "/v1/log/checkpoint", false)
	_, vkeyRaw := p.get(t, "/.well-known/log-key", false)
	vkey := strings.TrimSpace(string(vkeyRaw))

	// Restore: a new data directory with the keys and the accounts file of
	// the live one (backed up as files) and the copy as its ledger.db.
	restored := t.TempDir()
	copyTree(t, filepath.Join(dir, "keys"), filepath.Join(restored, "keys"))
	copyFile(t, filepath.Join(dir, "accounts.json"), filepath.Join(restored, "accounts.json"))
	copyFile(t, out, filepath.Join(restored, "ledger.db"))
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Check(filepath.Join(restored, "ledger.db"), v); err != nil {
		t.Fatalf("ledger.Check on the restored copy: %v", err)
	}
	checkOut, _, err := runCommand(t, nil, "check", "-data", restored)
	if err != nil || !strings.Contains(checkOut, "ledger.Check passed") {
		t.Fatalf("check command on the restored copy: %v %s", err, checkOut)
	}
	r := startServer(t, restored)
	_, restoredCP := r.get(t, "/v1/log/checkpoint", false)
	old, err := ledger.ParseCheckpoint(restoredCP, v)
	if err != nil {
		t.Fatal(err)
	}
	live, err := ledger.ParseCheckpoint(liveCP, v)
	if err != nil {
		t.Fatal(err)
	}
	if old.Size == 0 || old.Size > live.Size {
		t.Fatalf("restored size %d, live %d", old.Size, live.Size)
	}
	status, raw := p.get(t, fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", old.Size, live.Size), false)
	if status != 200 {
		t.Fatalf("consistency proof: %d %s", status, raw)
	}
	var proof struct{ Hashes []tlog.Hash }
	if err := json.Unmarshal(raw, &proof); err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(proof.Hashes, live.Size, live.Root, old.Size, old.Root); err != nil {
		t.Fatalf("the restored log is not the live log at size %d: %v", old.Size, err)
	}
	t.Logf("hot backup under 16 writers: %d bytes in %s; %d settlements acknowledged in all; copy at log size %d (live %d), root %s; ledger.Check passed; restored root proved consistent",
		fi.Size(), took.Round(time.Millisecond), acked, old.Size, live.Size, base64.StdEncoding.EncodeToString(old.Root[:]))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		copyFile(t, path, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// keyWorks polls until the key authenticates (want true) or is refused
// (want false), for at most 10 s.
func keyWorks(t *testing.T, p *serverProc, key string, want bool) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ := p.request(t, "GET", "/settlements?limit=1", nil, "X-Service-Key", key)
		if (status == 200) == want {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAccountsWhileRunning: the accounts commands change the file while the
// server runs; a rotated key works and the old one stops within seconds
// (the server re-reads the file), or on SIGHUP when it does not poll; a new
// account is served at once when the engine can add accounts while running,
// and after a restart otherwise. A new key is printed once, alone on
// stdout; list never shows a key.
func TestAccountsWhileRunning(t *testing.T) {
	dir := t.TempDir()
	logs := &syncBuffer{}
	p := startServerWith(t, dir, nil, logs)
	data := []string{"-data", dir}

	out, _, err := runCommand(t, nil, append([]string{"accounts", "rotate-key", "-id", "acct_demo"}, data...)...)
	newKey := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(newKey, "sk_") || strings.Count(out, "\n") != 1 {
		t.Fatalf("rotate-key: %v %q", err, out)
	}
	if !keyWorks(t, p, newKey, true) || !keyWorks(t, p, demoKey, false) {
		t.Fatalf("after rotate-key: the new key works %v, the old one is refused %v\n%s", keyWorks(t, p, newKey, true), keyWorks(t, p, demoKey, false), logs.String())
	}

	out, errOut, err := runCommand(t, nil, append([]string{"accounts", "create", "-id", "acct_new", "-legal-name", "Nouvelle Boutique SARL",
		"-country", "FR", "-vat-number", "FR40303265045", "-city", "Paris", "-over-threshold"}, data...)...)
	createdKey := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(createdKey, "sk_") {
		t.Fatalf("create: %v %q %s", err, out, errOut)
	}
	if _, _, err := runCommand(t, nil, append([]string{"accounts", "create", "-id", "acct_new", "-legal-name", "X", "-country", "FR"}, data...)...); err == nil {
		t.Fatal("an account created twice")
	}
	list, _, err := runCommand(t, nil, append([]string{"accounts", "list", "-json"}, data...)...)
	if err != nil || !strings.Contains(list, `"acct_new"`) || !strings.Contains(list, `"acct_demo"`) || strings.Contains(list, "sha256:") || strings.Contains(list, "sk_") {
		t.Fatalf("list: %v %s", err, list)
	}
	if engineCanAddAccounts() {
		if !keyWorks(t, p, createdKey, true) {
			t.Fatal("the new account is not served while running")
		}
	} else {
		// The engine's accounts are fixed by fiscal.New: the server says
		// so, keeps the key inactive (it would only get 404s), and serves
		// the account after a restart.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), "acct_new") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(logs.String(), "served after a restart") {
			t.Fatalf("no notice that acct_new waits for a restart:\n%s", logs.String())
		}
		if status, _, _ := p.request(t, "GET", "/settlements", nil, "X-Service-Key", createdKey); status != 401 {
			t.Fatalf("the new key before a restart: %d", status)
		}
		p.kill()
		p = startServer(t, dir)
		if !keyWorks(t, p, createdKey, true) {
			t.Fatal("the new account is not served after a restart")
		}
	}

	// Without polling, SIGHUP applies a rotation.
	qdir := t.TempDir()
	q := startServer(t, qdir, "-accounts-reload", "0")
	out, _, err = runCommand(t, nil, "accounts", "rotate-key", "-id", "acct_demo", "-data", qdir)
	if err != nil {
		t.Fatal(err)
	}
	hupKey := strings.TrimSpace(out)
	time.Sleep(300 * time.Millisecond)
	if status, _, _ := q.request(t, "GET", "/settlements", nil, "X-Service-Key", hupKey); status != 401 {
		t.Fatalf("the rotated key before SIGHUP: %d (no polling)", status)
	}
	if err := q.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !keyWorks(t, q, hupKey, true) {
		t.Fatal("the rotated key after SIGHUP")
	}
}

// TestRetentionThroughBinary: with a retention window of 2 s, the delivery
// states of delivered webhooks are pruned, and nothing else: every record,
// invoice and receipt stays, the log keeps its size, and ledger.Check
// passes on the file afterwards.
func TestRetentionThroughBinary(t *testing.T) {
	var hits sync.Map
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.Header.Get("X-Service-Event-Id"), true)
		w.WriteHeader(204)
	}))
	defer receiver.Close()
	dir := t.TempDir()
	rlogs := &syncBuffer{}
	p := startServerWith(t, dir, nil, rlogs, "-webhooks-allow-loopback", "-retention", "2s")
	defer func() {
		if t.Failed() {
			t.Log(rlogs.String())
		}
	}()
	opKey := readOperatorKey(t, dir)
	status, _, raw := p.request(t, "POST", "/v1/webhook-endpoints", []byte(`{"url":"`+receiver.URL+`/hook"}`), "X-Service-Key", demoKey)
	if status != 201 {
		t.Fatalf("endpoint: %d %s", status, raw)
	}
	acked := map[int][]byte{}
	var ids []string
	for n := 0; n < 3; n++ {
		status, body := p.post(n)
		if status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
		acked[n] = body
		var rec struct{ ID string }
		_ = json.Unmarshal(body, &rec)
		ids = append(ids, rec.ID)
	}
	deadline := time.Now().Add(30 * time.Second)
	pruned := 0.0
	for pruned < 3 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		pruned, _ = sample(p.scrape(t, opKey), "fiscal402_retention_pruned_total", map[string]string{"kind": "webhook_delivery"})
	}
	if pruned != 3 {
		t.Fatalf("pruned %v webhook delivery states, want 3", pruned)
	}
	for _, id := range ids {
		if _, ok := hits.Load("evt_" + id); !ok {
			t.Errorf("event of %s was not delivered before it was pruned", id)
		}
		status, _, raw := p.request(t, "GET", "/v1/events/evt_"+id, nil, "X-Service-Key", demoKey)
		var d struct{ Deliveries []any }
		_ = json.Unmarshal(raw, &d)
		if status != 200 || len(d.Deliveries) != 0 {
			t.Errorf("event %s after pruning: %d %s", id, status, raw)
		}
	}
	verifyAcknowledged(t, p, acked)
	_, cp := p.get(t, "/v1/log/checkpoint", false)
	if size := checkpointSize(t, cp); size != 3 {
		t.Fatalf("log size %d after pruning, want 3", size)
	}
	_, vkey := p.get(t, "/.well-known/log-key", false)
	p.stop(t) // a clean close: the file alone is what ledger.Check reads
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Check(filepath.Join(dir, "ledger.db"), v); err != nil {
		t.Fatalf("ledger.Check after pruning: %v", err)
	}
}
