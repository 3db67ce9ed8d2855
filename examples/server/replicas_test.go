package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/webhooks"
)

// copyDir copies the files of a data directory (keys, accounts) for
// another replica.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// postKeyed sends settlement n with an Idempotency-Key; status 0 means the
// outcome is unknown (the connection failed).
func postKeyed(base string, n int, key string) (int, []byte) {
	req, _ := http.NewRequest("POST", base+"/settlements", strings.NewReader(settlementBody(n)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", demoKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
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

func recordID(t *testing.T, body []byte) string {
	var rec struct{ ID string }
	if err := json.Unmarshal(body, &rec); err != nil || rec.ID == "" {
		t.Errorf("not a record: %s", body)
	}
	return rec.ID
}

// TestReplicasOnPostgres runs three replicas of the real server binary on
// one PostgreSQL log, 16 clients spread over them, and SIGKILLs one replica
// at a random moment (then restarts it) at least 10 times while the others
// keep answering. Every acknowledged settlement is present exactly once;
// a settlement whose answer was lost, posted again to another replica, is
// answered with the one record (the (network, txHash) claim holds across
// replicas), as is an Idempotency-Key replayed on another replica; every
// checkpoint any replica served is consistent with the final one; invoice
// numbers are gap-free; a webhook endpoint receives every settlement's
// event at least once and never one event twice at the same time; and
// ledger.Check passes on the log.
func TestReplicasOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("three server processes and ten kills")
	}
	url := pgtest.Schema(t)
	const replicas, clients = 3, 16
	kills := 10
	if v, err := strconv.Atoi(os.Getenv("FISCAL402_REPLICA_KILLS")); err == nil {
		kills = v // a shorter run while working on the test
	}

	// The webhook receiver: it notes every delivery and any overlap of two
	// deliveries of one event.
	var (
		hmu       sync.Mutex
		inflight  = map[string]int{}
		delivered = map[string]int{}
		overlaps  []string
		secret    string
		badSig    int
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// The sending replica was killed mid-body: not a delivery (its
			// signature cannot be judged on part of a body), and the
			// dispatcher that resumes the event delivers it again.
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ev := r.Header.Get(webhooks.HeaderEventID)
		hmu.Lock()
		if webhooks.Verify([]string{secret}, r.Header.Get(webhooks.HeaderSignature), r.Header.Get(webhooks.HeaderTimestamp), body, 0) != nil {
			badSig++
		}
		if inflight[ev] > 0 {
			overlaps = append(overlaps, ev)
		}
		inflight[ev]++
		hmu.Unlock()
		time.Sleep(20 * time.Millisecond)
		hmu.Lock()
		inflight[ev]--
		delivered[ev]++
		hmu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	flags := []string{"-store", url, "-webhooks-allow-loopback", "-webhook-timeout", "3s"}
	dirs := make([]string, replicas)
	dirs[0] = t.TempDir()
	procs := make([]*serverProc, replicas)
	procs[0] = startServerWith(t, dirs[0], nil, replicaLog(t, 0), flags...)
	for i := 1; i < replicas; i++ {
		dirs[i] = t.TempDir()
		copyDir(t, dirs[0], dirs[i]) // the shared keys and the accounts file
		procs[i] = startServerWith(t, dirs[i], nil, replicaLog(t, i), flags...)
	}
	// A replica with other keys is refused.
	other := t.TempDir()
	if err := run([]string{"-data", other, "-listen", "127.0.0.1:0", "-store", url, "-fx-refresh=false"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Fatalf("a replica with its own keys: %v, want a key mismatch", err)
	}

	req, _ := http.NewRequest("POST", procs[1].base+"/v1/webhook-endpoints", strings.NewReader(`{"url":"`+receiver.URL+`/hook"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", demoKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ep struct{ ID, Secret string }
	err = json.NewDecoder(resp.Body).Decode(&ep)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create endpoint: %d %v", resp.StatusCode, err)
	}
	hmu.Lock()
	secret = ep.Secret
	hmu.Unlock()

	// The sandbox quota is global: 10 calls a day for one agent, whichever
	// replicas answer them.
	okCalls, refused := 0, 0
	for i := range 15 {
		body := fmt.Sprintf(`{"amountUsdc":"1.00","txHash":"%s","timestamp":"2026-04-10T14:30:00Z",`+
			`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",`+
			`"network":"eip155:8453","consumerCountry":"DE"}`, crashTx(1_000_000+i))
		r, err := client.Post(procs[i%replicas].base+"/sandbox/v1/simulate", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(r.Body)
		r.Body.Close()
		switch {
		case r.StatusCode == 429:
			refused++
		case r.StatusCode/100 == 2:
			okCalls++
		default:
			t.Fatalf("sandbox call %d on replica %d: %d %.300s", i, i%replicas, r.StatusCode, raw)
		}
	}
	if okCalls != 10 || refused != 5 {
		t.Fatalf("sandbox calls over 3 replicas: %d answered, %d refused, want 10 and 5 (one global quota)", okCalls, refused)
	}

	var (
		pmu      sync.RWMutex // guards procs
		mu       sync.Mutex
		acked    = map[int]string{} // settlement → record id
		bodies   = map[int][]byte{}
		next     int
		lost     int // answers lost to a kill (then retried elsewhere)
		replays  int // idempotent replays on another replica
		cps      [][]byte
		failures []string
	)
	base := func(i int) string {
		pmu.RLock()
		defer pmu.RUnlock()
		return procs[i%replicas].base
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				key := "idem-" + strconv.Itoa(n)
				var id string
				for try := 0; id == "" && try < 200; try++ {
					status, body := postKeyed(base(c+try), n, key)
					switch {
					case status == 201 || (status == 200 && try > 0):
						id = recordID(t, body)
						mu.Lock()
						if status == 201 {
							if _, dup := acked[n]; dup {
								failures = append(failures, fmt.Sprintf("settlement %d created twice", n))
							}
						}
						acked[n], bodies[n] = id, body
						mu.Unlock()
					case status == 0 || status == 503:
						mu.Lock()
						lost++
						mu.Unlock()
						time.Sleep(20 * time.Millisecond)
					default:
						mu.Lock()
						failures = append(failures, fmt.Sprintf("post %d: %d %.300s", n, status, body))
						mu.Unlock()
						return
					}
				}
				// The same payment on another replica, without and with
				// the key: the one record.
				if id != "" && n%7 == 0 {
					for _, k := range []string{"", key} {
						status, body := postKeyed(base(c+1), n, k)
						if status == 0 || status == 503 {
							continue
						}
						// Without the key the (network, txHash) claim answers
						// 200 with the record; with it the first answer is
						// replayed (201), the same record either way.
						if (status != 200 && (k == "" || status != 201)) || recordID(t, body) != id {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("replay of %d (key %q) on another replica: %d %.200s, want the record %s", n, k, status, body, id))
							mu.Unlock()
						}
						mu.Lock()
						replays++
						mu.Unlock()
					}
				}
				if n%5 == 0 {
					if r, err := client.Get(base(n) + "/v1/log/checkpoint"); err == nil {
						raw, _ := io.ReadAll(r.Body)
						r.Body.Close()
						if r.StatusCode == 200 {
							mu.Lock()
							cps = append(cps, raw)
							mu.Unlock()
						}
					}
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(23, 3))
	for k := range kills {
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		victim := rng.IntN(replicas)
		pmu.RLock()
		p := procs[victim]
		pmu.RUnlock()
		p.kill()
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		np := startServerWith(t, dirs[victim], nil, replicaLog(t, victim), flags...)
		pmu.Lock()
		procs[victim] = np
		pmu.Unlock()
		t.Logf("kill %d: replica %d", k+1, victim)
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every acknowledged settlement is present, exactly once, on every replica.
	p := procs[2]
	ids := map[string]int{}
	for n, id := range acked {
		if prev, dup := ids[id]; dup {
			t.Fatalf("settlements %d and %d have one record %s", prev, n, id)
		}
		ids[id] = n
		status, got := procs[n%replicas].get(t, "/settlements/"+id, true)
		if status != 200 || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(bodies[n])) {
			t.Fatalf("acknowledged settlement %d (%s): status %d, changed or lost", n, id, status)
		}
	}
	// Records, UBL and receipts (verified offline against the JWKS and log
	// key) read back alike from every replica.
	for r := range replicas {
		sample := map[int][]byte{}
		for n, body := range bodies {
			if n%replicas == r && len(sample) < 40 {
				sample[n] = body
			}
		}
		verifyAcknowledged(t, procs[r], sample)
	}
	invoices := invoiceNumbers(t, p)
	if len(invoices) != len(acked) {
		t.Fatalf("%d records listed, %d settlements acknowledged", len(invoices), len(acked))
	}
	slices.Sort(invoices)
	for i, id := range invoices {
		if want := fmt.Sprintf("F402-2026-%06d", i+1); id != want {
			t.Fatalf("invoice numbers across replicas: position %d is %s, want %s", i, id, want)
		}
	}
	// One consistent log: every checkpoint seen proves into the final one.
	_, vkey := p.get(t, "/.well-known/log-key", false)
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	_, raw := p.get(t, "/v1/log/checkpoint", false)
	final, err := ledger.ParseCheckpoint(raw, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		cp, err := ledger.ParseCheckpoint(c, v)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Size == final.Size {
			if cp.Root != final.Root {
				t.Fatalf("two roots at size %d", cp.Size)
			}
			continue
		}
		status, body := procs[int(cp.Size)%replicas].get(t, fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", cp.Size, final.Size), false)
		var proof struct{ Hashes []tlog.Hash }
		if status != 200 || json.Unmarshal(body, &proof) != nil {
			t.Fatalf("consistency proof %d → %d: %d %s", cp.Size, final.Size, status, body)
		}
		if err := tlog.CheckTree(proof.Hashes, final.Size, final.Root, cp.Size, cp.Root); err != nil {
			t.Fatalf("checkpoint %d is not consistent with %d: %v", cp.Size, final.Size, err)
		}
	}
	// Every settlement's event reaches the receiver, never twice at once.
	deadline := time.Now().Add(60 * time.Second)
	missing := 0
	for {
		hmu.Lock()
		missing = 0
		for id := range ids {
			if delivered["evt_"+id] == 0 {
				missing++
			}
		}
		hmu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		if time.Now().Second()%10 == 0 {
			t.Logf("%d events still to deliver", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hmu.Lock()
	events, deliveries, again := len(delivered), 0, 0
	for _, n := range delivered {
		deliveries += n
		if n > 1 {
			again++
		}
	}
	ov, bad := slices.Clone(overlaps), badSig
	hmu.Unlock()
	if missing > 0 {
		t.Errorf("%d settlements' events never delivered", missing)
	}
	if len(ov) > 0 {
		t.Errorf("events delivered by two replicas at the same time: %v", ov)
	}
	if bad > 0 {
		t.Errorf("%d deliveries do not verify", bad)
	}
	for _, pr := range procs {
		pr.kill()
	}
	if err := ledger.Check(url, v); err != nil {
		t.Fatalf("ledger.Check on the shared log: %v", err)
	}
	t.Logf("sandbox quota over 3 replicas: %d calls answered, %d refused", okCalls, refused)
	t.Logf("3 replicas, %d clients, %d SIGKILLs: %d settlements acknowledged, each present once (invoices 1..%d gap-free), %d answers lost to kills and retried on another replica, %d cross-replica replays answered with the one record; log size %d, %d checkpoints seen, all consistent with the final one; %d events delivered (%d deliveries, %d more than once, 0 concurrently); ledger.Check clean",
		clients, kills, len(acked), len(invoices), lost, replays, final.Size, len(cps), events, deliveries, again)
}

// replicaLog is where a replica's log goes: stderr under
// FISCAL402_REPLICA_LOGS=1, else nowhere.
func replicaLog(t *testing.T, i int) io.Writer {
	if os.Getenv("FISCAL402_REPLICA_LOGS") != "1" {
		return io.Discard
	}
	return prefixWriter{fmt.Sprintf("replica %d: ", i), os.Stderr}
}

type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			io.WriteString(p.w, p.prefix+line)
		}
	}
	return len(b), nil
}

// TestMigrateToPostgres: a server on the bbolt file records settlements;
// "server migrate" copies its data directory into PostgreSQL and proves the
// copy; servers started with -store then serve every record, answer a
// re-post with the existing record, go on appending, and prove the log
// they continue consistent with the file's last checkpoint.
func TestMigrateToPostgres(t *testing.T) {
	url := pgtest.Schema(t)
	dir := t.TempDir()
	p := startServer(t, dir)
	acked := map[int][]byte{}
	for n := range 30 {
		status, body := p.post(n)
		if status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
		acked[n] = body
	}
	_, before := p.get(t, "/v1/log/checkpoint", false)
	p.kill()
	var out bytes.Buffer
	if err := run([]string{"migrate", "-data", dir, "-store", url}, &out, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !strings.Contains(out.String(), "both end at size 30") {
		t.Fatalf("migrate said %q", out.String())
	}
	t.Log(strings.TrimSpace(out.String()))
	out.Reset()
	if err := run([]string{"check", "-data", dir, "-ledger", url}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "log size 30") {
		t.Fatalf("check of the PostgreSQL log: %v %q", err, out.String())
	}
	// A second run finds the log already copied and writes nothing
	// (TestMigrateAgainAfterAHalfDoneRun: a log holding anything else is
	// refused).
	out.Reset()
	if err := run([]string{"migrate", "-data", dir, "-store", url}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "already copied") {
		t.Fatalf("a second migrate into the same log: %v %q", err, out.String())
	}
	p = startServer(t, dir, "-store", url)
	verifyAcknowledged(t, p, acked)
	verifyGrowth(t, p, before)
	if status, _ := p.post(3); status != 200 {
		t.Fatalf("re-post after the migration: %d, want 200 (existing)", status)
	}
	if status, body := p.post(30); status != 201 {
		t.Fatalf("new post after the migration: %d %s", status, body)
	}
	verifyGrowth(t, p, before)
}
