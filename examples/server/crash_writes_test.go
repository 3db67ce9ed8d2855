package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/webhooks"
)

// The other write paths under SIGKILL: refunds, manual review resolutions,
// fiscal events, summary invoices, webhook endpoint changes and deliveries,
// and an account's threshold crossing. Every answer 2xx before a kill is
// found after the restart, identical; every request retried with its
// Idempotency-Key after the restart is answered as the first time (never a
// second record, never a 409 for the same body); invoice numbers stay
// unique and gap-free per series (Art. 226(2) Directive 2006/112/EC).

const sumKey = "sk_test_crash_summary_0123"

// crashWrite is one write request and, once known, its answer.
type crashWrite struct {
	kind, method, path, apiKey, idemKey string
	body                                []byte
	status                              int // 0: unknown (the kill cut it)
	resp                                []byte
}

func keyHash(k string) string {
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeCrashAccounts writes the accounts file: the demo account (one
// invoice per payment, over the threshold) and acct_sum (monthly summary
// invoices, under the Art. 59c threshold, which its sales cross).
func writeCrashAccounts(t *testing.T, dir string) {
	t.Helper()
	seller := func(invoicing string, over bool) map[string]any {
		return map[string]any{
			"legalName": "Crash Digital Ltd", "vatNumber": "IE1234567T", "legalId": "IE-CRO-654321", "country": "IE",
			"address":       map[string]any{"street": "1 Demo Street", "city": "Dublin", "postalCode": "D02 X285", "country": "IE"},
			"overThreshold": over,
			"registrations": []map[string]any{{"scheme": "national", "country": "IE"}, {"scheme": "oss_union", "country": "IE"}},
			"itemName":      "API access (pay per call)",
			"invoicing":     invoicing,
		}
	}
	raw, err := json.MarshalIndent(map[string]any{"accounts": []map[string]any{
		{"id": "acct_demo", "keyHashes": []string{keyHash(demoKey)}, "seller": seller("per_payment", true)},
		{"id": "acct_sum", "keyHashes": []string{keyHash(sumKey)}, "seller": seller("summary_monthly", false)},
	}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

var crashWallets = []string{
	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
	"0x90F79bf6EB2c4f870365E785982E1f101E93b906",
	"0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
}

func (p *serverProc) send(w *crashWrite) (int, []byte, http.Header) {
	req, _ := http.NewRequest(w.method, p.base+w.path, bytes.NewReader(w.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", w.apiKey)
	if w.idemKey != "" {
		req.Header.Set("Idempotency-Key", w.idemKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil
	}
	return resp.StatusCode, raw, resp.Header
}

func (p *serverProc) getAs(t *testing.T, path, apiKey string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	req.Header.Set("X-Service-Key", apiKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func jsonID(raw []byte) string {
	var v struct{ ID string }
	_ = json.Unmarshal(raw, &v)
	return v.ID
}

// readBack is where an acknowledged write reads back, byte for byte the
// answer ("" when it has no such place).
func readBack(w *crashWrite) string {
	switch w.kind {
	case "summary":
		return ""
	case "fiscal_resolve":
		return "/v1/fiscal-events/" + jsonID(w.resp)
	case "resolve": // a settlement in review is resolved once and never refunded here
		return "/settlements/" + jsonID(w.resp)
	case "refund", "fiscal_event":
		var v struct{ ID, SettlementID string }
		_ = json.Unmarshal(w.resp, &v)
		if w.kind == "refund" {
			return "/settlements/" + v.SettlementID + "/refunds/" + v.ID
		}
		return "/v1/fiscal-events/" + v.ID
	}
	return ""
}

// invoiceIDs lists the invoice numbers an answer carries, with the
// document each numbers.
func invoiceIDs(w *crashWrite) map[string]string {
	out := map[string]string{}
	switch w.kind {
	case "settle", "resolve":
		var v struct {
			ID      string
			Invoice *struct{ ID string }
		}
		_ = json.Unmarshal(w.resp, &v)
		if v.Invoice != nil && v.Invoice.ID != "" {
			out[v.Invoice.ID] = v.ID
		}
	case "refund":
		var v struct {
			ID         string
			CreditNote *struct{ ID string }
		}
		_ = json.Unmarshal(w.resp, &v)
		if v.CreditNote != nil && v.CreditNote.ID != "" {
			out[v.CreditNote.ID] = v.ID
		}
	case "summary":
		var v struct {
			Data []struct {
				ID      string
				Invoice struct{ ID string }
			}
		}
		_ = json.Unmarshal(w.resp, &v)
		for _, s := range v.Data {
			out[s.Invoice.ID] = s.ID
		}
	}
	return out
}

// TestCrashUnderLoadOtherWrites kills the server with SIGKILL at random
// moments while clients post settlements, refunds, resolutions of
// settlements and of fiscal events, fiscal events, summary invoices,
// webhook endpoints (created, deleted), secrets and redeliveries, with a
// receiver taking the webhook deliveries; one account's sales cross the
// Art. 59c threshold on the way.
func TestCrashUnderLoadOtherWrites(t *testing.T) { crashOtherWrites(t, "") }

// TestCrashUnderLoadOtherWritesPostgres is the same on the PostgreSQL
// store (skipped without a server: pgtest).
func TestCrashUnderLoadOtherWritesPostgres(t *testing.T) { crashOtherWrites(t, pgtest.Schema(t)) }

// crashOtherWrites runs the load on the bbolt file of the data directory,
// or on the PostgreSQL store at storeURL.
func crashOtherWrites(t *testing.T, storeURL string) {
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	dir := t.TempDir()
	writeCrashAccounts(t, dir)
	flags := []string{"-webhooks-allow-loopback", "-webhook-timeout", "2s"}
	ledgerAt := filepath.Join(dir, "ledger.db")
	if storeURL != "" {
		flags = append(flags, "-store", storeURL)
		ledgerAt = storeURL
	}
	rng := rand.New(rand.NewPCG(61, 2))

	// Events the server showed as delivered before a kill: never sent again.
	deliveredBefore := map[string]bool{}
	// The webhook receiver notes every delivery with its attempt number.
	var (
		hmu         sync.Mutex
		received    = map[string][]int{} // event id → attempts received, answered 204
		order       []string             // event ids in the order first received
		redelivered = map[string]bool{}  // events a redelivery was asked for
		// acct_sum's endpoints: path and event id → attempts; and any
		// attempt that is not after the ones before (sent again as new)
		sumReceived = map[string][]int{}
		resent      []string
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		attempt, _ := strconv.Atoi(r.Header.Get(webhooks.HeaderAttempt))
		hmu.Lock()
		id := r.Header.Get(webhooks.HeaderEventID)
		if r.URL.Path != "/hook" { // an endpoint of acct_sum
			k := r.URL.Path + " " + id
			if n := len(sumReceived[k]); n > 0 && attempt <= sumReceived[k][n-1] {
				resent = append(resent, fmt.Sprintf("%s attempt %d after %v", k, attempt, sumReceived[k]))
			}
			sumReceived[k] = append(sumReceived[k], attempt)
			hmu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if _, seen := received[id]; !seen {
			order = append(order, id)
		}
		received[id] = append(received[id], attempt)
		hmu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	var (
		mu           sync.Mutex
		acked        []*crashWrite       // 2xx answers
		unknown      []*crashWrite       // answers the kill swallowed: retried after the restart
		processed    []string            // acknowledged PROCESSED demo settlements (refundable)
		pending      []string            // acknowledged demo settlements in review (resolvable)
		fePending    []string            // acknowledged fiscal events in review (resolvable)
		resolved     = map[string]bool{} // fiscal events a resolution was sent for (their first answer is no longer current)
		sumEndpoints []string            // acct_sum's acknowledged endpoints
		sumProcessed []string            // acct_sum's acknowledged PROCESSED settlements (refundable)
		deleted      = map[string]bool{} // endpoints a deletion was sent for
		next         int
		endpoint     string
	)
	noteWrite := func(w *crashWrite, status int, resp []byte, live bool) {
		mu.Lock()
		defer mu.Unlock()
		w.status, w.resp = status, resp
		switch {
		case status >= 200 && status < 300:
			acked = append(acked, w)
			if w.kind == "fiscal_event" && strings.Contains(string(resp), `"MANUAL_REVIEW_REQUIRED"`) {
				fePending = append(fePending, jsonID(resp))
			}
			if w.kind == "endpoint" && w.apiKey == sumKey {
				sumEndpoints = append(sumEndpoints, jsonID(resp))
			}
			if w.kind == "settle" && w.apiKey == sumKey && strings.Contains(string(resp), `"reviewStatus":"PROCESSED"`) {
				sumProcessed = append(sumProcessed, jsonID(resp))
			}
			if w.kind == "settle" && w.apiKey == demoKey {
				var v struct{ ReviewStatus string }
				_ = json.Unmarshal(resp, &v)
				if v.ReviewStatus == "PROCESSED" {
					processed = append(processed, jsonID(resp))
				} else {
					pending = append(pending, jsonID(resp))
				}
			}
		case status == 0:
			unknown = append(unknown, w)
		case status >= 500 && live:
			t.Errorf("%s %s (key %s): %d %s", w.method, w.path, w.idemKey, status, resp)
		case status == 409 && strings.Contains(string(resp), "IDEMPOTENCY"):
			t.Errorf("%s %s (key %s): %d %s", w.method, w.path, w.idemKey, status, resp)
		}
	}
	newWrite := func() *crashWrite {
		mu.Lock()
		n := next
		next++
		mu.Unlock()
		key := fmt.Sprintf("crash61-%d", n)
		r := rand.New(rand.NewPCG(uint64(n), 61))
		x := r.IntN(100)
		switch {
		case x < 35: // a demo settlement, one in four without country (review)
			country := fmt.Sprintf(`,"consumerCountry":"%s"`, []string{"DE", "FR", "IT", "ES"}[n%4])
			if n%4 == 3 {
				country = ""
			}
			body := fmt.Sprintf(`{"amountUsdc":"%d.%02d","txHash":"%s","timestamp":"2026-04-10T14:30:00Z","payerWallet":"%s","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"%s}`,
				1+n%50, n%100, crashTx(n), crashWallets[n%3], country)
			return &crashWrite{kind: "settle", method: "POST", path: "/settlements", apiKey: demoKey, idemKey: key, body: []byte(body)}
		case x < 55: // a settlement of acct_sum (summary invoices; crosses the threshold)
			body := fmt.Sprintf(`{"amountUsdc":"%d.%02d","txHash":"%s","timestamp":"2026-04-1%dT14:30:00Z","payerWallet":"%s","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}`,
				400+n%600, n%100, crashTx(n), n%10, crashWallets[n%3])
			return &crashWrite{kind: "settle", method: "POST", path: "/settlements", apiKey: sumKey, idemKey: key, body: []byte(body)}
		case x < 70: // a refund of an acknowledged settlement
			// one in three of acct_sum: a supply a summary covers, or will,
			// is first invoiced on its own (refunds, invoicing.IssueAlone)
			mu.Lock()
			var id string
			pool, apiKey := processed, demoKey
			if n%3 == 0 {
				pool, apiKey = sumProcessed, sumKey
			}
			if len(pool) > 0 {
				id = pool[r.IntN(len(pool))]
			}
			mu.Unlock()
			if id == "" {
				return nil
			}
			return &crashWrite{kind: "refund", method: "POST", path: "/settlements/" + id + "/refunds", apiKey: apiKey, idemKey: key,
				body: []byte(fmt.Sprintf(`{"amountUsdc":"0.%02d","reason":"crash %d"}`, 1+n%9, n))}
		case x < 80: // a resolution of a settlement in review
			mu.Lock()
			var id string
			if len(pending) > 0 {
				i := r.IntN(len(pending))
				id = pending[i]
				pending = slices.Delete(pending, i, i+1)
			}
			mu.Unlock()
			if id == "" {
				return nil
			}
			return &crashWrite{kind: "resolve", method: "POST", path: "/settlements/" + id + "/resolve", apiKey: demoKey, idemKey: key,
				body: []byte(fmt.Sprintf(`{"buyer":{"consumerCountry":"AT"},"note":"crash %d","resolvedBy":"ops@crash.example"}`, n))}
		case x < 84: // a resolution of a fiscal event in review
			mu.Lock()
			var id string
			if len(fePending) > 0 {
				i := r.IntN(len(fePending))
				id = fePending[i]
				fePending = slices.Delete(fePending, i, i+1)
				resolved[id] = true
			}
			mu.Unlock()
			if id == "" {
				return nil
			}
			return &crashWrite{kind: "fiscal_resolve", method: "POST", path: "/v1/fiscal-events/" + id + "/resolve", apiKey: demoKey, idemKey: key,
				body: []byte(fmt.Sprintf(`{"buyer":{"consumerCountry":"DE"},"note":"crash %d","resolvedBy":"ops@crash.example"}`, n))}
		case x < 86: // a redelivery of an event the receiver got
			hmu.Lock()
			var id string
			if len(order) > 0 {
				id = order[r.IntN(len(order))]
			}
			hmu.Unlock()
			if id == "" || !strings.HasPrefix(id, "evt_x402-") {
				return nil
			}
			hmu.Lock()
			redelivered[id] = true
			hmu.Unlock()
			return &crashWrite{kind: "redeliver", method: "POST", path: "/v1/events/" + id + "/redeliver", apiKey: demoKey, idemKey: key, body: []byte(`{}`)}
		case x < 93: // a fiscal event, one in three without the buyer's country (review)
			country := `,"country":"FR"`
			if n%3 == 0 {
				country = ""
			}
			body := fmt.Sprintf(`{"buyer":{"businessStatus":"B2C"%s},"payment":{"amountUsdc":"%d.50","network":"eip155:8453","payerWallet":"%s","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","timestamp":"2026-04-10T14:30:00Z","txHash":"%s"},"seller":{"country":"IE","legalName":"Seller A Ltd"},"supply":{"kind":"digital_service"}}`,
				country, 1+n%40, crashWallets[n%3], crashTx(n))
			return &crashWrite{kind: "fiscal_event", method: "POST", path: "/v1/fiscal-events", apiKey: demoKey, idemKey: key, body: []byte(body)}
		case x < 96: // the April summary of one buyer of acct_sum, or of every buyer (no key: issuing again answers the same)
			body := fmt.Sprintf(`{"buyer":"%s","period":"2026-04"}`, strings.ToLower(crashWallets[n%3]))
			if n%4 == 0 {
				body = `{"period":"2026-04"}`
			}
			return &crashWrite{kind: "summary", method: "POST", path: "/v1/invoices/summaries", apiKey: sumKey, body: []byte(body)}
		case x < 97: // a new endpoint of acct_sum
			return &crashWrite{kind: "endpoint", method: "POST", path: "/v1/webhook-endpoints", apiKey: sumKey, idemKey: key,
				body: []byte(fmt.Sprintf(`{"url":"%s/s/%d","description":"crash %d"}`, receiver.URL, n, n))}
		case x < 98: // deleting one of them
			mu.Lock()
			var id string
			if len(sumEndpoints) > 0 {
				i := r.IntN(len(sumEndpoints))
				id = sumEndpoints[i]
				sumEndpoints = slices.Delete(sumEndpoints, i, i+1)
				deleted[id] = true
			}
			mu.Unlock()
			if id == "" {
				return nil
			}
			return &crashWrite{kind: "delete_endpoint", method: "DELETE", path: "/v1/webhook-endpoints/" + id, apiKey: sumKey}
		default: // a new secret of the demo endpoint
			mu.Lock()
			ep := endpoint
			mu.Unlock()
			if ep == "" {
				return nil
			}
			return &crashWrite{kind: "secret", method: "POST", path: "/v1/webhook-endpoints/" + ep + "/secrets", apiKey: demoKey, idemKey: key, body: []byte(`{}`)}
		}
	}

	// checkAcked: every acknowledged write reads back identical and a
	// retry with its key answers the same; every unknown one retried with
	// its key is answered as a first request would be.
	checkAcked := func(p *serverProc, ws []*crashWrite) {
		t.Helper()
		for _, w := range ws {
			mu.Lock()
			revised := w.kind == "fiscal_event" && resolved[jsonID(w.resp)]
			mu.Unlock()
			if path := readBack(w); path != "" && !revised {
				status, got := p.getAs(t, path, w.apiKey)
				if status != 200 || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(w.resp)) {
					t.Errorf("acknowledged %s (%s) reads back %d, changed or lost:\n got %s\nwant %s", w.kind, path, status, got, w.resp)
				}
			}
			if w.kind == "summary" {
				var v struct{ Data []json.RawMessage }
				_ = json.Unmarshal(w.resp, &v)
				for _, one := range v.Data {
					status, got := p.getAs(t, "/v1/invoices/summaries/"+jsonID(one), w.apiKey)
					if status != 200 || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(one)) {
						t.Errorf("acknowledged summary %s reads back %d:\n got %s\nwant %s", jsonID(one), status, got, one)
					}
				}
				// Issuing again answers the summaries issued before (a run
				// for every buyer also those issued since).
				status, got, _ := p.send(w)
				var again struct{ Data []json.RawMessage }
				_ = json.Unmarshal(got, &again)
				if status < 200 || status > 299 {
					t.Errorf("summary issued again after the restart: %d %s, first %s", status, got, w.resp)
				}
				for _, one := range v.Data {
					found := false
					for _, a := range again.Data {
						found = found || bytes.Equal(a, one)
					}
					if !found {
						t.Errorf("summary issued again after the restart does not answer %s as before:\n got %s\nwant it with %s", jsonID(one), got, one)
					}
				}
			}
			if w.kind == "settle" || w.kind == "resolve" {
				var v struct{ Receipt struct{ ID string } }
				_ = json.Unmarshal(w.resp, &v)
				if status, _ := p.getAs(t, "/v1/receipts/"+v.Receipt.ID, w.apiKey); status != 200 {
					t.Errorf("acknowledged %s %s: its receipt %s is %d", w.kind, jsonID(w.resp), v.Receipt.ID, status)
				}
			}
			if w.kind == "delete_endpoint" {
				if status, got := p.getAs(t, w.path, w.apiKey); status != 404 {
					t.Errorf("endpoint deleted (%d) before the kill is back: %d %s", w.status, status, got)
				}
			}
			if w.idemKey == "" {
				continue
			}
			status, got, _ := p.send(w)
			mu.Lock()
			gone := w.kind == "endpoint" && deleted[jsonID(w.resp)]
			mu.Unlock()
			if gone && status == 409 && strings.Contains(string(got), "since been deleted") {
				continue // documented: the first answer cannot be replayed once the endpoint is deleted
			}
			if w.kind == "secret" {
				// Only the newest secret is shown again (webhooks: a rotated
				// one is a 409); the endpoint around it may have changed.
				var a, b struct{ Secret, SecretID string }
				_ = json.Unmarshal(got, &a)
				_ = json.Unmarshal(w.resp, &b)
				if status == 409 && strings.Contains(string(got), "no longer its newest") || status == w.status && a == b {
					continue
				}
			}
			if status != w.status || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(w.resp)) {
				t.Errorf("retry of acknowledged %s %s (key %s) after the restart: %d, first %d:\n got %s\nwant %s", w.kind, w.path, w.idemKey, status, w.status, got, w.resp)
			}
		}
	}
	retried := map[string]int{}
	retryUnknown := func(p *serverProc) {
		t.Helper()
		mu.Lock()
		ws := unknown
		unknown = nil
		mu.Unlock()
		for _, w := range ws {
			retried[w.kind]++
			status, resp, _ := p.send(w)
			if status == 0 {
				t.Fatalf("retry of %s %s: no answer", w.method, w.path)
			}
			if status == 409 && w.idemKey != "" && strings.Contains(string(resp), "IDEMPOTENCY") {
				t.Errorf("retry after the restart of %s %s with its key %s and the same body: %d %s", w.kind, w.path, w.idemKey, status, resp)
			}
			noteWrite(w, status, resp, true)
		}
	}

	var fresh []*crashWrite
	for round := 0; round < rounds; round++ {
		p := startServer(t, dir, flags...)
		if round > 0 {
			checkAcked(p, fresh)
			retryUnknown(p)
		} else {
			ep := &crashWrite{kind: "endpoint", method: "POST", path: "/v1/webhook-endpoints", apiKey: demoKey, idemKey: "crash61-endpoint",
				body: []byte(`{"url":"` + receiver.URL + `/hook"}`)}
			status, resp, _ := p.send(ep)
			if status != 201 {
				t.Fatalf("endpoint: %d %s", status, resp)
			}
			noteWrite(ep, status, resp, true)
			endpoint = jsonID(resp)
		}
		mu.Lock()
		start := len(acked)
		mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					w := newWrite()
					if w == nil {
						continue
					}
					status, resp, _ := p.send(w)
					noteWrite(w, status, resp, ctx.Err() == nil)
				}
			}()
		}
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		// Events the server says it delivered, just before the kill.
		// (the 20 latest not yet known as delivered: the load goes on)
		hmu.Lock()
		var got []string
		for i := len(order) - 1; i >= 0 && len(got) < 20; i-- {
			if !deliveredBefore[order[i]] {
				got = append(got, order[i])
			}
		}
		hmu.Unlock()
		for _, id := range got {
			if status, raw := p.getAs(t, "/v1/events/"+id, demoKey); status == 200 {
				var ev struct{ Deliveries []struct{ Status string } }
				_ = json.Unmarshal(raw, &ev)
				if len(ev.Deliveries) > 0 && ev.Deliveries[0].Status == "delivered" {
					hmu.Lock()
					deliveredBefore[id] = true
					received[id] = nil // from now on: any receipt is a re-send
					hmu.Unlock()
				}
			}
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		cancel()
		p.kill()
		wg.Wait()
		mu.Lock()
		fresh = slices.Clone(acked[start:])
		mu.Unlock()
	}
	p := startServer(t, dir, flags...)
	checkAcked(p, fresh)
	retryUnknown(p)
	mu.Lock()
	all := slices.Clone(acked)
	mu.Unlock()

	// Invoice numbers: one document each, gap-free per series.
	owner := map[string]string{}
	series := map[string][]int{}
	for _, w := range all {
		acct := "acct_demo"
		if w.apiKey == sumKey {
			acct = "acct_sum"
		}
		for num, doc := range invoiceIDs(w) {
			if o, ok := owner[acct+num]; ok {
				if o != doc {
					t.Errorf("invoice number %s numbers %s and %s", num, o, doc)
				}
				continue
			}
			owner[acct+num] = doc
			i := strings.LastIndex(num, "-")
			n, err := strconv.Atoi(num[i+1:])
			if err != nil {
				t.Fatalf("invoice number %q", num)
			}
			series[acct+" "+num[:i]] = append(series[acct+" "+num[:i]], n)
		}
	}
	for s, nums := range series {
		slices.Sort(nums)
		for i, n := range nums {
			if n != i+1 {
				t.Errorf("series %s: position %d is number %d (of %d): a gap or a number given twice", s, i, n, len(nums))
				break
			}
		}
	}

	// acct_sum crossed the threshold once: one account.threshold_crossed.
	crossings := 0
	for cursor := ""; ; {
		path := "/v1/events?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		status, raw := p.getAs(t, path, sumKey)
		if status != 200 {
			t.Fatalf("events of acct_sum: %d %s", status, raw)
		}
		var page struct {
			Data []struct {
				Type string `json:"type"`
			}
			HasMore    bool   `json:"has_more"`
			NextCursor string `json:"next_cursor"`
		}
		_ = json.Unmarshal(raw, &page)
		for _, e := range page.Data {
			if e.Type == "account.threshold_crossed" {
				crossings++
			}
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	_, totals := p.getAs(t, "/v1/account/totals", sumKey)
	var tot struct{ Years []struct{ Exceeded bool } }
	if err := json.Unmarshal(totals, &tot); err != nil || len(tot.Years) != 1 {
		t.Fatalf("totals of acct_sum: %s", totals)
	}
	if want := map[bool]int{true: 1, false: 0}[tot.Years[0].Exceeded]; crossings != want {
		t.Errorf("acct_sum's totals after the kills %s: %d account.threshold_crossed events, want %d", totals, crossings, want)
	}

	// Webhooks: every event of the demo account reaches the receiver; none
	// the server had recorded as delivered comes again.
	var events []string
	for cursor := ""; ; {
		path := "/v1/events?limit=200"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		status, raw := p.getAs(t, path, demoKey)
		if status != 200 {
			t.Fatalf("events: %d %s", status, raw)
		}
		var page struct {
			Data []struct {
				ID string `json:"id"`
			}
			HasMore    bool   `json:"has_more"`
			NextCursor string `json:"next_cursor"`
		}
		_ = json.Unmarshal(raw, &page)
		for _, e := range page.Data {
			events = append(events, e.ID)
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		// An event not received yet whose delivery a kill cut waits for its
		// next attempt (backoff): pending, not lost.
		hmu.Lock()
		var notYet []string
		for _, id := range events {
			if len(received[id]) == 0 && !deliveredBefore[id] {
				notYet = append(notYet, id)
			}
		}
		hmu.Unlock()
		missing := 0
		for _, id := range notYet {
			_, raw := p.getAs(t, "/v1/events/"+id, demoKey)
			var ev struct {
				Deliveries []struct {
					Status        string
					Attempts      int
					NextAttemptAt time.Time
				}
			}
			_ = json.Unmarshal(raw, &ev)
			if len(ev.Deliveries) != 1 || ev.Deliveries[0].Status != "pending" || ev.Deliveries[0].Attempts == 0 ||
				ev.Deliveries[0].NextAttemptAt.After(time.Now().Add(10*time.Minute)) {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d events never reached the receiver, nor wait for another attempt", missing, len(events))
			shown := 0
			for _, id := range events {
				hmu.Lock()
				lost := len(received[id]) == 0 && !deliveredBefore[id]
				hmu.Unlock()
				if lost && shown < 3 {
					shown++
					_, raw := p.getAs(t, "/v1/events/"+id, demoKey)
					var ev struct {
						Type       string
						Sequence   int
						Deliveries json.RawMessage
					}
					_ = json.Unmarshal(raw, &ev)
					t.Logf("never received: %s (%s, sequence %d): deliveries %s", id, ev.Type, ev.Sequence, ev.Deliveries)
				}
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	hmu.Lock()
	for id, attempts := range received {
		increasing := true
		for i := 1; i < len(attempts); i++ {
			increasing = increasing && attempts[i] > attempts[i-1]
		}
		if !redelivered[id] && !increasing {
			t.Errorf("event %s was sent again as a new delivery: attempts %v", id, attempts)
		}
	}
	for _, r := range resent {
		t.Errorf("acct_sum endpoint delivery sent again as new: %s", r)
	}
	for id := range deliveredBefore {
		if len(received[id]) > 0 && !redelivered[id] {
			t.Errorf("event %s, recorded as delivered before a kill, was sent again (attempts %v)", id, received[id])
		}
	}
	hmu.Unlock()

	_, vkey := p.get(t, "/.well-known/log-key", false)
	p.stop(t)
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Check(ledgerAt, v); err != nil {
		t.Fatalf("ledger.Check after %d kills: %v", rounds, err)
	}
	kinds := map[string]int{}
	for _, w := range all {
		kinds[w.kind]++
	}
	t.Logf("answers lost to the kills and retried with their key: %v; events seen delivered before a kill: %d", retried, len(deliveredBefore))
	t.Logf("%d SIGKILLs: acknowledged %v; %d events, %d invoice series; ledger.Check clean", rounds, kinds, len(events), len(series))
}

// x402Report is the body of an x402 report of payment n: its own
// transaction and EIP-3009 nonce.
func x402Report(n int) []byte {
	tx, nonce := crashTx(3_000_000+n), crashTx(4_000_000+n)
	amount := strconv.Itoa(1_000_000 + n)
	accepted := fmt.Sprintf(`{"amount":"%s","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","extra":{"name":"USD Coin","version":"2"},"maxTimeoutSeconds":60,"network":"eip155:8453","payTo":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc","scheme":"exact"}`, amount)
	return []byte(fmt.Sprintf(`{"buyer":{"consumerCountry":"DE"},"paymentPayload":{"accepted":%s,"payload":{"authorization":{"from":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","nonce":"%s","to":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc","validAfter":"0","validBefore":"9999999999","value":"%s"},"signature":"0x00"},"resource":{"mimeType":"application/json","url":"https://api.example.com/weather"},"x402Version":2},"paymentRequirements":%s,"settleResponse":{"network":"eip155:8453","payer":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","success":true,"transaction":"%s"}}`,
		accepted, nonce, amount, accepted, tx))
}

// TestCrashX402Queue kills the server while x402 reports are queued
// (Prefer: respond-async; the chain's RPC endpoint does not answer, so
// they stay queued): every 202 entry is still queued after the restart,
// and a retry of any report with its Idempotency-Key answers that entry
// (202, never a 409, never another entry).
func TestCrashX402Queue(t *testing.T) { crashX402Queue(t, "") }

// TestCrashX402QueuePostgres is the same on the PostgreSQL store (skipped
// without a server: pgtest).
func TestCrashX402QueuePostgres(t *testing.T) { crashX402Queue(t, pgtest.Schema(t)) }

func crashX402Queue(t *testing.T, storeURL string) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	dir := t.TempDir()
	// Nothing listens on the discard port: every chain read fails at once.
	flags := []string{"-base-mode", "required", "-base-rpc", "http://127.0.0.1:9", "-chain-timeout", "1s"}
	if storeURL != "" {
		flags = append(flags, "-store", storeURL)
	}
	rng := rand.New(rand.NewPCG(61, 3))
	type entry struct {
		n             int
		key           string
		status        int
		id, createdAt string
		state, txHash string
	}
	var (
		mu      sync.Mutex
		acked   []*entry
		unknown []*entry
		next    int
	)
	post := func(p *serverProc, e *entry) (int, []byte, http.Header) {
		req, _ := http.NewRequest("POST", p.base+"/v1/x402/settlements", bytes.NewReader(x402Report(e.n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Key", demoKey)
		req.Header.Set("Prefer", "respond-async")
		req.Header.Set("Idempotency-Key", e.key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, nil
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, nil, nil
		}
		return resp.StatusCode, raw, resp.Header
	}
	parse := func(raw []byte) (id, createdAt, state, txHash string) {
		var v struct{ ID, CreatedAt, State, TxHash string }
		_ = json.Unmarshal(raw, &v)
		return v.ID, v.CreatedAt, v.State, v.TxHash
	}
	check := func(p *serverProc, es []*entry) {
		t.Helper()
		for _, e := range es {
			status, raw := p.getAs(t, "/v1/x402/settlements/"+e.id, demoKey)
			id, created, state, tx := parse(raw)
			if status != 200 || id != e.id || created != e.createdAt || state != "queued" || tx != e.txHash {
				t.Errorf("queued report %d (%s) after the restart: %d %s", e.n, e.id, status, raw)
			}
			status, raw, h := post(p, e)
			id, created, _, _ = parse(raw)
			if status != 202 || id != e.id || created != e.createdAt || h.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry of queued report %d (key %s) after the restart: %d %s, want 202 replaying %s", e.n, e.key, status, raw, e.id)
			}
		}
	}
	for round := 0; round <= rounds; round++ {
		p := startServer(t, dir, flags...)
		mu.Lock()
		retry := unknown
		unknown = nil
		old := slices.Clone(acked)
		mu.Unlock()
		check(p, old)
		for _, e := range retry {
			status, raw, _ := post(p, e)
			if status != 202 {
				t.Errorf("retry after the restart of report %d with its key %s: %d %s", e.n, e.key, status, raw)
				continue
			}
			e.status = status
			e.id, e.createdAt, e.state, e.txHash = parse(raw)
			acked = append(acked, e)
		}
		if round == rounds {
			break
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					mu.Lock()
					e := &entry{n: next, key: fmt.Sprintf("x402-crash61-%d", next)}
					next++
					mu.Unlock()
					status, raw, _ := post(p, e)
					mu.Lock()
					switch {
					case status == 202:
						e.status = status
						e.id, e.createdAt, e.state, e.txHash = parse(raw)
						acked = append(acked, e)
					case status == 0:
						unknown = append(unknown, e)
					case ctx.Err() == nil:
						t.Errorf("report %d: %d %s", e.n, status, raw)
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(500)) * time.Millisecond)
		cancel()
		p.kill()
		wg.Wait()
	}
	t.Logf("%d SIGKILLs: %d x402 reports queued and found again, each replayed by its key", rounds, len(acked))
}

// TestKillRightAfterThresholdCrossing kills the server as soon as the sale
// that takes acct_sum over the Art. 59c threshold is acknowledged, before
// or while the account.threshold_crossed event is appended: after the
// restart the event is there, once, and a retry of the sale replays it.
func TestKillRightAfterThresholdCrossing(t *testing.T) {
	cycles := 4
	if testing.Short() {
		cycles = 2
	}
	for c := range cycles {
		dir := t.TempDir()
		writeCrashAccounts(t, dir)
		p := startServer(t, dir)
		var crossing *crashWrite
		for n := 0; crossing == nil && n < 40; n++ {
			w := &crashWrite{kind: "settle", method: "POST", path: "/settlements", apiKey: sumKey, idemKey: fmt.Sprintf("cross-%d-%d", c, n),
				body: []byte(fmt.Sprintf(`{"amountUsdc":"%d.00","txHash":"%s","timestamp":"2026-04-10T14:30:00Z","payerWallet":"%s","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}`,
					2500+c*100, crashTx(5_000_000+100*c+n), crashWallets[n%3]))}
			status, resp, _ := p.send(w)
			if status != 201 {
				t.Fatalf("sale %d: %d %s", n, status, resp)
			}
			w.status, w.resp = status, resp
			if strings.Contains(string(resp), `"crossed":true`) {
				crossing = w
			}
		}
		if c%2 == 1 {
			time.Sleep(time.Duration(c) * time.Millisecond)
		}
		p.kill()
		if crossing == nil {
			t.Fatal("no sale crossed the threshold")
		}
		p = startServer(t, dir)
		var events []string
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, raw := p.getAs(t, "/v1/events?limit=200", sumKey)
			var page struct {
				Data []struct{ ID, Type string }
			}
			_ = json.Unmarshal(raw, &page)
			events = events[:0]
			for _, e := range page.Data {
				if e.Type == "account.threshold_crossed" {
					events = append(events, e.ID)
				}
			}
			if len(events) > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(events) != 1 {
			t.Errorf("cycle %d: %d account.threshold_crossed events after the kill, want 1: %v", c, len(events), events)
		}
		status, resp, _ := p.send(crossing)
		if status != 201 || !bytes.Equal(resp, crossing.resp) {
			t.Errorf("cycle %d: retry of the crossing sale: %d %s", c, status, resp)
		}
		p.kill()
	}
}

// fakeBaseNode answers Base JSON-RPC for the x402 reports of x402Report:
// the receipt of payment n's transaction carries USDC's
// AuthorizationUsed(payer, nonce n) and the Transfer of its amount, mined
// in block 10 (head 12), as exampleBaseNode in evmverify's examples.
func fakeBaseNode(t *testing.T, payments int) string {
	const (
		block = "0x5b0c9e2c5c3d1f6c9a4d8be1d0a0ad6e8c6e1d8ef1e8b6e4a3f9d6b1c2a3e4f5"
		usdc  = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
	)
	receipts := map[string]string{}
	for n := range payments {
		tx, nonce := crashTx(3_000_000+n), crashTx(4_000_000+n)
		receipts[tx] = `{"transactionHash":"` + tx + `","status":"0x1","blockNumber":"0xa","blockHash":"` + block + `",
		  "from":"0x90f79bf6eb2c4f870365e785982e1f101e93b906","to":"` + usdc + `","logs":[
		  {"address":"` + usdc + `","logIndex":"0x0","data":"0x","topics":["0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5",
		   "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8","` + nonce + `"]},
		  {"address":"` + usdc + `","logIndex":"0x1","data":"0x` + fmt.Sprintf("%064x", 1_000_000+n) + `",
		   "topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
		   "0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8","0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"]}]}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		var ref string
		if len(req.Params) > 0 {
			_ = json.Unmarshal(req.Params[0], &ref)
		}
		result := "null"
		switch req.Method {
		case "eth_chainId":
			result = `"0x2105"`
		case "eth_blockNumber":
			result = `"0xc"`
		case "eth_syncing":
			result = "false"
		case "eth_getTransactionReceipt":
			if rc, ok := receipts[strings.ToLower(ref)]; ok {
				result = rc
			}
		case "eth_getBlockByNumber":
			if ref == "0xa" {
				result = `{"number":"0xa","hash":"` + block + `","parentHash":"0x` + strings.Repeat("09", 32) + `","timestamp":"0x69d90b40"}`
			}
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCrashX402Recording kills the server while x402 reports are recorded,
// some at once and some from the queue (Prefer: respond-async): after the
// restarts every report is recorded exactly once, every queue entry says
// recorded with its record, a retry of any report with its key answers
// that record, and the invoice numbers are gap-free.
func TestCrashX402Recording(t *testing.T) { crashX402Recording(t, "") }

// TestCrashX402RecordingPostgres is the same on the PostgreSQL store
// (skipped without a server: pgtest).
func TestCrashX402RecordingPostgres(t *testing.T) { crashX402Recording(t, pgtest.Schema(t)) }

func crashX402Recording(t *testing.T, storeURL string) {
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	const payments = 4000
	dir := t.TempDir()
	flags := []string{"-base-mode", "required", "-base-rpc", fakeBaseNode(t, payments)}
	if storeURL != "" {
		flags = append(flags, "-store", storeURL)
	}
	rng := rand.New(rand.NewPCG(61, 4))
	type report struct {
		n      int
		async  bool
		key    string
		status int
		resp   []byte
	}
	var (
		mu      sync.Mutex
		reports []*report
		next    int
	)
	post := func(p *serverProc, e *report) (int, []byte) {
		req, _ := http.NewRequest("POST", p.base+"/v1/x402/settlements", bytes.NewReader(x402Report(e.n)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Key", demoKey)
		if e.async {
			req.Header.Set("Prefer", "respond-async")
		}
		req.Header.Set("Idempotency-Key", e.key)
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
	var p *serverProc
	for round := 0; round < rounds; round++ {
		p = startServer(t, dir, flags...)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					mu.Lock()
					if next == payments {
						mu.Unlock()
						return
					}
					e := &report{n: next, async: next%2 == 0, key: fmt.Sprintf("x402rec-%d", next)}
					next++
					reports = append(reports, e)
					mu.Unlock()
					status, raw := post(p, e)
					mu.Lock()
					e.status, e.resp = status, raw
					if status != 0 && status != 201 && status != 202 && ctx.Err() == nil {
						t.Errorf("report %d: %d %s", e.n, status, raw)
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(500)) * time.Millisecond)
		cancel()
		p.kill()
		wg.Wait()
	}
	p = startServer(t, dir, flags...)
	// Every report, retried with its key, is (or becomes) one record.
	records := map[string]int{} // record id → report
	// On PostgreSQL a killed server's hold on the queue lasts its lease
	// (ingest: 30 s) before the restarted one runs it.
	deadline := time.Now().Add(45 * time.Second)
	for _, e := range reports {
		var status int
		var raw []byte
		for ; ; time.Sleep(50 * time.Millisecond) {
			status, raw = post(p, &report{n: e.n, key: e.key})
			if status != 202 || time.Now().After(deadline) {
				break
			}
		}
		if status != 201 && status != 200 {
			t.Errorf("report %d (first answer %d) retried with its key after the restarts: %d %s", e.n, e.status, status, raw)
			continue
		}
		id := jsonID(raw)
		if other, ok := records[id]; ok {
			t.Errorf("reports %d and %d answered with one record %s", other, e.n, id)
		}
		records[id] = e.n
		if e.status == 201 && !e.async && !bytes.Equal(raw, e.resp) {
			t.Errorf("report %d: the retry answers another record:\n got %s\nwant %s", e.n, raw, e.resp)
		}
		if e.status == 202 {
			status, st := p.getAs(t, "/v1/x402/settlements/"+jsonID(e.resp), demoKey)
			if status != 200 || !strings.Contains(string(st), `"recorded"`) {
				t.Errorf("queued report %d after the restarts: %d %s", e.n, status, st)
			}
		}
	}
	invoices := invoiceNumbers(t, p)
	slices.Sort(invoices)
	for i, id := range invoices {
		if want := fmt.Sprintf("F402-2026-%06d", i+1); id != want {
			t.Fatalf("invoice numbers: position %d is %s, want %s (of %d)", i, id, want, len(invoices))
		}
	}
	if len(invoices) != len(records) {
		t.Errorf("%d invoices for %d records", len(invoices), len(records))
	}
	t.Logf("%d SIGKILLs: %d x402 reports, %d records, invoices gap-free", rounds, len(reports), len(records))
}
