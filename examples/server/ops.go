package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/durable"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/webhooks"
)

// defaultRetention is how long finished webhook delivery states and ingest
// queue entries are kept: 30 days, longer than the webhooks' 72-hour retry
// window and a monthly reconciliation of deliveries.
const defaultRetention = 30 * 24 * time.Hour

// retentionEvery is how often the retention pass runs (and how long after
// the start the first one does).
const retentionEvery = time.Hour

// newLogger is the server's logger: text or JSON lines on w, from the
// given level up.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}

// operatorKeyPath is where the operator key is kept by default.
func operatorKeyPath(data string) string { return filepath.Join(data, "keys", "operator.key") }

// operatorKey returns the operator key: the FISCAL402_OPERATOR_KEY value,
// else the content of file, else of <data>/keys/operator.key, which create
// makes (mode 0600, a new random key) when it is missing. Anyone who can
// read the data directory can read the ledger anyway, so a key kept there
// gives nobody more than they have; on another machine, hand the key to
// the backup command with FISCAL402_OPERATOR_KEY or -operator-key-file.
func operatorKey(file, data, env string, create bool) (string, error) {
	if env != "" {
		return strings.TrimSpace(env), checkOperatorKey("FISCAL402_OPERATOR_KEY", env)
	}
	path := file
	if path == "" {
		path = operatorKeyPath(data)
	}
	var fresh func() ([]byte, error)
	if file == "" && create {
		// Written whole and synced under a temporary name, then linked
		// (durable.Create): a crash or a power cut leaves the key or no
		// key, never an empty file that would keep the server from
		// starting again.
		fresh = func() ([]byte, error) {
			key, err := httpserver.NewAPIKey(rand.Reader)
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, err
			}
			return []byte("op_" + strings.TrimPrefix(key, "sk_") + "\n"), nil
		}
	}
	raw, err := durable.ReadOrCreate(path, 0o600, fresh)
	if err != nil {
		return "", fmt.Errorf("operator key: %w", err)
	}
	key := strings.TrimSpace(string(raw))
	return key, checkOperatorKey(path, key)
}

// heldByServer rewrites a refusal to open the ledger file at path that a
// running server holds (bbolt's lock: ledger.ErrUnavailable, and the lock
// is held now) into one that says so and what to do instead (remedy);
// any other error is returned as it is.
func heldByServer(err error, path, remedy string) error {
	if err == nil || !errors.Is(err, ledger.ErrUnavailable) {
		return err
	}
	unlock, lerr := tryLockFile(path)
	if lerr == nil {
		unlock()
	}
	if !errors.Is(lerr, errHeld) {
		return err
	}
	return fmt.Errorf("%s is open in a running server (another process holds its lock): %s", path, remedy)
}

// operatorKeySource names where operatorKey reads the key from.
func operatorKeySource(file, data, env string) string {
	switch {
	case env != "":
		return "FISCAL402_OPERATOR_KEY"
	case file != "":
		return file
	}
	return operatorKeyPath(data)
}

func checkOperatorKey(from, key string) error {
	if len(strings.TrimSpace(key)) < 32 {
		return fmt.Errorf("the operator key in %s is shorter than 32 characters: use a long random key (the server makes one in <data>/keys/operator.key)", from)
	}
	return nil
}

// retentionLoop prunes the webhook delivery states and ingest queue
// entries that finished longer than keep ago: every hour, or every keep
// when that is shorter (the first pass a minute after the start, or after
// keep). It is the engine's background work: the engine's Close stops it.
func retentionLoop(e *fiscal.Engine, hooks *webhooks.Service, payments *ingest.Service, keep time.Duration, m *metrics.Metrics, log *slog.Logger) func(stop <-chan struct{}) {
	return func(stop <-chan struct{}) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-stop; cancel() }()
		every := min(retentionEvery, keep)
		timer := time.NewTimer(min(time.Minute, keep))
		defer timer.Stop()
		for {
			select {
			case <-stop:
				return
			case <-timer.C:
			}
			cutoff := e.Now().Add(-keep)
			nd, errD := hooks.Prune(ctx, cutoff)
			ni, errI := payments.Prune(ctx, cutoff)
			m.ObservePruned("webhook_delivery", nd)
			m.ObservePruned("ingest_entry", ni)
			if err := errors.Join(errD, errI); err != nil && ctx.Err() == nil {
				log.Error("retention", "err", err, "webhook_deliveries", nd, "ingest_entries", ni)
			} else if nd+ni > 0 {
				log.Info("retention", "cutoff", cutoff.UTC().Format(time.RFC3339), "webhook_deliveries", nd, "ingest_entries", ni)
			}
			timer.Reset(every)
		}
	}
}

// accountSetter is what the engine offers to serve accounts added to (or
// sellers changed in) the accounts file without a restart
// (fiscal.Engine.SetAccounts). An engine without it gets key changes at
// once and new accounts and seller changes at the next start, with a line
// in the log saying so. (Not in /readyz: taking the instance out of a load
// balancer would stop every other account too.)
type accountSetter interface {
	SetAccounts(accounts []fiscal.Account) error
}

