package webhooks

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/syncread"
	"github.com/fiscal402/fiscal402/ledger"
)

// Options configure webhook delivery (New). Every field
// documents its zero value; the zero value delivers to public https
// endpoints only.
type Options struct {
	// Sender sends one attempt. nil means NewHTTPSender with the
	// policy and timeout below.
	Sender Sender
	// AllowLoopback accepts endpoints on loopback addresses, and plain
	// http:// to them, and lets the default sender connect there (tests,
	// local development). false refuses them.
	AllowLoopback bool
	// AllowPrivate accepts endpoints on private address space (RFC 1918,
	// RFC 6598, RFC 4193), for receivers on the operator's network. false
	// refuses them. Link-local addresses (cloud metadata) are always refused.
	AllowPrivate bool
	// Timeout bounds one attempt; 0 means DefaultTimeout (10 s).
	Timeout time.Duration
	// Schedule is the retry schedule; the zero value is the default
	// (backoff from 30 s to 8 h with ±20 % jitter, for up to 72 h).
	Schedule Schedule
	// Concurrency is the most attempts in flight at once; 0 means 32. At
	// most 4 of them go to the same endpoint, and at most a quarter of them
	// (at least 4; 8 of 32) to the endpoints of one account, so that slow
	// or hanging receivers, even an account's 16, cannot hold up another
	// account's deliveries.
	Concurrency int
	// After waits for a duration of the engine's clock; nil means
	// time.After. Tests pair it with Config.Clock to run the retry schedule
	// in virtual time.
	After func(time.Duration) <-chan time.Time
	// NoDispatcher: manage endpoints but send nothing (a maintenance tool
	// that opens the data directory, for example). The outbox keeps every
	// event for the next service that dispatches, and the accounts file's
	// endpoints stay as that service set them (Configured is not read).
	// false (the default) starts the dispatcher in New, as background work
	// of the engine (it stops when the engine is closed). An engine with
	// Config.NoBackground never starts it.
	NoDispatcher bool
	// Configured are the endpoints the operator set per account id (the
	// accounts file's "webhooks"); nil means none.
	Configured map[string][]EndpointConfig
	// ConfigGeneration is the generation of the configuration Configured
	// comes from (the accounts file's "generation"); 0 means none given.
	// On a log several replicas share, a replica's file lists what that
	// replica knows, not what exists: only a configuration of a higher
	// generation than any replica applied removes the stored endpoints it
	// no longer lists; one of the generation applied adds what it lists
	// and removes nothing; an older one changes nothing (README "Several
	// replicas on PostgreSQL"). On a log of one server the configuration
	// is the whole truth whatever its generation.
	ConfigGeneration int64
	// KeyDir holds the key that seals the secrets of endpoints created
	// through the API (webhook-secrets.key, made on first use). "" means
	// <the engine's Dir>/keys.
	KeyDir string
	// Rand is the source of secrets and ids. nil means the engine's
	// (Settings().Rand: read under the engine's lock, one caller at a
	// time with the engine). Another reader need not be safe for
	// concurrent use either: the service reads it under a lock of its own,
	// so it must not be a reader the engine also reads directly.
	Rand io.Reader
	// Logger receives operational logs. nil means the engine's.
	Logger *slog.Logger

	fanOutEvery time.Duration // > 0: the interval between fan-out writes (tests)
}

// Limits of the webhook API.
const (
	MaxEndpoints       = 16 // per account, accounts file and API together
	MaxSecrets         = 3  // active secrets per endpoint: one v1 signature each
	minConfigSecretLen = 24 // Standard Webhooks asks for at least 24 bytes of key
	defaultConcurrency = 32
)

// EndpointConfig is an endpoint listed in the accounts file, under
// the account's "webhooks". Its secrets are written there in plain text,
// as the operator chose them (the file is mode 0600 and holds only key
// hashes otherwise): HMAC needs the secret itself. Endpoints created
// through the API keep theirs sealed in the ledger instead.
type EndpointConfig struct {
	URL         string   `json:"url"`
	Secrets     []string `json:"secrets"` // 1 to MaxSecrets; the first is the newest; at least 24 characters each
	Description string   `json:"description,omitempty"`
}

