package webhooks_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// configReplica is one replica of a shared log in the tests of accounts
// files that differ between replicas: its data directory holds the keys
// of the first replica (keysFrom, "" for the first), it keeps books for
// accounts and starts its webhook service with the endpoints and the
// generation of its own accounts file.
type configReplica struct {
	dir    string
	engine *fiscal.Engine
	svc    *webhooks.Service
}

func startConfigReplica(t *testing.T, store, dir, keysFrom string, accounts []fiscal.Account, clock func() time.Time,
	opts webhooks.Options) *configReplica {
	t.Helper()
	if keysFrom != "" {
		fiscaltest.CopyKeys(t, filepath.Join(keysFrom, "keys"), filepath.Join(dir, "keys"))
	}
	e, err := fiscal.New(fiscal.Config{Dir: dir, Store: store, Accounts: accounts, Clock: clock, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if opts.Logger == nil {
		opts.Logger = testLogger()
	}
	svc, err := webhooks.New(e, opts)
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return &configReplica{dir: dir, engine: e, svc: svc}
}

// endpointURLs lists the URLs of an account's endpoints, sorted.
func endpointURLs(t *testing.T, svc *webhooks.Service, account string) []string {
	t.Helper()
	list, err := svc.Endpoints(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, ep := range list {
		urls = append(urls, ep.URL)
	}
	slices.Sort(urls)
	return urls
}

const (
	hookW = "https://erp.example.com/w" // in the old and the new accounts file
	hookX = "https://erp.example.com/x" // added to acct_0 by the new file
	hookY = "https://crm.example.com/y" // of acct_1, an account only the new file has
)

var (
	secretW = "whsec_operator_chosen_secret_www1"
	secretX = "whsec_operator_chosen_secret_xxx1"
	secretY = "whsec_operator_chosen_secret_yyy1"
	// oldFile and newFile are the endpoints of an accounts file before and
	// after an operator added an endpoint to acct_0 and the account acct_1
	// with one of its own.
	oldFile = map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: hookW, Secrets: []string{secretW}}},
	}
	newFile = map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: hookW, Secrets: []string{secretW}}, {URL: hookX, Secrets: []string{secretX}}},
		"acct_1": {{URL: hookY, Secrets: []string{secretY}}},
	}
)

// TestReplicasWithDifferentAccountsFilesKeepEachOthersEndpoints: during a
// rolling deploy one replica runs the new accounts file (an endpoint added
// to acct_0, a new account acct_1 with its own endpoint) while another
// still runs the old one. A review found the old replica's start deleting
// the endpoints only the new file lists (its start made the stored set its
// file's), and the new replica's next start creating them anew, with a
// later first sequence: the events between were never delivered to them
// and their pending deliveries were cancelled. A replica must not delete
// what it merely does not know: on a shared log only a file of a higher
// generation than any replica applied removes endpoints.
func TestReplicasWithDifferentAccountsFilesKeepEachOthersEndpoints(t *testing.T) {
	store := pgtest.Schema(t)
	clock := &manualClock{now: webhookTestStart}
	sellers := fiscaltest.Accounts(irishSeller, irishSeller)
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startConfigReplica(t, store, dirA, "", sellers, clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: newFile})
	before, err := a.svc.Endpoints(ctx, "acct_1")
	if err != nil || len(before) != 1 {
		t.Fatalf("acct_1's endpoints on the new replica: %+v %v", before, err)
	}
	// The old replica (re)starts: it knows acct_0 with one endpoint only.
	b := startConfigReplica(t, store, dirB, dirA, sellers[:1], clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: oldFile})
	if got, want := endpointURLs(t, a.svc, "acct_0"), []string{hookW, hookX}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints after the old replica's start: %q, want %q", got, want)
	}
	after, err := a.svc.Endpoints(ctx, "acct_1")
	if err != nil || len(after) != 1 || after[0].ID != before[0].ID || after[0].FirstSequence != before[0].FirstSequence {
		t.Errorf("acct_1's endpoints after the old replica's start: %+v %v, want %+v kept", after, err, before)
	}
	// The old replica lists acct_0's endpoints as they are stored, its
	// own and the one it has no secret for.
	if got, want := endpointURLs(t, b.svc, "acct_0"), []string{hookW, hookX}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints as the old replica lists them: %q, want %q", got, want)
	}
}

