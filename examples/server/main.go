// Command server is the bundled fiscal402 HTTP service: it wires flags to a
// fiscal.Engine and serves it with httpserver.
//
// With no flags it listens on 127.0.0.1:8402, keeps its data in
// ./fiscal402-data, and on first start creates a demo seller account whose
// key it prints together with a ready-to-paste curl command. The environment
// variable FISCAL402_DEMO_KEY sets the demo key (for scripts).
//
// Usage:
//
//	go run ./examples/server [flags]                  the server
//	go run ./examples/server backup [-o FILE] ...     a hot copy of the running server's ledger
//	go run ./examples/server check [-data DIR] ...    verify a ledger file (a restored copy)
//	go run ./examples/server accounts list|create|rotate-key|drop-old-keys ...
//	go run ./examples/server migrate -store URL ...   copy the bbolt ledger into PostgreSQL (server stopped)
//	go run ./examples/server vat-rates export|check   the VAT rate table as a file; check one for -vat-rates
//	go run ./examples/server -rotate-receipt-key      retire the receipt key, make a new one (server stopped)
//
// Every flag is also read from FISCAL402_<NAME> (upper case, '-' as '_'); the
// command line wins; a FISCAL402_ variable neither the server nor its
// commands read is refused by name (checkEnv). README "Configuration" has
// the table of all of them; `server -h` prints them. The main ones:
//
//	-listen addr        address to listen on (default 127.0.0.1:8402)
//	-data dir           data directory: ledger, keys, accounts (default ./fiscal402-data)
//	-accounts file      accounts file (default <data>/accounts.json; created with a demo account if missing, in an existing directory or -data)
//	-fx-file file       newer ECB rates (eurofxref CSV or XML) merged over the embedded snapshot: a fixed table
//	-fx-refresh         fetch each day's ECB rates after 16:00 Frankfurt time and keep them in the ledger (default true)
//	-vat-rates file     a VAT rate table file used instead of the embedded one (server vat-rates export writes that one)
//	-log-format, -log-level   text or json log lines on stderr; debug, info, warn or error
//	-sandbox-quota n    evaluate and simulate calls per agent per UTC day (default 10)
//	-operator-key-file  the operator key of /metrics and /v1/admin/backup (default <data>/keys/operator.key)
//	-retention d        prune finished webhook deliveries and ingest entries older than d (default 720h)
//	-vies off|live, -base-*, -ethereum-*, -rate-limit, -public-url, -webhooks-*, ...
//	-cpuprofile file    a CPU profile of the serving, written when the server stops on SIGTERM or SIGINT
//
// The server collects garbage at GOGC=400 (four times Go's default: less CPU
// per request for a larger heap) unless the environment sets GOGC, and with the
// bbolt ledger schedules goroutines on one more P than the CPUs Go found
// (GOMAXPROCS) unless the environment sets GOMAXPROCS (setProcsDefault).
//
// Operations (README "Operations"): GET /healthz and /readyz for probes,
// GET /metrics for Prometheus, GET /v1/admin/backup for a hot copy; the
// server re-reads the accounts file when it changes or on SIGHUP.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/httpconn"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/webhooks"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// -h: the usage is printed, and asking for it is no failure.
			return
		}
		fmt.Fprintln(os.Stderr, "fiscal402:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command line that cannot be run: a flag not defined, a
// value that does not parse, an argument or command not taken, a required
// flag or argument left out. The process exits with status 2 for it, as
// Go's flag package does (1 is a failure of the work itself), so a script
// or a service manager can tell a mistyped unit file from a failure.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usagef is a usageError.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// parseArgs parses args into fs; a command line fs cannot parse is a
// usageError, and -h the flag.ErrHelp it is.
func parseArgs(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError{err}
	}
	return err
}

type options struct {
	listen, data, accounts, fxFile, origin string
	rotate, fxRefresh                      bool
	publicURL                              string
	rateLimit                              float64
	rateBurst                              int
	authFailRate                           float64
	authFailBurst                          int
	authFailMaxBackoff                     time.Duration
	trustedProxies                         string
	documentHosts                          string
	check                                  string
	webhooks                               webhooks.Options
	logFormat, logLevel                    string
	sandboxQuota                           int
	operatorKeyFile                        string
	metricsPublic                          bool
	readyFXMaxAge                          time.Duration
	retention                              time.Duration
	accountsReload                         time.Duration
	store                                  string
	cpuProfile                             string
	vatRates                               string
}