func (c EndpointConfig) validate() error {
	if c.URL == "" {
		return fmt.Errorf("webhooks: url is required")
	}
	if _, err := (TargetPolicy{AllowLoopback: true, AllowPrivate: true}).CheckURL(c.URL); err != nil {
		return fmt.Errorf("webhooks: %s: %w", shownURL(c.URL), err)
	}
	if len(c.Secrets) == 0 || len(c.Secrets) > MaxSecrets {
		return fmt.Errorf("webhooks: %s: 1 to %d secrets are required", shownURL(c.URL), MaxSecrets)
	}
	for i, s := range c.Secrets {
		if len(s) < minConfigSecretLen || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return fmt.Errorf("webhooks: %s: secret %d must be at least %d printable ASCII characters without spaces", shownURL(c.URL), i+1, minConfigSecretLen)
		}
	}
	if _, err := parseDescription("/description", c.Description); err != nil {
		return fmt.Errorf("webhooks: %s: description: %w", shownURL(c.URL), err)
	}
	return nil
}

// ValidateConfigs checks an account's configured endpoints (the accounts
// file's "webhooks" of one account).
func ValidateConfigs(list []EndpointConfig) error {
	if len(list) > MaxEndpoints {
		return fmt.Errorf("webhooks: at most %d endpoints", MaxEndpoints)
	}
	seen := map[string]string{} // targetKey → the URL as listed
	for _, c := range list {
		if err := c.validate(); err != nil {
			return err
		}
		// The same target however spelt (sameTarget), as the API checks:
		// two endpoints would send the receiver every event twice.
		key := targetKey(c.URL)
		if first, ok := seen[key]; ok {
			if first == c.URL {
				return fmt.Errorf("webhooks: %s is listed twice", shownURL(c.URL))
			}
			return fmt.Errorf("webhooks: %s and %s are both listed: the same URL spelt otherwise (RFC 3986 section 6.2.2, 6.2.3)", shownURL(first), shownURL(c.URL))
		}
		seen[key] = c.URL
	}
	return nil
}

// Endpoint is an endpoint as the API shows it: never its secrets,
// only their ids and hints.
type Endpoint struct {
	ID             string       `json:"id"`     // "we_" + 24 hex
	Object         string       `json:"object"` // "webhook_endpoint"
	URL            string       `json:"url"`
	Description    string       `json:"description,omitempty"`
	Source         string       `json:"source"` // "api" | "config" (the accounts file; change it there)
	Status         string       `json:"status"` // "enabled" | "disabled"
	DisabledAt     string       `json:"disabledAt,omitempty"`
	DisabledReason string       `json:"disabledReason,omitempty"`
	CreatedAt      string       `json:"createdAt"`
	FirstSequence  int64        `json:"firstSequence"` // receives the events with sequence ≥ this (since it was created or last enabled)
	Secrets        []SecretInfo `json:"secrets"`       // newest first: every one signs
	LastAttempt    *Attempt     `json:"lastAttempt,omitempty"`
}

// dispatcherName is the dispatcher's reservation in the engine's ledger
// (ledger.Reserve): one dispatcher per engine.
const dispatcherName = "webhooks.dispatcher"

// Endpoint statuses.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// SecretInfo identifies a secret without revealing it.
type SecretInfo struct {
	ID        string `json:"id"`
	CreatedAt string `json:"createdAt,omitempty"`
	Hint      string `json:"hint"` // "whsec_…" and the last 4 characters
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	At         string `json:"at"`
	EventID    string `json:"eventId"`
	DeliveryID string `json:"deliveryId"`
	Attempt    int    `json:"attempt"`
	Outcome    string `json:"outcome"`          // "delivered" | "failed" | "gone"
	Status     int    `json:"status,omitempty"` // the receiver's HTTP status; absent when none came
	Error      string `json:"error,omitempty"`
}