// TestReplicasConfigGenerationRemoves: the rule of removals on a shared
// log. A file of a higher generation than any replica applied is the
// operator's new configuration: its start removes the accounts file's
// endpoints it no longer lists. A replica still on an older generation
// neither removes nor brings back anything; one of the same generation
// adds the endpoints it lists that are missing and removes none.
func TestReplicasConfigGenerationRemoves(t *testing.T) {
	store := pgtest.Schema(t)
	clock := &manualClock{now: webhookTestStart}
	sellers := fiscaltest.Accounts(irishSeller, irishSeller)
	dirA, dirB, dirC := t.TempDir(), t.TempDir(), t.TempDir()
	gen1 := map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: hookW, Secrets: []string{secretW}}, {URL: hookX, Secrets: []string{secretX}}},
	}
	gen2 := map[string][]webhooks.EndpointConfig{ // W removed, Y added
		"acct_0": {{URL: hookX, Secrets: []string{secretX}}},
		"acct_1": {{URL: hookY, Secrets: []string{secretY}}},
	}
	a := startConfigReplica(t, store, dirA, "", sellers, clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: gen1, ConfigGeneration: 1})
	xBefore, _ := a.svc.Endpoints(ctx, "acct_0")
	a.engine.Close()

	b := startConfigReplica(t, store, dirB, dirA, sellers, clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: gen2, ConfigGeneration: 2})
	if got, want := endpointURLs(t, b.svc, "acct_0"), []string{hookX}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints after generation 2: %q, want %q (W removed by the newer file)", got, want)
	}
	if got, want := endpointURLs(t, b.svc, "acct_1"), []string{hookY}; !slices.Equal(got, want) {
		t.Errorf("acct_1's endpoints after generation 2: %q, want %q", got, want)
	}
	xAfter, _ := b.svc.Endpoints(ctx, "acct_0")
	if len(xBefore) != 2 || len(xAfter) != 1 || xAfter[0].ID != xBefore[1].ID || xAfter[0].FirstSequence != xBefore[1].FirstSequence {
		t.Errorf("X before %+v, after %+v: want it kept as it was", xBefore, xAfter)
	}

	// A replica restarting on the old file (generation 1) brings W back
	// nowhere and removes neither X nor Y.
	a = startConfigReplica(t, store, dirA, "", sellers, clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: gen1, ConfigGeneration: 1})
	if got, want := endpointURLs(t, a.svc, "acct_0"), []string{hookX}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints after a generation-1 replica's start: %q, want %q", got, want)
	}
	if got, want := endpointURLs(t, a.svc, "acct_1"), []string{hookY}; !slices.Equal(got, want) {
		t.Errorf("acct_1's endpoints after a generation-1 replica's start: %q, want %q", got, want)
	}

	// A replica of generation 2 whose file lacks Y (the operator edited
	// it without raising the generation) adds what it lists, removes
	// nothing.
	gen2b := map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: hookX, Secrets: []string{secretX}}, {URL: hookW + "2", Secrets: []string{secretW}}},
	}
	c := startConfigReplica(t, store, dirC, dirA, sellers, clock.Now,
		webhooks.Options{Sender: &fakeSender{}, Configured: gen2b, ConfigGeneration: 2})
	if got, want := endpointURLs(t, c.svc, "acct_0"), []string{hookW + "2", hookX}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints after a second generation-2 file: %q, want %q", got, want)
	}
	if got, want := endpointURLs(t, c.svc, "acct_1"), []string{hookY}; !slices.Equal(got, want) {
		t.Errorf("acct_1's endpoints after a second generation-2 file: %q, want %q (only a higher generation removes)", got, want)
	}
}

// TestOneServerConfigIsTheWholeTruth: on a ledger of one server there is
// no other replica whose file could know more: the accounts file's
// endpoints are exactly those it lists, whatever its generation (an
// endpoint taken out of the file is removed at the next start, even by a
// file of a lower generation than the one applied before).
func TestOneServerConfigIsTheWholeTruth(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{Configured: newFile, ConfigGeneration: 3})
	if got, want := endpointURLs(t, env.svc, "acct_0"), []string{hookW, hookX}; !slices.Equal(got, want) {
		t.Fatalf("acct_0's endpoints: %q, want %q", got, want)
	}
	env.opts = webhooks.Options{Configured: oldFile, ConfigGeneration: 1}
	env.reopen()
	if got, want := endpointURLs(t, env.svc, "acct_0"), []string{hookW}; !slices.Equal(got, want) {
		t.Errorf("acct_0's endpoints after the file dropped X: %q, want %q", got, want)
	}
	if got := endpointURLs(t, env.svc, "acct_1"); len(got) != 0 {
		t.Errorf("acct_1's endpoints after the file dropped Y: %q, want none", got)
	}
}