// run is the command: the server, or one of the operator's subcommands
// (backup, check, accounts, migrate), which are documented in README
// "Operations".
func run(args []string, stdout, stderr io.Writer) error {
	if err := checkEnv(os.Environ()); err != nil {
		if !asksHelp(args) {
			return err
		}
		// The refusal sends the operator to -h for the names: answer it,
		// and say what would have stopped a start.
		fmt.Fprintf(stderr, "fiscal402: warning: %v\n", err)
	}
	if len(args) > 0 {
		for _, c := range operatorCommands {
			if c.name == args[0] {
				return c.run(args[1:], stdout, stderr)
			}
		}
	}
	return serve(args, stdout, stderr)
}

// operatorCommands are the operator's subcommands: run dispatches to them
// and "server -h" lists them.
var operatorCommands = []struct {
	name, args, what string
	run              func(args []string, stdout, stderr io.Writer) error
}{
	{"backup", "[-o FILE] [-server URL]", "a verified hot copy of the running server's ledger", runBackup},
	{"check", "[-data DIR] [-recover]", "verify a ledger file (a restored copy) before serving it", runCheck},
	{"accounts", "list|create|rotate-key|drop-old-keys", "the accounts file: list, add accounts, rotate keys", runAccounts},
	{"migrate", "-store postgres://...", "copy the bbolt ledger into PostgreSQL (server stopped)", runMigrate},
	{"vat-rates", "export [-o FILE] | check FILE", "the VAT rate table: write the embedded one as a file, or check a file for -vat-rates", runVATRates},
}

// serverUsage is "server -h": how to run the server, its commands, then
// its flags.
func serverUsage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: server [flags]                 serve (README \"Configuration\")")
		fmt.Fprintln(w, "       server <command> [flags]       an operator's command (README \"Operations\"); <command> -h for its flags")
		fmt.Fprintln(w, "\ncommands:")
		for _, c := range operatorCommands {
			fmt.Fprintf(w, "  %s %s\n        %s\n", c.name, c.args, c.what)
		}
		fmt.Fprintln(w, "\nflags of the server (each also FISCAL402_<NAME>, upper case, '-' as '_'):")
		fs.PrintDefaults()
	}
}