// EndpointWithSecret is the answer of the calls that create a
// secret: the only time the secret is shown.
type EndpointWithSecret struct {
	Endpoint
	Secret   string `json:"secret"`
	SecretID string `json:"secretId"`
}

// EndpointRequest is the body of POST /v1/webhook-endpoints.
type EndpointRequest struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Service is the webhook service of one engine: endpoints (from the
// configuration and the API), sealed secrets, and the dispatcher that
// delivers the engine's outbox. Create it with New; the engine's Close stops
// it. Every method that names an account answers NOT_FOUND (naming it) for
// an account the engine keeps no books for, lists included.
type Service struct {
	e        *fiscal.Engine
	log      *slog.Logger
	clock    func() time.Time
	policy   TargetPolicy
	keyDir   string
	boxMu    sync.Mutex
	box      *secretBox // loaded or created on first use
	rand     io.Reader
	schedule Schedule
	config   map[string][]EndpointConfig
	disp     *dispatcher // nil with NoDispatcher
}

// New starts webhook delivery for the engine's outbox: it records the
// configured endpoints and, unless opts.NoDispatcher, runs the dispatcher as
// the engine's background work.
//
// One engine has one dispatcher: a second New without NoDispatcher on the
// same engine, while the engine is open, is refused with an error wrapping
// ledger.ErrReserved, and changes nothing (two dispatchers would deliver
// the same events side by side); keep the Service the first call
// returned. Services with NoDispatcher (reading and managing endpoints and
// events) may be opened beside it. The same rule holds for rates.New and
// ingest.New.
func New(e *fiscal.Engine, opts Options) (*Service, error) {
	set := e.Settings()
	w := &Service{
		e:        e,
		log:      opts.Logger,
		clock:    set.Clock,
		policy:   TargetPolicy{AllowLoopback: opts.AllowLoopback, AllowPrivate: opts.AllowPrivate},
		rand:     opts.Rand,
		schedule: opts.Schedule,
		keyDir:   opts.KeyDir,
		config:   opts.Configured,
	}
	if w.log == nil {
		w.log = set.Logger
	}
	if w.rand == nil {
		w.rand = set.Rand // the engine's locked reader
	} else {
		w.rand = syncread.New(w.rand)
	}
	if w.keyDir == "" {
		w.keyDir = filepath.Join(set.Dir, "keys")
	}
	for account, list := range opts.Configured {
		if err := ValidateConfigs(list); err != nil {
			return nil, fmt.Errorf("webhooks: account %q: %w", account, err)
		}
		for _, c := range list {
			if _, err := w.policy.CheckURL(c.URL); err != nil {
				return nil, fmt.Errorf("webhooks: account %q: %s: %w (see Options.AllowLoopback/AllowPrivate)", account, shownURL(c.URL), err)
			}
		}
	}
	// One dispatcher per engine: reserved before anything is written, so
	// that a refused second New changes nothing.
	release := func() {}
	if !opts.NoDispatcher {
		var err error
		if release, err = e.Ledger().Reserve(dispatcherName); err != nil {
			return nil, fmt.Errorf("webhooks: the engine's outbox is already delivered by an earlier webhooks.New (one dispatcher per engine: keep its Service, or set Options.NoDispatcher for another): %w", err)
		}
	}
	if e.Ledger().Shared() {
		if err := pinSecretKey(e.Ledger(), w.keyDir, w.rand); err != nil {
			release()
			return nil, err
		}
	}
	// A service that dispatches makes the accounts file's endpoints the
	// stored ones. A maintenance open (NoDispatcher) leaves them as the
	// last such service set them: a review found it deleting them all (its
	// Configured is nil), so that the next start made them anew and
	// cancelled their pending deliveries.
	if !opts.NoDispatcher {
		now := w.clock().UTC()
		shared := e.Ledger().Shared()
		var done configSync
		err := e.Ledger().Update(func(tx ledger.Tx) (err error) {
			done, err = syncConfigEndpoints(tx, w.config, opts.ConfigGeneration, shared, now)
			return err
		})
		if err != nil {
			release()
			return nil, fmt.Errorf("webhooks: endpoints: %w", err)
		}
		w.logConfigSync(done, opts.ConfigGeneration)
	}
	if !opts.NoDispatcher {
		w.disp = newDispatcher(w, opts)
		e.Subscribe(w.notify)
		e.Go(w.disp.run)
	}
	return w, nil
}

// logConfigSync tells the operator what the start did with the accounts
// file's endpoints when it did not simply make them the stored ones.
func (w *Service) logConfigSync(done configSync, generation int64) {
	if done.older {
		w.log.Warn("webhooks: this accounts file is of an older generation than a replica of this log applied: its endpoints are not applied (nothing added, nothing removed); this replica delivers to the stored endpoints it has the secrets of",
			"generation", generation, "applied_generation", done.generation, "endpoints_not_added", done.missing)
	}
	for _, r := range done.removed {
		w.log.Info("webhooks: endpoint removed: no longer in the accounts file", "account", r.Account, "endpoint", r.ID, "url", shownURL(r.URL), "generation", generation)
	}
	for _, r := range done.kept {
		w.log.Warn("webhooks: endpoint kept although this accounts file does not list it: on a log several replicas share, only a file of a higher \"generation\" than the one applied removes endpoints (this replica cannot sign its deliveries and leaves them to one that lists it)",
			"account", r.Account, "endpoint", r.ID, "url", shownURL(r.URL), "generation", generation, "applied_generation", done.generation)
	}
}

// account is NOT_FOUND (fiscal.Engine.Books' error, naming the account)
// when the engine keeps no books for accountID. Every call that names an
// account checks it first, so that a mistyped id (or a server key whose
// account the engine does not keep) is told so, not answered an empty list
// as if the account existed with nothing in it.
func (w *Service) account(accountID string) error {
	_, err := w.e.Books(accountID)
	return err
}

// notify tells the dispatcher that the outbox or an endpoint changed.
func (w *Service) notify() {
	if w != nil && w.disp != nil {
		w.disp.poke()
	}
}

func (w *Service) randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(w.rand, b); err != nil {
		return "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "no randomness", Err: err}
	}
	return hex.EncodeToString(b), nil
}