// accountsReloader re-reads the accounts file when it changes (polled) or
// on SIGHUP, and applies it: the keys always, the accounts and sellers when
// the engine can take them (accountSetter). The file is only ever replaced
// whole (the accounts commands and WriteAccountsFile rename a complete
// file into place), so a reload never reads half a file; one that does not
// parse is logged and counted, and the server keeps the accounts it has.
type accountsReloader struct {
	path    string
	engine  *fiscal.Engine
	handler *httpserver.Server
	metrics *metrics.Metrics
	log     *slog.Logger

	mu      sync.Mutex
	applied [sha256.Size]byte // the content last applied
	stat    fileStamp
	pending []string // accounts in the file the engine does not serve yet
	// webhooks are the file's endpoints the server started with: the
	// dispatcher delivers to those until the next start.
	webhooks map[string][]webhooks.EndpointConfig
}

type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	return fileStamp{fi.Size(), fi.ModTime()}
}

// start records the file the server started with.
func (a *accountsReloader) start(f *httpserver.AccountsFile) error {
	raw, err := os.ReadFile(a.path)
	if err != nil {
		return err
	}
	a.applied, a.stat = sha256.Sum256(raw), stampOf(a.path)
	a.webhooks = f.Webhooks()
	return nil
}

// watch reloads on SIGHUP and whenever the file's size or time changes
// (looked at every interval; 0: on SIGHUP only), until done.
func (a *accountsReloader) watch(done <-chan struct{}, hup <-chan os.Signal, every time.Duration) {
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-done:
			return
		case <-hup:
			a.reload("SIGHUP")
		case <-tick:
			a.mu.Lock()
			changed := stampOf(a.path) != a.stat
			a.mu.Unlock()
			if changed {
				a.reload("file changed")
			}
		}
	}
}

// reload reads the file and applies what changed.
func (a *accountsReloader) reload(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stat = stampOf(a.path)
	raw, err := os.ReadFile(a.path)
	if err == nil && sha256.Sum256(raw) == a.applied {
		a.metrics.ObserveAccountsReload("unchanged")
		return
	}
	if err == nil {
		err = a.apply()
	}
	if err != nil {
		a.metrics.ObserveAccountsReload("error")
		a.log.Error("accounts file not applied: the server keeps the accounts it has", "file", a.path, "why", why, "err", err)
		return
	}
	a.applied = sha256.Sum256(raw)
	a.metrics.ObserveAccountsReload("applied")
}

func (a *accountsReloader) apply() error {
	f, err := httpserver.LoadAccountsFile(a.path)
	if err != nil {
		return err
	}
	served := map[string]fiscal.Account{}
	for _, acc := range a.engine.Accounts() {
		served[acc.ID] = acc
	}
	if setter, ok := any(a.engine).(accountSetter); ok {
		if err := setter.SetAccounts(f.EngineAccounts()); err != nil {
			return err
		}
		a.pending = nil
		// A registration stated from a day already past may cover sales
		// pending for seller_not_registered (Art. 57d Implementing
		// Regulation 282/2011): decide them again.
		rates.RetryRegistrationsInBackground(a.engine, a.log)
	} else {
		// Keys only for the accounts the engine serves: a key that
		// authenticates an account without books would answer 404 to
		// everything it sends.
		known := httpserver.AccountsFile{}
		a.pending = nil
		for _, e := range f.Accounts {
			acc, ok := served[e.ID]
			if !ok {
				a.pending = append(a.pending, e.ID)
				continue
			}
			known.Accounts = append(known.Accounts, e)
			if s, err := e.Seller.Normalised(); err == nil && !reflect.DeepEqual(s, acc.Seller) {
				a.log.Warn("the seller of an account changed in the accounts file: this engine takes seller changes at its next start", "account", e.ID)
			}
		}
		f = &known
		if len(a.pending) > 0 {
			a.log.Warn("accounts added to the accounts file are served after a restart: this engine cannot add accounts while it runs (fiscal.Engine has no SetAccounts)", "accounts", strings.Join(a.pending, ","))
		}
	}
	keys, err := f.Keys()
	if err != nil {
		return err
	}
	if err := a.handler.SetKeys(keys); err != nil {
		return err
	}
	a.log.Info("accounts file applied", "file", a.path, "accounts", len(f.Accounts))
	if changed := changedWebhooks(a.webhooks, f.Webhooks()); len(changed) > 0 {
		// README "Accounts": applied at the next start. The accounts, not
		// the URLs or secrets, which no log line carries.
		a.log.Warn("webhook endpoints changed in the accounts file are applied at the next start: until then the server delivers to those it started with", "accounts", strings.Join(changed, ","))
	}
	return nil
}

// changedWebhooks lists, sorted, the accounts whose configured webhook
// endpoints differ between two accounts files' Webhooks.
func changedWebhooks(was, now map[string][]webhooks.EndpointConfig) []string {
	var ids []string
	for id, list := range now {
		if !reflect.DeepEqual(list, was[id]) {
			ids = append(ids, id)
		}
	}
	for id := range was {
		if _, ok := now[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
