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
//
// Every flag is also read from FISCAL402_<NAME> (upper case, '-' as '_'); the
// command line wins. README "Configuration" has the table of all of them;
// `server -h` prints them. The main ones:
//
//	-listen addr        address to listen on (default 127.0.0.1:8402)
//	-data dir           data directory: ledger, keys, accounts (default ./fiscal402-data)
//	-accounts file      accounts file (default <data>/accounts.json; created with a demo account if missing)
//	-fx-file file       newer ECB rates (eurofxref CSV or XML) merged over the embedded snapshot: a fixed table
//	-fx-refresh         fetch each day's ECB rates after 16:00 Frankfurt time and keep them in the ledger (default true)
//	-log-format, -log-level   text or json log lines on stderr; debug, info, warn or error
//	-sandbox-quota n    evaluate and simulate calls per agent per UTC day (default 10)
//	-operator-key-file  the operator key of /metrics and /v1/admin/backup (default <data>/keys/operator.key)
//	-retention d        prune finished webhook deliveries and ingest entries older than d (default 720h)
//	-vies off|live, -base-*, -ethereum-*, -rate-limit, -public-url, -webhooks-*, ...
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
	"strings"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/webhooks"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fiscal402:", err)
		os.Exit(1)
	}
}

type options struct {
	listen, data, accounts, fxFile, origin string
	rotate, fxRefresh                      bool
	publicURL                              string
	rateLimit                              float64
	rateBurst                              int
	trustedProxies                         string
	webhooks                               webhooks.Options
	logFormat, logLevel                    string
	sandboxQuota                           int
	operatorKeyFile                        string
	metricsPublic                          bool
	readyFXMaxAge                          time.Duration
	retention                              time.Duration
	accountsReload                         time.Duration
	store                                  string
}

// run is the command: the server, or one of the operator's subcommands
// (backup, check, accounts), which are documented in README "Operations".
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "backup":
			return runBackup(args[1:], stdout, stderr)
		case "check":
			return runCheck(args[1:], stdout, stderr)
		case "accounts":
			return runAccounts(args[1:], stdout, stderr)
		case "migrate":
			return runMigrate(args[1:], stdout, stderr)
		}
	}
	return serve(args, stdout, stderr)
}