// newSecret returns a fresh secret: "whsec_" and 256 random bits in
// base64url, used as an HMAC key byte for byte (webhook package doc).
func (w *Service) newSecret(endpointID string, now time.Time) (storedSecret, string, error) {
	var b [32]byte
	if _, err := io.ReadFull(w.rand, b[:]); err != nil {
		return storedSecret{}, "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "no randomness", Err: err}
	}
	secret := "whsec_" + base64.RawURLEncoding.EncodeToString(b[:])
	id, err := w.randomHex(8)
	if err != nil {
		return storedSecret{}, "", err
	}
	s := storedSecret{ID: "whs_" + id, CreatedAt: now, Hint: secretHint(secret)}
	box, err := w.secretBox(true)
	if err != nil {
		return storedSecret{}, "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the webhook secret key is unavailable", Err: err}
	}
	if s.Sealed, err = box.seal(endpointID, s.ID, secret); err != nil {
		return storedSecret{}, "", &fiscal.Error{Code: fiscal.CodeInternal, Detail: "sealing the secret failed", Err: err}
	}
	return s, secret, nil
}

// secretBox returns the sealing box, loading its key file on first use and
// creating it when create is set (the first API endpoint). Lazy, so that an
// engine without API endpoints neither writes the file nor draws from
// Config.Rand for it.
func (w *Service) secretBox(create bool) (*secretBox, error) {
	w.boxMu.Lock()
	defer w.boxMu.Unlock()
	if w.box == nil {
		b, err := openSecretBox(w.keyDir, w.rand, create)
		if err != nil {
			return nil, err
		}
		w.box = b
	}
	return w.box, nil
}

func secretHint(secret string) string {
	if len(secret) < 10 {
		return "whsec_…"
	}
	return "whsec_…" + secret[len(secret)-4:]
}