// TestReplicasDeliverOnlyWhatTheyCanSign: a delivery to an accounts-file
// endpoint a replica's file does not list (it has no secret for it), or of
// an account it keeps no books for, is left to a replica that has them,
// which delivers it exactly once. A review found the replica on the old
// file claiming such deliveries and recording a failed attempt each time
// ("no longer in the accounts file", NOT_FOUND), which put the delivery
// back by the retry schedule (30 s, then 1 min, …, up to giving it up
// after 72 h) although the replica next to it could have sent it at once.
func TestReplicasDeliverOnlyWhatTheyCanSign(t *testing.T) {
	store := pgtest.Schema(t)
	clock := &manualClock{now: webhookTestStart} // never moves: a failed attempt's retry never comes
	sellers := fiscaltest.Accounts(irishSeller, irishSeller)
	dirA, dirB, dirN := t.TempDir(), t.TempDir(), t.TempDir()
	sendA, sendB := &fakeSender{ticks: new(atomic.Int64)}, &fakeSender{ticks: new(atomic.Int64)}
	// The new replica applies the new file, then is down for a while.
	a := startConfigReplica(t, store, dirA, "", sellers, clock.Now, webhooks.Options{Sender: sendA, Configured: newFile})
	a.engine.Close()
	startConfigReplica(t, store, dirB, dirA, sellers[:1], clock.Now, webhooks.Options{Sender: sendB, Configured: oldFile})

	// Another process records one payment of each account (an engine
	// without a dispatcher), and reads the deliveries.
	fiscaltest.CopyKeys(t, filepath.Join(dirA, "keys"), filepath.Join(dirN, "keys"))
	n, err := fiscal.New(fiscal.Config{Dir: dirN, Store: store, Accounts: sellers, Clock: clock.Now, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	reader, err := webhooks.New(n, webhooks.Options{NoDispatcher: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	event := map[string]string{}
	for i, acct := range []string{"acct_0", "acct_1"} {
		books, err := n.Books(acct)
		if err != nil {
			t.Fatal(err)
		}
		res, err := books.Settle(ctx, fiscaltest.Request(i+1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		event[acct] = "evt_" + res.Record.ID
	}
	waitFor(t, "the old replica's delivery to W", func() bool { return sendB.count() >= 1 })
	time.Sleep(3 * time.Second) // the old replica looks at the shared log every second
	deliveries := func(acct string) map[string]webhooks.Delivery {
		t.Helper()
		d, err := reader.Event(ctx, acct, event[acct])
		if err != nil {
			t.Fatal(err)
		}
		eps, err := reader.Endpoints(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		url := map[string]string{}
		for _, ep := range eps {
			url[ep.ID] = ep.URL
		}
		out := map[string]webhooks.Delivery{}
		for _, dl := range d.Deliveries {
			out[url[dl.EndpointID]] = dl
		}
		return out
	}
	for _, c := range []struct{ acct, url string }{{"acct_0", hookX}, {"acct_1", hookY}} {
		if dl, ok := deliveries(c.acct)[c.url]; !ok || dl.Status != webhooks.DeliveryPending || dl.Attempts != 0 {
			t.Errorf("%s's delivery to %s while only the old replica runs: %+v (found %v), want pending and never attempted", c.acct, c.url, dl, ok)
		}
	}
	for _, m := range sendB.messages() {
		if m.URL != hookW {
			t.Errorf("the old replica sent to %s, whose secret it does not have", m.URL)
		}
	}

	// The new replica comes back and delivers them, each once, signed
	// with its file's secret.
	startConfigReplica(t, store, dirA, "", sellers, clock.Now, webhooks.Options{Sender: sendA, Configured: newFile})
	waitFor(t, "the new replica's deliveries", func() bool {
		return deliveries("acct_0")[hookX].Status == webhooks.DeliveryDelivered && deliveries("acct_1")[hookY].Status == webhooks.DeliveryDelivered
	})
	secretOf := map[string]string{hookW: secretW, hookX: secretX, hookY: secretY}
	sent := map[string]int{}
	for _, m := range append(sendA.messages(), sendB.messages()...) {
		sent[m.URL+" "+m.EventID]++
		if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{secretOf[m.URL]}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); err != nil {
			t.Errorf("%s to %s: %v", m.EventID, m.URL, err)
		}
	}
	want := map[string]int{hookW + " " + event["acct_0"]: 1, hookX + " " + event["acct_0"]: 1, hookY + " " + event["acct_1"]: 1}
	if !maps.Equal(sent, want) {
		t.Errorf("attempts per endpoint and event: %v, want %v", sent, want)
	}
	for _, c := range []struct{ acct, url string }{{"acct_0", hookW}, {"acct_0", hookX}, {"acct_1", hookY}} {
		if dl := deliveries(c.acct)[c.url]; dl.Status != webhooks.DeliveryDelivered || dl.Attempts != 1 {
			t.Errorf("%s's delivery to %s: %+v, want delivered at the first attempt", c.acct, c.url, dl)
		}
	}
}