// serverFlags defines the server's flags on fs.
func serverFlags(fs *flag.FlagSet, o *options, vf *viesFlags) *chainFlags {
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8402", "address to listen on")
	fs.StringVar(&o.data, "data", "fiscal402-data", "data directory (ledger, keys, accounts)")
	fs.StringVar(&o.accounts, "accounts", "", "accounts file (default <data>/accounts.json); created with the demo account if missing, only in a directory that exists or in -data")
	fs.StringVar(&o.fxFile, "fx-file", "", "ECB rates file (CSV or XML) merged over the embedded snapshot; a fixed table (no -fx-refresh)")
	fs.StringVar(&o.vatRates, "vat-rates", "", "VAT rate table file (server vat-rates export writes the embedded one to start from) used instead of the embedded table, e.g. one that covers the next year")
	fs.BoolVar(&o.fxRefresh, "fx-refresh", true, "fetch the ECB reference rates after each day's publication and keep them in the ledger (ignored with -fx-file)")
	fs.StringVar(&o.origin, "log-origin", fiscal.DefaultLogOrigin, "Merkle log origin")
	fs.BoolVar(&o.rotate, "rotate-receipt-key", false, "retire the active receipt signing key, create a new one, and exit (stop the server first)")
	vf.register(fs)
	chain := addChainFlags(fs)
	fs.StringVar(&o.publicURL, "public-url", "", "absolute base URL for the links in the manifest, agent card and OpenAPI document (default: each request's scheme and host)")
	fs.Float64Var(&o.rateLimit, "rate-limit", float64(httpserver.DefaultRateLimit), "requests per second per account on the keyed endpoints (0 = no limit)")
	fs.IntVar(&o.rateBurst, "rate-burst", 0, "burst of the rate limit (0 = twice rate-limit)")
	fs.Float64Var(&o.authFailRate, "auth-fail-rate", float64(httpserver.DefaultAuthFailureRate), "failed authentications per second per client address before it is blocked (0 = no limit)")
	fs.IntVar(&o.authFailBurst, "auth-fail-burst", httpserver.DefaultAuthFailureBurst, "failed authentications a client address may make at once")
	fs.DurationVar(&o.authFailMaxBackoff, "auth-fail-max-backoff", httpserver.DefaultAuthFailureMaxBackoff, "longest block of a client address after failed authentications (blocks double from 1s)")
	fs.StringVar(&o.check, "check", "quick", "ledger check before serving: quick (page structure, latest checkpoint, newest leaves; ~0.5 s at 1 M records) or full (every page, leaf and checkpoint; ~6 s at 1 M records)")
	fs.StringVar(&o.documentHosts, "document-host", "", "comma-separated Host header values whose published documents are cached without -public-url (default: localhost, 127.0.0.1, ::1)")
	fs.StringVar(&o.trustedProxies, "trusted-proxy", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed")
	fs.BoolVar(&o.webhooks.AllowLoopback, "webhooks-allow-loopback", false, "deliver webhooks to loopback addresses, also over http:// (local development)")
	fs.BoolVar(&o.webhooks.AllowPrivate, "webhooks-allow-private", false, "deliver webhooks to private network addresses")
	fs.DurationVar(&o.webhooks.Timeout, "webhook-timeout", 10*time.Second, "time limit of one webhook delivery attempt")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (one line per request and per event, on stderr)")
	fs.StringVar(&o.logLevel, "log-level", "info", "least level logged: debug, info, warn or error")
	fs.IntVar(&o.sandboxQuota, "sandbox-quota", catalog.DefaultPricing().SandboxQuotaPerDay, "evaluate and simulate calls per agent per UTC day (published default: 10)")
	fs.StringVar(&o.operatorKeyFile, "operator-key-file", "", "file holding the operator key of /metrics and /v1/admin/backup (default <data>/keys/operator.key, created on first start; FISCAL402_OPERATOR_KEY sets the key itself)")
	fs.BoolVar(&o.metricsPublic, "metrics-public", false, "serve /metrics without the operator key (a scraper on a private network)")
	fs.DurationVar(&o.readyFXMaxAge, "ready-fx-max-age", httpserver.DefaultFXMaxAge, "/readyz fails when the newest ECB rate is older (0 = no such check)")
	fs.DurationVar(&o.retention, "retention", defaultRetention, "prune finished webhook delivery states and ingest queue entries older than this (0 = keep them forever); never a ledger record")
	fs.DurationVar(&o.accountsReload, "accounts-reload", 2*time.Second, "how often to look for changes of the accounts file (0 = only on SIGHUP)")
	fs.StringVar(&o.store, "store", "", "ledger store: a postgres:// URL shared by several replicas (also FISCAL402_DATABASE_URL); default the bbolt file <data>/ledger.db")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) of the serving to this file: from when the server listens until it stops on SIGTERM or SIGINT (a SIGKILL leaves it empty)")
	return chain
}