// secrets returns an endpoint's secrets in plain text, newest first.
func (w *Service) secrets(r *endpointRecord) ([]string, error) {
	if r.Source == EndpointSourceConfig {
		for _, c := range w.config[r.Account] {
			if c.URL == r.URL {
				return c.Secrets, nil
			}
		}
		return nil, fmt.Errorf("webhooks: endpoint %s is no longer in the accounts file", r.ID)
	}
	box, err := w.secretBox(false)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(r.Secrets))
	for _, s := range r.Secrets {
		plain, err := box.open(r.ID, s.ID, s.Sealed)
		if err != nil {
			return nil, err
		}
		out = append(out, plain)
	}
	return out, nil
}

// view renders a stored endpoint for the API.
func (w *Service) view(r endpointRecord) Endpoint {
	v := Endpoint{
		ID: r.ID, Object: "webhook_endpoint", URL: r.URL, Description: r.Description, Source: r.Source,
		Status: EndpointEnabled, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339),
		FirstSequence: r.FirstSequence, Secrets: []SecretInfo{}, LastAttempt: r.LastAttempt,
	}
	if r.DisabledAt != nil {
		v.Status, v.DisabledAt, v.DisabledReason = EndpointDisabled, r.DisabledAt.UTC().Format(time.RFC3339), r.DisabledWhy
	}
	if r.Source == EndpointSourceConfig {
		if secrets, err := w.secrets(&r); err == nil {
			for i, s := range secrets {
				v.Secrets = append(v.Secrets, SecretInfo{ID: fmt.Sprintf("whs_config_%d", i+1), Hint: secretHint(s)})
			}
		}
		return v
	}
	for _, s := range r.Secrets {
		v.Secrets = append(v.Secrets, SecretInfo{ID: s.ID, CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339), Hint: s.Hint})
	}
	return v
}

func endpointNotFound(id string) *fiscal.Error { return notFound("webhook endpoint " + shown.Bare(id)) }

// The error codes of the webhook API (both 409; their statuses are in
// fiscal's one table).
const (
	CodeLimitReached     fiscal.Code = "WEBHOOK_LIMIT_REACHED"     // too many endpoints for the account, or secrets for the endpoint
	CodeEndpointConflict fiscal.Code = "WEBHOOK_ENDPOINT_CONFLICT" // the endpoint's state forbids the change: configured by the operator, its last secret, disabled, none enabled
)

func webhookConflict(format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: CodeEndpointConflict, Detail: fmt.Sprintf(format, args...)}
}

// update runs fn in a side-data transaction and maps store failures to the
// engine's errors (an *fiscal.Error from fn passes through).
func (w *Service) update(fn func(tx ledger.Tx) error) error {
	err := w.e.Ledger().Update(fn)
	var fe *fiscal.Error
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return fiscal.StoreError(err)
}

func (w *Service) read(fn func(tx ledger.Tx) error) error {
	err := w.e.Ledger().View(fn)
	var fe *fiscal.Error
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return fiscal.StoreError(err)
}

// CreateEndpoint registers an endpoint for the account and returns
// it with its first secret, which is shown only here. The endpoint receives
// the events created after it (sequence ≥ its firstSequence); older ones
// are available from Events and Redeliver. An account the engine keeps no
// books for is NOT_FOUND.
func (w *Service) CreateEndpoint(ctx context.Context, accountID string, req EndpointRequest) (*EndpointWithSecret, error) {
	return w.createEndpoint(accountID, req, nil, nil)
}