// serverFlags defines the server's flags on fs.
func serverFlags(fs *flag.FlagSet, o *options, vf *viesFlags) *chainFlags {
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8402", "address to listen on")
	fs.StringVar(&o.data, "data", "fiscal402-data", "data directory (ledger, keys, accounts)")
	fs.StringVar(&o.accounts, "accounts", "", "accounts file (default <data>/accounts.json)")
	fs.StringVar(&o.fxFile, "fx-file", "", "ECB rates file (CSV or XML) merged over the embedded snapshot; a fixed table (no -fx-refresh)")
	fs.BoolVar(&o.fxRefresh, "fx-refresh", true, "fetch the ECB reference rates after each day's publication and keep them in the ledger (ignored with -fx-file)")
	fs.StringVar(&o.origin, "log-origin", fiscal.DefaultLogOrigin, "Merkle log origin")
	fs.BoolVar(&o.rotate, "rotate-receipt-key", false, "retire the active receipt signing key, create a new one, and exit (stop the server first)")
	vf.register(fs)
	chain := addChainFlags(fs)
	fs.StringVar(&o.publicURL, "public-url", "", "absolute base URL for the links in the manifest, agent card and OpenAPI document (default: each request's scheme and host)")
	fs.Float64Var(&o.rateLimit, "rate-limit", float64(httpserver.DefaultRateLimit), "requests per second per account on the keyed endpoints (0 = no limit)")
	fs.IntVar(&o.rateBurst, "rate-burst", 0, "burst of the rate limit (0 = twice rate-limit)")
	fs.StringVar(&o.trustedProxies, "trusted-proxy", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed")
	fs.BoolVar(&o.webhooks.AllowLoopback, "webhooks-allow-loopback", false, "deliver webhooks to loopback addresses, also over http:// (local development)")
	fs.BoolVar(&o.webhooks.AllowPrivate, "webhooks-allow-private", false, "deliver webhooks to private network addresses")
	fs.DurationVar(&o.webhooks.Timeout, "webhook-timeout", 10*time.Second, "time limit of one webhook delivery attempt")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json (one line per request and per event, on stderr)")
	fs.StringVar(&o.logLevel, "log-level", "info", "least level logged: debug, info, warn or error")
	fs.IntVar(&o.sandboxQuota, "sandbox-quota", catalog.DefaultPricing().SandboxQuotaPerDay, "evaluate and simulate calls per agent per UTC day (spec §8: 10)")
	fs.StringVar(&o.operatorKeyFile, "operator-key-file", "", "file holding the operator key of /metrics and /v1/admin/backup (default <data>/keys/operator.key, created on first start; FISCAL402_OPERATOR_KEY sets the key itself)")
	fs.BoolVar(&o.metricsPublic, "metrics-public", false, "serve /metrics without the operator key (a scraper on a private network)")
	fs.DurationVar(&o.readyFXMaxAge, "ready-fx-max-age", httpserver.DefaultFXMaxAge, "/readyz fails when the newest ECB rate is older (0 = no such check)")
	fs.DurationVar(&o.retention, "retention", defaultRetention, "prune finished webhook delivery states and ingest queue entries older than this (0 = keep them forever); never a ledger record")
	fs.DurationVar(&o.accountsReload, "accounts-reload", 2*time.Second, "how often to look for changes of the accounts file (0 = only on SIGHUP)")
	fs.StringVar(&o.store, "store", "", "ledger store: a postgres:// URL shared by several replicas (also FISCAL402_DATABASE_URL); default the bbolt file <data>/ledger.db")
	return chain
}

func serve(args []string, stdout, stderr io.Writer) error {
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chain := serverFlags(fs, &o, &vf)
	if err := applyEnv(fs, os.Getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (commands: backup, check, accounts, migrate; see -h)", fs.Arg(0))
	}
	if o.accounts == "" {
		o.accounts = filepath.Join(o.data, "accounts.json")
	}
	if o.rotate {
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
	if o.retention < 0 || o.accountsReload < 0 || o.readyFXMaxAge < 0 {
		return errors.New("-retention, -accounts-reload and -ready-fx-max-age must not be negative")
	}
	logger, err := newLogger(stderr, o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	serverOpts, err := httpOptions(o, logger)
	if err != nil {
		return err
	}

	if err := os.MkdirAll(o.data, 0o700); err != nil {
		return err
	}
	if serverOpts.OperatorKey, err = operatorKey(o.operatorKeyFile, o.data, os.Getenv("FISCAL402_OPERATOR_KEY"), true); err != nil {
		return err
	}
	demoKey, err := ensureDemoAccount(o.accounts, os.Getenv("FISCAL402_DEMO_KEY"))
	if err != nil {
		return err
	}
	accounts, err := httpserver.LoadAccountsFile(o.accounts)
	if err != nil {
		return err
	}
	keys, err := accounts.Keys()
	if err != nil {
		return err
	}
	pricing := catalog.DefaultPricing()
	pricing.SandboxQuotaPerDay = o.sandboxQuota
	serverMetrics := metrics.New()
	cfg := fiscal.Config{Dir: o.data, Accounts: accounts.EngineAccounts(), LogOrigin: o.origin, Logger: logger, Fee: pricing.FeePolicy(),
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
			return err
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
	if cfg.Chain, err = chain.verifier(); err != nil {
		return err
	}
	engine, err := fiscal.New(cfg)
	if err != nil {
		return err
	}
	defer engine.Close()
	var refresh *rates.Service
	if live != nil {
		if refresh, err = rates.New(engine, live, rates.Options{Logger: logger}); err != nil {
			return err
		}
	}
	o.webhooks.Configured = accounts.Webhooks()
	hooks, err := webhooks.New(engine, o.webhooks)
	if err != nil {
		return err
	}
	payments := ingest.New(engine, ingest.Options{})
	reloader := &accountsReloader{path: o.accounts, engine: engine, log: logger}
	serverOpts.Metrics = serverMetrics
	handler, err := httpserver.New(httpserver.Services{
		Engine:   engine,
		Keys:     keys,
		Catalog:  catalog.New(engine, pricing),
		Webhooks: hooks,
		Ingest:   payments,
		Sandbox:  sandbox.New(engine, sandbox.Options{QuotaPerDay: pricing.SandboxQuotaPerDay}),
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

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second, // the backup endpoint lifts it for its stream
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	printWelcome(stdout, "http://"+ln.Addr().String(), demoKey)
	chain.describe(stdout)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	engine.Go(func(done <-chan struct{}) { reloader.watch(done, hup, o.accountsReload) })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return engine.Close()
}

// httpOptions turns the limit flags into httpserver options.
func httpOptions(o options, logger *slog.Logger) (httpserver.Options, error) {
	if o.rateLimit < 0 || o.rateBurst < 0 {
		return httpserver.Options{}, errors.New("-rate-limit and -rate-burst must not be negative")
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
		MetricsPublic: o.metricsPublic, FXMaxAge: fxMaxAge}, nil
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
// start and returns the demo key when it is known: freshly generated, or set
// by FISCAL402_DEMO_KEY (which also replaces the demo account's key, so a
// script can always authenticate). "" means the key was printed on an
// earlier start and only its hash is kept.
func ensureDemoAccount(path, envKey string) (string, error) {
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
		return envKey, setDemoKey(path, envKey)
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	key := envKey
	if key == "" {
		if key, err = httpserver.NewAPIKey(rand.Reader); err != nil {
			return "", err
		}
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
	return key, httpserver.WriteAccountsFile(path, f)
}

func setDemoKey(path, key string) error {
	accounts, err := readAccountsFile(path)
	if err != nil {
		return err
	}
	for i := range accounts.Accounts {
		if accounts.Accounts[i].ID == demoAccountID {
			accounts.Accounts[i].KeyHashes = []string{httpserver.HashKey(key)}
			return httpserver.WriteAccountsFile(path, accounts)
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

func printWelcome(w io.Writer, base, demoKey string) {
	fmt.Fprintf(w, "fiscal402 listening on %s (custody: none; not tax advice)\n", base)
	if demoKey == "" {
		fmt.Fprintf(w, "demo account %s: its key was printed on first start (set FISCAL402_DEMO_KEY to choose one)\n", demoAccountID)
		return
	}
	fmt.Fprintf(w, "demo account %s, key: %s\n\n", demoAccountID, demoKey)
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