func serve(args []string, stdout, stderr io.Writer) error {
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = serverUsage(fs)
	chain := serverFlags(fs, &o, &vf)
	if err := applyEnv(fs, os.Getenv); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		names := make([]string, len(operatorCommands))
		for i, c := range operatorCommands {
			names[i] = c.name
		}
		return usagef("unexpected argument %q (commands: %s; see -h)", fs.Arg(0), strings.Join(names, ", "))
	}
	accountsGiven := o.accounts
	if o.accounts == "" {
		o.accounts = filepath.Join(o.data, "accounts.json")
	}
	if o.rotate {
		// A PostgreSQL log records the active receipt key id at its first
		// open and refuses a replica whose key differs (README "Several
		// replicas on PostgreSQL"): rotated keys would keep every replica
		// from starting, with the recorded key's private half deleted. Nor
		// would the lock below see replicas running: there is no ledger.db.
		if u, err := storeURL(o.store, os.Getenv); err != nil {
			return err
		} else if u != "" {
			return fmt.Errorf("-rotate-receipt-key: not supported with a PostgreSQL store (%s) in this build: the log records the active receipt key, and replicas with a rotated key would be refused; the keys in %s are unchanged", redact(u), filepath.Join(o.data, "keys"))
		}
		// A running server keeps signing with the key it loaded: a rotation
		// under it would retire a key it still uses. The server holds its
		// ledger's lock (bbolt's flock) while it runs, so holding that lock
		// here refuses the rotation while one runs, and keeps one from
		// starting until the rotation is done.
		ledgerPath := filepath.Join(o.data, "ledger.db")
		unlock, err := tryLockFile(ledgerPath)
		switch {
		case errors.Is(err, errHeld):
			return fmt.Errorf("-rotate-receipt-key: a server is running on %s (another process holds the lock of %s); stop it, rotate, then start it again", o.data, ledgerPath)
		case errors.Is(err, os.ErrNotExist):
			// No ledger: no receipt was ever signed here (a mistyped -data),
			// so there is no key to retire, and a keyring made here to be
			// rotated would leave the server's own keys as they are.
			return fmt.Errorf("-rotate-receipt-key: %s holds no ledger (%s): no receipt was signed with its keys, so there is nothing to rotate; is -data the server's data directory?", o.data, ledgerPath)
		case err != nil:
			return fmt.Errorf("-rotate-receipt-key: lock %s: %w", ledgerPath, err)
		}
		defer unlock()
		retired, active, err := fiscal.RotateReceiptKey(o.data, time.Now(), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "receipt signing key rotated: %s retired (stays in the JWKS), %s active\n", retired, active)
		return nil
	}
	if u, err := url.Parse(o.publicURL); o.publicURL != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "") {
		return fmt.Errorf("-public-url %q: want an absolute http(s) URL such as https://fiscal.example.com", o.publicURL)
	}
	if o.sandboxQuota < 1 {
		return fmt.Errorf("-sandbox-quota %d: want at least 1 call a day", o.sandboxQuota)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-retention", o.retention}, {"-accounts-reload", o.accountsReload}, {"-ready-fx-max-age", o.readyFXMaxAge}, {"-webhook-timeout", o.webhooks.Timeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s %v: must not be negative", d.flag, d.v)
		}
	}
	logger, err := newLogger(stderr, o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	serverOpts, err := httpOptions(o, logger)
	if err != nil {
		return err
	}
	// Every setting is checked before anything is made: a start refused
	// for a setting leaves no data directory, operator key or demo account
	// behind (a demo key generated by a refused start would never be
	// printed; TestRefusedStartMakesNothing).
	pricing := catalog.DefaultPricing()
	pricing.SandboxQuotaPerDay = o.sandboxQuota
	serverMetrics := metrics.New()
	cfg := fiscal.Config{Dir: o.data, LogOrigin: o.origin, Logger: logger, Fee: pricing.FeePolicy(),
		CommitObserver: serverMetrics}
	if cfg.Store, err = storeURL(o.store, os.Getenv); err != nil {
		return err
	}
	if err := vf.apply(&cfg); err != nil {
		return err
	}
	var live *fx.LiveTable
	switch {
	case o.fxFile != "":
		table, err := loadRates(o.fxFile)
		if err != nil {
			return fmt.Errorf("-fx-file %s: %w", o.fxFile, err)
		}
		cfg.FX = table
	case o.fxRefresh:
		base, err := fx.Embedded()
		if err != nil {
			return err
		}
		live = fx.NewLiveTable(base)
		cfg.FX = live
	}
	if o.vatRates != "" {
		if cfg.Rates, err = readRateTable(o.vatRates); err != nil {
			return fmt.Errorf("-vat-rates %s: %w", o.vatRates, err)
		}
	}
	if cfg.Chain, err = chain.verifier(); err != nil {
		return err
	}
	switch o.check {
	case "quick":
	case "full":
		cfg.LedgerFullCheck = true
	default:
		return fmt.Errorf("-check %q: want quick or full", o.check)
	}
	// The address next, before anything is made: a port in use (another
	// server, a second start) is the commonest failed start.
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("-listen %s: %w", o.listen, err)
	}
	defer ln.Close() // srv.Serve closes it too; closing again is harmless
	profile, err := openCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer profile.stop()

	// An accounts file that is there already is a setting too: one that
	// does not load refuses the start before the data directory and the
	// operator key are made (a missing one is made below, with the demo
	// account, but not in a directory that does not exist: checkAccountsPath).
	if err := checkAccountsPath(accountsGiven, o.data); err != nil {
		return err
	}
	if _, err := os.Stat(o.accounts); err == nil {
		pre, err := httpserver.LoadAccountsFile(o.accounts)
		if err != nil {
			return err
		}
		if _, err := pre.Keys(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.data, 0o700); err != nil {
		return fmt.Errorf("-data %s: %w", o.data, err)
	}
	if serverOpts.OperatorKey, err = operatorKey(o.operatorKeyFile, o.data, os.Getenv("FISCAL402_OPERATOR_KEY"), true); err != nil {
		if o.operatorKeyFile != "" && os.Getenv("FISCAL402_OPERATOR_KEY") == "" {
			return fmt.Errorf("-operator-key-file %s: %w", o.operatorKeyFile, err)
		}
		return err
	}
	demoKey, err := ensureDemoAccount(o.accounts, os.Getenv("FISCAL402_DEMO_KEY"))
	if err != nil {
		return err
	}
	welcomed := false
	defer func() {
		// A start that fails after making the demo account still prints
		// its key: it is never printed again, and only its hash is kept.
		if demoKey != "" && !welcomed {
			fmt.Fprintf(stdout, "demo account %s created, key (printed this once, only its hash is kept): %s\n", demoAccountID, demoKey)
		}
	}()
	accounts, err := httpserver.LoadAccountsFile(o.accounts)
	if err != nil {
		return err
	}
	keys, err := accounts.Keys()
	if err != nil {
		return err
	}
	cfg.Accounts = accounts.EngineAccounts()
	engine, err := fiscal.New(cfg)
	if err != nil {
		var ce *ledger.CorruptError
		var jm *ledger.JournalMismatchError
		switch {
		case errors.As(err, &ce):
			// One line, the remedy in it; no partial start.
			return fmt.Errorf("refusing to start: %v (check a restored copy with: server check -data %s)", ce, o.data)
		case errors.As(err, &jm):
			return fmt.Errorf("refusing to start: %v (server check -data %s runs the full check)", jm, o.data)
		}
		if o.store == "" {
			err = heldByServer(err, filepath.Join(o.data, "ledger.db"), "one server per data directory: stop the other, or give this one its own -data")
		}
		return err
	}
	defer engine.Close()
	logRateTable(logger, engine.Settings().Rates, engine.Now())
	compareRateTable(engine.Ledger(), logger, engine.Settings().Rates)
	var refresh *rates.Service
	if live != nil {
		if refresh, err = rates.New(engine, live, rates.Options{Logger: logger}); err != nil {
			return err
		}
	} else {
		rates.RetryAtStart(engine, logger) // a fixed table (-fx-file) may hold what settlements waited for
	}
	// The VAT rate table (-vat-rates) may cover days that records were
	// decided outside of (date_outside_rate_table): decide them again.
	rates.RetryRateTableInBackground(engine, logger)
	// The accounts may state a registration from a day already past (Art.
	// 57d Implementing Regulation 282/2011) that sales pending for
	// seller_not_registered were made on: decide them again (and after
	// each reload of the accounts, accountsReloader.apply).
	rates.RetryRegistrationsInBackground(engine, logger)
	o.webhooks.Configured, o.webhooks.ConfigGeneration = accounts.Webhooks(), accounts.Generation
	hooks, err := webhooks.New(engine, o.webhooks)
	if err != nil {
		return err
	}
	payments, err := ingest.Open(engine, ingest.Options{})
	if err != nil {
		return err
	}
	reloader := &accountsReloader{path: o.accounts, engine: engine, log: logger}
	serverOpts.Metrics = serverMetrics
	sb := sandbox.New(engine, sandbox.Options{QuotaPerDay: pricing.SandboxQuotaPerDay})
	if cfg.Store != "" {
		// Beside a shared log the sandbox opens at start, and its log pins
		// its keys as the production log does: a replica whose sandbox keys
		// differ is refused like one whose production keys do (README
		// "Several replicas on PostgreSQL"), not started to fail every
		// sandbox call it takes.
		if _, err := sb.Ledger(); err != nil {
			return fmt.Errorf("%w (replicas share %s: copy it from the first replica)", errors.Unwrap(err), filepath.Join(o.data, "sandbox", "keys"))
		}
	}
	handler, err := httpserver.New(httpserver.Services{
		Engine:   engine,
		Keys:     keys,
		Catalog:  catalog.New(engine, pricing),
		Webhooks: hooks,
		Ingest:   payments,
		Sandbox:  sb,
		Rates:    refresh,
	}, serverOpts)
	if err != nil {
		return err
	}
	reloader.handler, reloader.metrics = handler, serverOpts.Metrics
	if err := reloader.start(accounts); err != nil {
		return err
	}
	if o.retention > 0 {
		engine.Go(retentionLoop(engine, hooks, payments, o.retention, serverOpts.Metrics, logger))
	}

	setGCDefault(os.Getenv)
	setProcsDefault(os.Getenv, cfg.Store == "", runtime.NumCPU())
	// Each whole answer in one write(2) (internal/httpconn: a settlement's
	// record and its header pass net/http's 4 KB connection buffer).
	ln = httpconn.Listener(ln)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second, // the backup endpoint lifts it for its stream
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	httpconn.Configure(srv)
	hasDemo := slices.ContainsFunc(accounts.Accounts, func(a httpserver.AccountEntry) bool { return a.ID == demoAccountID })
	// The signals are ours before the start is announced: a SIGHUP (or
	// SIGTERM) sent on the "listening on" line must reload (or stop
	// cleanly), not meet Go's default action, which ends the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	printWelcome(stdout, "http://"+ln.Addr().String(), demoKey, hasDemo)
	welcomed = true
	chain.describe(stdout)

	engine.Go(func(done <-chan struct{}) { reloader.watch(done, hup, o.accountsReload) })
	if err := profile.start(); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); errors.Is(err, context.DeadlineExceeded) {
		// A request still open after the grace period (a client that
		// stalls its upload, a long backup stream) was never answered:
		// cut it, and stop as asked, closing the ledger cleanly, rather
		// than fail the stop and leave the ledger for the next start.
		logger.Warn("requests still open after the shutdown grace period were cut (none of them was answered)", "grace", shutdownGrace.String())
		err = srv.Close()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		return errors.Join(err, engine.Close(), profile.stop())
	} else if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errors.Join(err, engine.Close(), profile.stop())
	}
	return errors.Join(engine.Close(), profile.stop())
}

