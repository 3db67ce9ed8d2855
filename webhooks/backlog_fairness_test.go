package webhooks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestBacklogOfHangingReceiversDoesNotHoldUpOthers: an account whose 16
// receivers hang builds a backlog of a little over 16,384 due deliveries
// (1,030 settlements × 16 endpoints), more than one scan of the due index
// looks at. Another account's delivery, due after them, still goes out at
// once ("a slow receiver does not hold up the others"). A review found it
// waiting until hanging attempts timed out: every scan began at the start
// and stopped at the bound; a scan cut short now goes on where it stopped.
func TestBacklogOfHangingReceiversDoesNotHoldUpOthers(t *testing.T) {
	env := newRealEnv(t, webhooks.Options{Timeout: 5 * time.Minute})
	stop := make(chan struct{})
	var hung atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
		w.WriteHeader(500)
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) })
	for i := range webhooks.MaxEndpoints {
		if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: fmt.Sprintf("%s/hang/%d", hang.URL, i)}); err != nil {
			t.Fatal(err)
		}
	}
	fast := newRealReceiver(t, "acct_1", env.clock)
	ep, err := env.svc.CreateEndpoint(ctx, "acct_1", webhooks.EndpointRequest{URL: fast.srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	fast.secrets = []string{ep.Secret}

	const n = 1030 // 16 × 1030 = 16,480 due deliveries > 1<<14
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				env.settle("acct_0", i)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d settlements in %v", n, time.Since(start))
	// Let the fan-out write every delivery.
	waitForWithin(t, 60*time.Second, "the backlog fanned out", func() bool {
		st, err := env.svc.Stats()
		return err == nil && st.Pending >= 16*n
	})
	t.Logf("backlog fanned out after %v; %d requests hanging", time.Since(start), hung.Load())
	res := env.settle("acct_1", 5000)
	deadline := time.Now().Add(10 * time.Second)
	for !fast.has(res.Record.Ledger.Index) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !fast.has(res.Record.Ledger.Index) {
		st, _ := env.svc.Stats()
		t.Fatalf("another account's event was not delivered within 10 s behind %d pending deliveries of a hanging account (%d requests in flight to it)", st.Pending, hung.Load())
	}
}