// createEndpoint is CreateEndpoint with two hooks in its transaction, both
// given the request's fingerprint: before, which may answer instead (true:
// create nothing), and after, given the new endpoint (CreateEndpointIdempotent).
func (w *Service) createEndpoint(accountID string, req EndpointRequest,
	before func(tx ledger.Tx, fingerprint string) (bool, error),
	after func(tx ledger.Tx, fingerprint string, ep *EndpointWithSecret) error) (*EndpointWithSecret, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	if req.URL == "" {
		return nil, badRequest("/url", "is required")
	}
	u, err := w.policy.CheckURL(req.URL)
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/url", Detail: strings.TrimPrefix(err.Error(), "webhooks: "), Err: err}
	}
	desc, err := parseDescription("/description", req.Description)
	if err != nil {
		return nil, err
	}
	hexID, err := w.randomHex(12)
	if err != nil {
		return nil, err
	}
	now := w.clock().UTC()
	r := endpointRecord{ID: "we_" + hexID, Account: accountID, URL: u.String(), Description: desc, Source: EndpointSourceAPI, CreatedAt: now}
	secret, plain, err := w.newSecret(r.ID, now)
	if err != nil {
		return nil, err
	}
	r.Secrets = []storedSecret{secret}
	fingerprint := endpointFingerprint(r.URL, r.Description)
	var answer *EndpointWithSecret
	err = w.update(func(tx ledger.Tx) error {
		answer = nil
		if before != nil {
			if done, err := before(tx, fingerprint); done || err != nil {
				return err
			}
		}
		existing, err := accountEndpoints(tx, accountID)
		if err != nil {
			return err
		}
		if len(existing) >= MaxEndpoints {
			return &fiscal.Error{Code: CodeLimitReached, Detail: fmt.Sprintf("an account has at most %d webhook endpoints; delete one first", MaxEndpoints)}
		}
		for _, x := range existing {
			if sameTarget(x.URL, r.URL) {
				return &fiscal.Error{Code: CodeEndpointConflict, Field: "/url", Detail: fmt.Sprintf("endpoint %s already delivers to this URL", x.ID)}
			}
		}
		if r.FirstSequence, err = nextSequence(tx); err != nil {
			return err
		}
		if err := putJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, r.ID), r); err != nil {
			return err
		}
		answer = &EndpointWithSecret{Endpoint: w.view(r), Secret: plain, SecretID: secret.ID}
		if after != nil {
			return after(tx, fingerprint, answer)
		}
		return nil
	})
	if err != nil || answer == nil { // nil: before answered
		return nil, err
	}
	w.log.Info("webhook endpoint created", "account", accountID, "endpoint", r.ID, "first_sequence", r.FirstSequence)
	return answer, nil
}

// Endpoints lists the account's endpoints, oldest first; an account the
// engine keeps no books for is NOT_FOUND, not an empty list.
func (w *Service) Endpoints(ctx context.Context, accountID string) ([]Endpoint, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	var list []endpointRecord
	err := w.read(func(tx ledger.Tx) error {
		var err error
		list, err = accountEndpoints(tx, accountID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(list))
	for _, r := range list {
		out = append(out, w.view(r))
	}
	return out, nil
}

// Endpoint returns one of the account's endpoints. Another account's
// endpoint is not found.
func (w *Service) Endpoint(ctx context.Context, accountID, id string) (*Endpoint, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	var r endpointRecord
	err := w.read(func(tx ledger.Tx) error {
		found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), &r)
		if err == nil && !found {
			err = endpointNotFound(id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	v := w.view(r)
	return &v, nil
}

// modifyEndpoint loads the account's API endpoint id, lets fn change it and
// stores it, all in one transaction.
func (w *Service) modifyEndpoint(accountID, id string, allowConfig bool, fn func(tx ledger.Tx, r *endpointRecord) error) (endpointRecord, error) {
	var r endpointRecord
	err := w.update(func(tx ledger.Tx) error {
		var err error
		if r, err = storedEndpoint(tx, accountID, id, allowConfig, "change"); err != nil {
			return err
		}
		if err := fn(tx, &r); err != nil {
			return err
		}
		return putJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), r)
	})
	return r, err
}

// DeleteEndpoint removes an API-created endpoint. Its pending
// deliveries are cancelled when they come due. Endpoints of the accounts
// file are removed by editing the file (WEBHOOK_ENDPOINT_CONFLICT).
func (w *Service) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	if err := w.account(accountID); err != nil {
		return err
	}
	return w.update(func(tx ledger.Tx) error {
		if _, err := storedEndpoint(tx, accountID, id, false, "remove"); err != nil {
			return err
		}
		return tx.Delete(bucketWebhookEndpoints, endpointKey(accountID, id))
	})
}

// storedEndpoint reads the account's endpoint id in tx: not found, or,
// unless allowConfig, WEBHOOK_ENDPOINT_CONFLICT for an endpoint the
// accounts file defines, which the API does not change (verb: what to do
// to it in the file instead).
func storedEndpoint(tx ledger.Tx, accountID, id string, allowConfig bool, verb string) (endpointRecord, error) {
	var r endpointRecord
	found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), &r)
	switch {
	case err != nil:
		return r, err
	case !found:
		return r, endpointNotFound(id)
	case r.Source == EndpointSourceConfig && !allowConfig:
		return r, webhookConflict("endpoint %s is defined in the accounts file; %s it there", id, verb)
	}
	return r, nil
}