// shutdownGrace is how long SIGTERM (or SIGINT) waits for in-flight
// requests to finish before it cuts those still open and closes the ledger.
const shutdownGrace = 15 * time.Second

// defaultGOGC is the server's garbage-collection target (GOGC) when the
// environment sets none. Nearly all a settlement allocates is garbage once
// it is answered, and a new ledger's live heap is a few MB, so at Go's
// default of 100 the collector runs every ~80 settlements (GODEBUG=gctrace=1
// at 64 engine callers: 4 MB live, an 8 MB goal; ~48 KB per settlement).
// BenchmarkServerHTTP (32 clients, 2 CPUs, three alternated rounds, stop
// 35 of issue 22): at 100, 5,626-5,770 settlements/s, 244-259 µs of server
// CPU each, peak RSS 55 MiB; at 200, 6,382-6,766/s, 200-222 µs, 59-62 MiB;
// at 400, 7,172-7,279/s, 187-194 µs, 71-72 MiB. Stop 35 kept 200 for a heap
// up to three times the live data instead of five. Stop 39 measured 200
// against 400 again, on a 2-CPU AMD EPYC host, 14 alternated pairs of
// 10,000 settlements: 400 answered more settlements per second in 10 of
// them (median pair +8 %), with a median 228 against 246 µs of server CPU
// per settlement in the 8 pairs of the second set, for a peak RSS of 58-63
// against 47-50 MiB. Eleven MiB buy a twelfth more settlements per CPU, and
// the live heap stays small as the ledger grows: its in-memory index (8
// bytes a key, no pointers, so never scanned) is the part that grows, and
// it lengthens the collector's period instead of adding to its work (which
// is likely why Engine.Settle ran faster at 100 k records than at 1 k in
// BenchmarkSettleScale, same run: 12,043 against 10,038/s). Where memory is
// tighter than CPU, GOGC (100, Go's default) or GOMEMLIMIT from the
// environment take over.
const defaultGOGC = 400

