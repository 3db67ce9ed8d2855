package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestKillDuringWebhookDelivery kills the server with SIGKILL while a
// delivery is in flight (the receiver holds the first request open), then
// restarts it: every event reaches the receiver, the cut one again with the
// same event id and a higher attempt number, and every request verifies.
func TestKillDuringWebhookDelivery(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"-webhooks-allow-loopback", "-webhook-timeout", "5s"}
	p := startServer(t, dir, flags...)

	type hit struct {
		event   string
		attempt int
		err     error
	}
	var (
		mu      sync.Mutex
		hits    []hit
		secret  string
		release = make(chan struct{})
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		attempt, _ := strconv.Atoi(r.Header.Get(webhooks.HeaderAttempt))
		h := hit{event: r.Header.Get(webhooks.HeaderEventID), attempt: attempt,
			err: webhooks.Verify([]string{secret}, r.Header.Get(webhooks.HeaderSignature), r.Header.Get(webhooks.HeaderTimestamp), body, 0)}
		hits = append(hits, h)
		first := len(hits) == 1
		mu.Unlock()
		if first {
			select { // hold the first delivery open until the server is killed
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	defer close(release)

	req, _ := http.NewRequest("POST", p.base+"/v1/webhook-endpoints", strings.NewReader(`{"url":"`+receiver.URL+`/hook"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", demoKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ep struct{ ID, Secret string }
	err = json.NewDecoder(resp.Body).Decode(&ep)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 || ep.Secret == "" {
		t.Fatalf("create endpoint: %d %v", resp.StatusCode, err)
	}
	mu.Lock()
	secret = ep.Secret
	mu.Unlock()

	var events []string
	for n := range 5 {
		status, body := p.post(n)
		if status != 201 {
			t.Fatalf("post %d: %d %s", n, status, body)
		}
		var rec struct{ ID string }
		_ = json.Unmarshal(body, &rec)
		events = append(events, "evt_"+rec.ID)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	delivered := func() map[string][]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]int{}
		for i, h := range hits {
			if i > 0 { // the first request never got an answer
				out[h.event] = append(out[h.event], h.attempt)
			}
		}
		return out
	}
	waitFor("the first request and the other four deliveries", func() bool { return len(delivered()) == 4 })
	p.kill()

	p = startServer(t, dir, flags...)
	waitFor("all five events delivered after the restart", func() bool { return len(delivered()) == 5 })
	mu.Lock()
	cut := hits[0]
	all := append([]hit(nil), hits...)
	mu.Unlock()
	for _, h := range all {
		if h.err != nil {
			t.Errorf("%s #%d does not verify: %v", h.event, h.attempt, h.err)
		}
	}
	got := delivered()
	for _, id := range events {
		if len(got[id]) == 0 {
			t.Errorf("%s lost", id)
		}
	}
	if again := got[cut.event]; cut.attempt != 1 || len(again) != 1 || again[0] != 2 {
		t.Errorf("the cut delivery %s #%d came again as attempts %v, want [2]", cut.event, cut.attempt, again)
	}
	// The receiver has answered the second attempt; the server records the
	// answer just after: poll for it rather than race it.
	var status int
	var raw []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, raw = p.get(t, "/v1/events/"+cut.event, true)
		if status == 200 && strings.Contains(string(raw), `"status":"delivered"`) || time.Now().After(deadline) {
			break
		}
	}
	if status != 200 || !strings.Contains(string(raw), `"status":"delivered"`) {
		t.Errorf("event after the restart: %d %s", status, raw)
	}
}