// AddSecret starts a rotation: it adds a new secret to an
// API-created endpoint and returns it (shown only here). Until the old
// secret is deleted with DeleteSecret, every delivery carries one v1
// signature per secret, so the receiver can switch at its own pace.
func (w *Service) AddSecret(ctx context.Context, accountID, id string) (*EndpointWithSecret, error) {
	res, err := w.AddSecretIdempotent(ctx, accountID, id, "")
	if err != nil {
		return nil, err
	}
	return res.EndpointWithSecret, nil
}

// DeleteSecret ends a rotation: the secret no longer signs. The last
// secret of an endpoint cannot be deleted.
func (w *Service) DeleteSecret(ctx context.Context, accountID, id, secretID string) (*Endpoint, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	r, err := w.modifyEndpoint(accountID, id, false, func(_ ledger.Tx, r *endpointRecord) error {
		for i, s := range r.Secrets {
			if s.ID != secretID {
				continue
			}
			if len(r.Secrets) == 1 {
				return webhookConflict("secret %s is the endpoint's only secret; add a new one first", secretID)
			}
			r.Secrets = append(r.Secrets[:i:i], r.Secrets[i+1:]...)
			return nil
		}
		return notFound("webhook secret " + secretID)
	})
	if err != nil {
		return nil, err
	}
	v := w.view(r)
	return &v, nil
}

// EnableEndpoint re-enables an endpoint disabled by a 410 answer.
// Events recorded while it was disabled are not sent; fetch them with
// Events or send them again with Redeliver. Its firstSequence moves to the
// next event's: the dispatcher decides by it alone, so that a dispatcher
// that had not yet passed the disabled time's events (after a crash, or
// another replica of a shared log) does not send them either.
func (w *Service) EnableEndpoint(ctx context.Context, accountID, id string) (*Endpoint, error) {
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	r, err := w.modifyEndpoint(accountID, id, true, func(tx ledger.Tx, r *endpointRecord) error {
		if r.DisabledAt == nil {
			return nil // enabled already: nothing changes
		}
		next, err := nextSequence(tx)
		if err != nil {
			return err
		}
		r.FirstSequence = max(r.FirstSequence, next)
		r.DisabledAt, r.DisabledWhy = nil, ""
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.notify()
	v := w.view(r)
	return &v, nil
}

// parseDescription accepts an endpoint's description: at most 200
// characters of valid text without control characters.
func parseDescription(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case !utf8.ValidString(v):
		return "", badRequest(field, "is not valid UTF-8")
	case utf8.RuneCountInString(v) > 200:
		return "", badRequest(field, "is longer than 200 characters")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", badRequest(field, "contains control characters")
	}
	return v, nil
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
}

// shownURL names an endpoint URL in an error or a log line: its scheme,
// host and path. Receivers often take a token in the URL (user:password, a
// query parameter, a fragment), and such an error reaches the operator's
// log (a refused accounts file); the part that can carry one is replaced
// by "…". A URL that does not parse is not shown at all.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(an endpoint URL that does not parse)"
	}
	shown := u.Scheme + "://"
	if u.User != nil {
		shown += "…@"
	}
	shown += u.Host + u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		shown += "?…"
	}
	if u.Fragment != "" {
		shown += "#…"
	}
	return shown
}