// setGCDefault applies defaultGOGC unless the environment's GOGC (which the
// Go runtime has applied already, "off" included) says otherwise.
func setGCDefault(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
}

// setProcsDefault gives the Go scheduler one P more than the CPUs it found
// when the ledger is the local bbolt file, unless the environment sets
// GOMAXPROCS or a CPU quota set the runtime's choice below cpus (the CPUs
// the process may run on, runtime.NumCPU).
//
// Why: the ledger's committer makes every commit durable with two
// fdatasyncs, and a goroutine in a blocking system call keeps its P until
// the runtime's monitor thread takes it back, which sleeps 20 µs to 10 ms
// between looks (golang/go#29734, a proposal for a system call that gives
// the P up at once, was closed without one). So during most of every
// fdatasync one of the P's ran nothing while goroutines waited for a P: in a
// runtime trace of fiscal's BenchmarkSettle at 64 callers on 2 CPUs, on
// average 1.46 goroutines ran, and for 31 % of the time one ran while the
// committer sat in a system call (fdatasync, or the pwrites before it). With
// a third P, 1.92 ran, and the settlements per second rose by 11, 18 and 25
// % (three alternated pairs). Since the engine's settlements got cheaper
// (issue 22, stops 41-42) that gain is gone: at 9ee50f8, five interleaved
// rounds of bench/run.sh gave 14,032/s with the third P and 14,246 without,
// and three alternated pairs 13,969-15,677 against 14,933-15,630 (the time
// goes to the callers, who then wait for the commit sooner: README, "What
// bounds the engine"); the server at 32 clients, three pairs, 6,198-7,706
// against 6,270-6,852. The server, busy (BenchmarkServerHTTP at 128
// clients, three alternated pairs): 4,512 → 5,040 settlements/s (medians;
// at 9ee50f8, 7,995-8,553 → 8,797-10,123, the same pairs' ranges);
// at 32 clients, where every request waits on the commit cycle rather than
// on a CPU, no change (3,951 and 3,940/s). With PostgreSQL the commit waits
// on the network, which gives the P up, and the default stays. Under a
// container's CPU quota (Go 1.25 sets GOMAXPROCS to it) it stays too: a P
// more than the quota lets the process run more threads than the quota pays
// for whenever nothing blocks, and the kernel then throttles it for the rest
// of its period, a pause of every request. Setting GOMAXPROCS here ends the
// runtime's own updates of it when a container's CPU limit changes; the
// environment's GOMAXPROCS keeps both choices to the operator.
func setProcsDefault(getenv func(string) string, localLedger bool, cpus int) {
	if n := runtime.GOMAXPROCS(0); localLedger && getenv("GOMAXPROCS") == "" && n >= cpus {
		runtime.GOMAXPROCS(n + 1)
	}
}

// httpOptions turns the limit flags into httpserver options.
func httpOptions(o options, logger *slog.Logger) (httpserver.Options, error) {
	for _, l := range []struct {
		flag string
		v    float64
	}{{"-rate-limit", o.rateLimit}, {"-rate-burst", float64(o.rateBurst)}, {"-auth-fail-rate", o.authFailRate}, {"-auth-fail-burst", float64(o.authFailBurst)}} {
		if l.v < 0 {
			return httpserver.Options{}, fmt.Errorf("%s %v: must not be negative", l.flag, l.v)
		}
	}
	if o.authFailMaxBackoff < 0 {
		return httpserver.Options{}, fmt.Errorf("-auth-fail-max-backoff %v: must not be negative", o.authFailMaxBackoff)
	}
	authLimit := rate.Limit(o.authFailRate)
	if o.authFailRate == 0 {
		authLimit = rate.Inf
	}
	limit := rate.Limit(o.rateLimit)
	if o.rateLimit == 0 {
		limit = rate.Inf
	}
	var proxies []netip.Prefix
	for _, p := range strings.Split(o.trustedProxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return httpserver.Options{}, fmt.Errorf("-trusted-proxy %q is neither an address nor a CIDR prefix", p)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		proxies = append(proxies, prefix.Masked())
	}
	fxMaxAge := o.readyFXMaxAge
	if fxMaxAge == 0 {
		fxMaxAge = -1 // httpserver: a negative age turns the check off
	}
	return httpserver.Options{Logger: logger, PublicURL: o.publicURL, RateLimit: limit, RateBurst: o.rateBurst, TrustedProxies: proxies,
		MetricsPublic: o.metricsPublic, FXMaxAge: fxMaxAge,
		DocumentHosts:   splitList(o.documentHosts),
		AuthFailureRate: authLimit, AuthFailureBurst: o.authFailBurst, AuthFailureMaxBackoff: o.authFailMaxBackoff}, nil
}

// loadRates merges the operator's ECB file over the embedded snapshot. A
// published value that differs between the two is an error: published ECB
// rates never change.
func loadRates(path string) (*fx.Table, error) {
	base, err := fx.Embedded()
	if err != nil {
		return nil, err
	}
	extra, err := fx.LoadFile(path)
	if err != nil {
		return nil, err
	}
	return base.Merge(extra)
}

const demoAccountID = "acct_demo"

// ensureDemoAccount creates the accounts file with a demo seller on first
// start. It returns the key to print: only a key it has just generated; a
// secret that already exists (a stored key, or FISCAL402_DEMO_KEY) is never
// printed. With FISCAL402_DEMO_KEY set and the file present, the key must be
// one of the demo account's: a different one is an error, never a silent
// replacement of the stored key (rotate it with "accounts rotate-key").
func ensureDemoAccount(path, envKey string) (printable string, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	unlock, err := lockFile(path + ".lock") // the accounts commands may be editing it
	if err != nil {
		return "", err
	}
	defer unlock()
	_, err = os.Stat(path)
	switch {
	case err == nil:
		if envKey == "" {
			return "", nil
		}
		return "", checkDemoKey(path, envKey)
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	key := envKey
	if key == "" {
		if key, err = httpserver.NewAPIKey(rand.Reader); err != nil {
			return "", err
		}
		printable = key
	}
	f := httpserver.AccountsFile{Accounts: []httpserver.AccountEntry{{
		ID:        demoAccountID,
		KeyHashes: []string{httpserver.HashKey(key)},
		Seller: fiscal.Seller{
			LegalName:     "Demo Digital Services Ltd",
			VATNumber:     "IE1234567T",
			LegalID:       "IE-CRO-654321",
			Country:       "IE",
			Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285", Country: "IE"},
			OverThreshold: true,
			// Registered for VAT in Ireland and for the Union OSS there
			// (Art. 369a(2)): its sales to consumers elsewhere in the EU are
			// declared through the OSS; a sale that needs another
			// registration (a UK consumer: a UK VRN) goes to review.
			Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
			ItemName:      "API access (pay per call)",
		},
	}}}
	return printable, httpserver.WriteAccountsFile(path, f)
}

// checkDemoKey: FISCAL402_DEMO_KEY must be a key the demo account already
// has.
func checkDemoKey(path, key string) error {
	accounts, err := readAccountsFile(path)
	if err != nil {
		return err
	}
	for _, a := range accounts.Accounts {
		if a.ID == demoAccountID {
			if slices.Contains(a.KeyHashes, httpserver.HashKey(key)) {
				return nil
			}
			return fmt.Errorf("FISCAL402_DEMO_KEY is not the key of account %s in %s; unset it to keep the stored key, or replace the stored key with: accounts rotate-key -id %s", demoAccountID, path, demoAccountID)
		}
	}
	return fmt.Errorf("FISCAL402_DEMO_KEY is set but %s has no %s account", path, demoAccountID)
}

func readAccountsFile(path string) (httpserver.AccountsFile, error) {
	var f httpserver.AccountsFile
	raw, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	return f, jsonUnmarshalStrict(raw, &f)
}

// printWelcome says where the server listens; with a key just generated it
// prints the key once, with an example request. Of a demo account it
// speaks only when the accounts file has one (hasDemo): a file made by
// "accounts create" has none.
func printWelcome(w io.Writer, base, demoKey string, hasDemo bool) {
	fmt.Fprintf(w, "fiscal402 listening on %s (custody: none; not tax advice)\n", base)
	if demoKey == "" {
		if !hasDemo {
			return
		}
		fmt.Fprintf(w, "demo account %s: its key is not printed again (it was printed when created, or is the one in FISCAL402_DEMO_KEY)\n", demoAccountID)
		return
	}
	fmt.Fprintf(w, "demo account %s created, key (printed this once, only its hash is kept): %s\n\n", demoAccountID, demoKey)
	fmt.Fprintf(w, "Record a settled USDC payment:\n\n")
	fmt.Fprintf(w, `curl -sS -X POST %s/settlements \
  -H 'Content-Type: application/json' \
  -H 'X-Service-Key: %s' \
  -H 'Idempotency-Key: demo-1' \
  -d '{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}'
`, base, demoKey)
	fmt.Fprintln(w)
}

func jsonUnmarshalStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
