package fiscal

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/fiscal/webhook"
	"github.com/fiscal402/fiscal402/ledger"
)

// WebhookOptions configure webhook delivery (Config.Webhooks). Every field
// documents its zero value; the zero value delivers to public https
// endpoints only.
type WebhookOptions struct {
	// Sender sends one attempt. nil means webhook.NewHTTPSender with the
	// policy and timeout below. (fiscal does not import net/http: the HTTP
	// client lives in package webhook.)
	Sender webhook.Sender
	// AllowLoopback accepts endpoints on loopback addresses, and plain
	// http:// to them, and lets the default sender connect there (tests,
	// local development). false refuses them.
	AllowLoopback bool
	// AllowPrivate accepts endpoints on private address space (RFC 1918,
	// RFC 6598, RFC 4193), for receivers on the operator's network. false
	// refuses them. Link-local addresses (cloud metadata) are always refused.
	AllowPrivate bool
	// Timeout bounds one attempt; 0 means webhook.DefaultTimeout (10 s).
	Timeout time.Duration
	// Schedule is the retry schedule; the zero value is the default
	// (backoff from 30 s to 8 h with ±20 % jitter, for up to 72 h).
	Schedule webhook.Schedule
	// Concurrency is the most attempts in flight at once; 0 means 32. At
	// most 4 of them go to the same endpoint, so that one slow receiver
	// cannot hold up the others.
	Concurrency int
	// After waits for a duration of the engine's clock; nil means
	// time.After. Tests pair it with Config.Clock to run the retry schedule
	// in virtual time.
	After func(time.Duration) <-chan time.Time
	// NoDispatcher: this engine records events and manages endpoints but
	// sends nothing (a maintenance tool that opens the data directory, for
	// example). The outbox keeps every event for the next engine that
	// dispatches. false (the default) starts the dispatcher in New.
	NoDispatcher bool
}

// Limits of the webhook API.
const (
	MaxWebhookEndpoints = 16 // per account, accounts file and API together
	MaxWebhookSecrets   = 3  // active secrets per endpoint: one v1 signature each
	minConfigSecretLen  = 24 // Standard Webhooks asks for at least 24 bytes of key
	defaultConcurrency  = 32
)

// WebhookEndpointConfig is an endpoint listed in the accounts file, under
// the account's "webhooks". Its secrets are written there in plain text,
// as the operator chose them (the file is mode 0600 and holds only key
// hashes otherwise): HMAC needs the secret itself. Endpoints created
// through the API keep theirs sealed in the ledger instead.
type WebhookEndpointConfig struct {
	URL         string   `json:"url"`
	Secrets     []string `json:"secrets"` // 1 to MaxWebhookSecrets; the first is the newest; at least 24 characters each
	Description string   `json:"description,omitempty"`
}

func (c WebhookEndpointConfig) validate() error {
	if c.URL == "" {
		return fmt.Errorf("webhooks: url is required")
	}
	if _, err := (webhook.TargetPolicy{AllowLoopback: true, AllowPrivate: true}).CheckURL(c.URL); err != nil {
		return fmt.Errorf("webhooks: %s: %w", c.URL, err)
	}
	if len(c.Secrets) == 0 || len(c.Secrets) > MaxWebhookSecrets {
		return fmt.Errorf("webhooks: %s: 1 to %d secrets are required", c.URL, MaxWebhookSecrets)
	}
	for i, s := range c.Secrets {
		if len(s) < minConfigSecretLen || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return fmt.Errorf("webhooks: %s: secret %d must be at least %d printable ASCII characters without spaces", c.URL, i+1, minConfigSecretLen)
		}
	}
	if _, err := parseText("/description", c.Description); err != nil {
		return fmt.Errorf("webhooks: %s: description: %w", c.URL, err)
	}
	return nil
}

// validateWebhookConfigs checks an account's webhooks for NewAccounts.
func validateWebhookConfigs(list []WebhookEndpointConfig) error {
	if len(list) > MaxWebhookEndpoints {
		return fmt.Errorf("webhooks: at most %d endpoints", MaxWebhookEndpoints)
	}
	seen := map[string]bool{}
	for _, c := range list {
		if err := c.validate(); err != nil {
			return err
		}
		if seen[c.URL] {
			return fmt.Errorf("webhooks: %s is listed twice", c.URL)
		}
		seen[c.URL] = true
	}
	return nil
}

// WebhookEndpoint is an endpoint as the API shows it: never its secrets,
// only their ids and hints.
type WebhookEndpoint struct {
	ID             string              `json:"id"`     // "we_" + 24 hex
	Object         string              `json:"object"` // "webhook_endpoint"
	URL            string              `json:"url"`
	Description    string              `json:"description,omitempty"`
	Source         string              `json:"source"` // "api" | "config" (the accounts file; change it there)
	Status         string              `json:"status"` // "enabled" | "disabled"
	DisabledAt     string              `json:"disabledAt,omitempty"`
	DisabledReason string              `json:"disabledReason,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	FirstSequence  int64               `json:"firstSequence"` // receives the events with sequence ≥ this
	Secrets        []WebhookSecretInfo `json:"secrets"`       // newest first: every one signs
	LastAttempt    *WebhookAttempt     `json:"lastAttempt,omitempty"`
}

// Endpoint statuses.
const (
	EndpointEnabled  = "enabled"
	EndpointDisabled = "disabled"
)

// WebhookSecretInfo identifies a secret without revealing it.
type WebhookSecretInfo struct {
	ID        string `json:"id"`
	CreatedAt string `json:"createdAt,omitempty"`
	Hint      string `json:"hint"` // "whsec_…" and the last 4 characters
}

// WebhookAttempt is the outcome of one delivery attempt.
type WebhookAttempt struct {
	At         string `json:"at"`
	EventID    string `json:"eventId"`
	DeliveryID string `json:"deliveryId"`
	Attempt    int    `json:"attempt"`
	Outcome    string `json:"outcome"`          // "delivered" | "failed" | "gone"
	Status     int    `json:"status,omitempty"` // the receiver's HTTP status; absent when none came
	Error      string `json:"error,omitempty"`
}

// WebhookEndpointWithSecret is the answer of the calls that create a
// secret: the only time the secret is shown.
type WebhookEndpointWithSecret struct {
	WebhookEndpoint
	Secret   string `json:"secret"`
	SecretID string `json:"secretId"`
}

// WebhookEndpointRequest is the body of POST /v1/webhook-endpoints.
type WebhookEndpointRequest struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// DecodeWebhookEndpointRequest reads the request strictly, like
// DecodeSettlementRequest.
func DecodeWebhookEndpointRequest(r io.Reader) (WebhookEndpointRequest, error) {
	var req WebhookEndpointRequest
	err := decodeStrict(r, &req)
	return req, err
}

// webhooks is the engine's webhook machinery: endpoint store, secret box
// and dispatcher.
type webhooks struct {
	e        *Engine
	policy   webhook.TargetPolicy
	keyDir   string
	boxMu    sync.Mutex
	box      *secretBox // loaded or created on first use
	rand     io.Reader
	schedule webhook.Schedule
	disp     *dispatcher // nil with NoDispatcher
}

func newWebhooks(e *Engine, opts WebhookOptions, keyDir string, rnd io.Reader) (*webhooks, error) {
	w := &webhooks{
		e:        e,
		policy:   webhook.TargetPolicy{AllowLoopback: opts.AllowLoopback, AllowPrivate: opts.AllowPrivate},
		rand:     &lockedReader{r: rnd},
		schedule: opts.Schedule,
	}
	for _, id := range e.accounts.IDs() {
		acc, _ := e.accounts.Get(id)
		for _, c := range acc.Webhooks {
			if _, err := w.policy.CheckURL(c.URL); err != nil {
				return nil, fmt.Errorf("fiscal: account %q: webhooks: %s: %w (see WebhookOptions.AllowLoopback/AllowPrivate)", acc.ID, c.URL, err)
			}
		}
	}
	w.keyDir = keyDir
	now := e.clock().UTC()
	if err := e.ledger.Update(func(tx ledger.Tx) error { return syncConfigEndpoints(tx, e.accounts, now) }); err != nil {
		return nil, fmt.Errorf("fiscal: webhook endpoints: %w", err)
	}
	if !opts.NoDispatcher {
		w.disp = startDispatcher(w, opts)
	}
	return w, nil
}

// notify tells the dispatcher that the outbox or an endpoint changed.
func (w *webhooks) notify() {
	if w != nil && w.disp != nil {
		w.disp.poke()
	}
}

// close stops the dispatcher; in-flight attempts are abandoned and become
// due again at once, so the next engine resumes them.
func (w *webhooks) close() {
	if w != nil && w.disp != nil {
		w.disp.close()
	}
}

func (w *webhooks) randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(w.rand, b); err != nil {
		return "", &Error{Code: CodeInternal, Detail: "no randomness", Err: err}
	}
	return hex.EncodeToString(b), nil
}

// newSecret returns a fresh secret: "whsec_" and 256 random bits in
// base64url, used as an HMAC key byte for byte (webhook package doc).
func (w *webhooks) newSecret(endpointID string, now time.Time) (storedSecret, string, error) {
	var b [32]byte
	if _, err := io.ReadFull(w.rand, b[:]); err != nil {
		return storedSecret{}, "", &Error{Code: CodeInternal, Detail: "no randomness", Err: err}
	}
	secret := "whsec_" + base64.RawURLEncoding.EncodeToString(b[:])
	id, err := w.randomHex(8)
	if err != nil {
		return storedSecret{}, "", err
	}
	s := storedSecret{ID: "whs_" + id, CreatedAt: now, Hint: secretHint(secret)}
	box, err := w.secretBox(true)
	if err != nil {
		return storedSecret{}, "", &Error{Code: CodeInternal, Detail: "the webhook secret key is unavailable", Err: err}
	}
	if s.Sealed, err = box.seal(endpointID, s.ID, secret); err != nil {
		return storedSecret{}, "", &Error{Code: CodeInternal, Detail: "sealing the secret failed", Err: err}
	}
	return s, secret, nil
}

// secretBox returns the sealing box, loading its key file on first use and
// creating it when create is set (the first API endpoint). Lazy, so that an
// engine without API endpoints neither writes the file nor draws from
// Config.Rand for it.
func (w *webhooks) secretBox(create bool) (*secretBox, error) {
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
func (w *webhooks) secrets(r *endpointRecord) ([]string, error) {
	if r.Source == EndpointSourceConfig {
		acc, ok := w.e.accounts.Get(r.Account)
		if ok {
			for _, c := range acc.Webhooks {
				if c.URL == r.URL {
					return c.Secrets, nil
				}
			}
		}
		return nil, fmt.Errorf("fiscal: endpoint %s is no longer in the accounts file", r.ID)
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
func (w *webhooks) view(r endpointRecord) WebhookEndpoint {
	v := WebhookEndpoint{
		ID: r.ID, Object: "webhook_endpoint", URL: r.URL, Description: r.Description, Source: r.Source,
		Status: EndpointEnabled, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339),
		FirstSequence: r.FirstSequence, Secrets: []WebhookSecretInfo{}, LastAttempt: r.LastAttempt,
	}
	if r.DisabledAt != nil {
		v.Status, v.DisabledAt, v.DisabledReason = EndpointDisabled, r.DisabledAt.UTC().Format(time.RFC3339), r.DisabledWhy
	}
	if r.Source == EndpointSourceConfig {
		if secrets, err := w.secrets(&r); err == nil {
			for i, s := range secrets {
				v.Secrets = append(v.Secrets, WebhookSecretInfo{ID: fmt.Sprintf("whs_config_%d", i+1), Hint: secretHint(s)})
			}
		}
		return v
	}
	for _, s := range r.Secrets {
		v.Secrets = append(v.Secrets, WebhookSecretInfo{ID: s.ID, CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339), Hint: s.Hint})
	}
	return v
}

func endpointNotFound(id string) *Error { return notFound("webhook endpoint " + id) }

func webhookConflict(format string, args ...any) *Error {
	return &Error{Code: CodeWebhookConflict, Detail: fmt.Sprintf(format, args...)}
}

// update runs fn in a side-data transaction and maps store failures to the
// engine's errors (an *Error from fn passes through).
func (w *webhooks) update(fn func(tx ledger.Tx) error) error {
	err := w.e.ledger.Update(fn)
	var fe *Error
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return storeError(err)
}

func (w *webhooks) read(fn func(tx ledger.Tx) error) error {
	err := w.e.ledger.View(fn)
	var fe *Error
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return storeError(err)
}

// CreateWebhookEndpoint registers an endpoint for the account and returns
// it with its first secret, which is shown only here. The endpoint receives
// the events created after it (sequence ≥ its firstSequence); older ones
// are available from Events and RedeliverEvent.
func (e *Engine) CreateWebhookEndpoint(ctx context.Context, accountID string, req WebhookEndpointRequest) (*WebhookEndpointWithSecret, error) {
	w := e.webhooks
	if _, ok := e.accounts.Get(accountID); !ok {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "unknown account"}
	}
	if req.URL == "" {
		return nil, badRequest("/url", "is required")
	}
	u, err := w.policy.CheckURL(req.URL)
	if err != nil {
		return nil, &Error{Code: CodeBadRequest, Field: "/url", Detail: strings.TrimPrefix(err.Error(), "webhook: "), Err: err}
	}
	desc, err := parseText("/description", req.Description)
	if err != nil {
		return nil, err
	}
	hexID, err := w.randomHex(12)
	if err != nil {
		return nil, err
	}
	now := e.clock().UTC()
	r := endpointRecord{ID: "we_" + hexID, Account: accountID, URL: u.String(), Description: desc, Source: EndpointSourceAPI, CreatedAt: now}
	secret, plain, err := w.newSecret(r.ID, now)
	if err != nil {
		return nil, err
	}
	r.Secrets = []storedSecret{secret}
	err = w.update(func(tx ledger.Tx) error {
		existing, err := accountEndpoints(tx, accountID)
		if err != nil {
			return err
		}
		if len(existing) >= MaxWebhookEndpoints {
			return &Error{Code: CodeWebhookLimit, Detail: fmt.Sprintf("an account has at most %d webhook endpoints; delete one first", MaxWebhookEndpoints)}
		}
		for _, x := range existing {
			if x.URL == r.URL {
				return &Error{Code: CodeWebhookConflict, Field: "/url", Detail: fmt.Sprintf("endpoint %s already delivers to this URL", x.ID)}
			}
		}
		if r.FirstSequence, err = nextSequence(tx); err != nil {
			return err
		}
		return putJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, r.ID), r)
	})
	if err != nil {
		return nil, err
	}
	e.log.Info("webhook endpoint created", "account", accountID, "endpoint", r.ID, "first_sequence", r.FirstSequence)
	return &WebhookEndpointWithSecret{WebhookEndpoint: w.view(r), Secret: plain, SecretID: secret.ID}, nil
}

// WebhookEndpoints lists the account's endpoints, oldest first.
func (e *Engine) WebhookEndpoints(ctx context.Context, accountID string) ([]WebhookEndpoint, error) {
	w := e.webhooks
	var list []endpointRecord
	err := w.read(func(tx ledger.Tx) error {
		var err error
		list, err = accountEndpoints(tx, accountID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]WebhookEndpoint, 0, len(list))
	for _, r := range list {
		out = append(out, w.view(r))
	}
	return out, nil
}

// WebhookEndpoint returns one of the account's endpoints. Another account's
// endpoint is not found.
func (e *Engine) WebhookEndpoint(ctx context.Context, accountID, id string) (*WebhookEndpoint, error) {
	var r endpointRecord
	err := e.webhooks.read(func(tx ledger.Tx) error {
		found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), &r)
		if err == nil && !found {
			err = endpointNotFound(id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	v := e.webhooks.view(r)
	return &v, nil
}

// modifyEndpoint loads the account's API endpoint id, lets fn change it and
// stores it, all in one transaction.
func (w *webhooks) modifyEndpoint(accountID, id string, allowConfig bool, fn func(r *endpointRecord) error) (endpointRecord, error) {
	var r endpointRecord
	err := w.update(func(tx ledger.Tx) error {
		found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), &r)
		switch {
		case err != nil:
			return err
		case !found:
			return endpointNotFound(id)
		case r.Source == EndpointSourceConfig && !allowConfig:
			return webhookConflict("endpoint %s is defined in the accounts file; change it there", id)
		}
		if err := fn(&r); err != nil {
			return err
		}
		return putJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), r)
	})
	return r, err
}

// DeleteWebhookEndpoint removes an API-created endpoint. Its pending
// deliveries are cancelled when they come due. Endpoints of the accounts
// file are removed by editing the file (WEBHOOK_ENDPOINT_CONFLICT).
func (e *Engine) DeleteWebhookEndpoint(ctx context.Context, accountID, id string) error {
	return e.webhooks.update(func(tx ledger.Tx) error {
		var r endpointRecord
		found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), &r)
		switch {
		case err != nil:
			return err
		case !found:
			return endpointNotFound(id)
		case r.Source == EndpointSourceConfig:
			return webhookConflict("endpoint %s is defined in the accounts file; remove it there", id)
		}
		return tx.Delete(bucketWebhookEndpoints, endpointKey(accountID, id))
	})
}

// AddWebhookSecret starts a rotation: it adds a new secret to an
// API-created endpoint and returns it (shown only here). Until the old
// secret is deleted with DeleteWebhookSecret, every delivery carries one v1
// signature per secret, so the receiver can switch at its own pace.
func (e *Engine) AddWebhookSecret(ctx context.Context, accountID, id string) (*WebhookEndpointWithSecret, error) {
	w := e.webhooks
	now := e.clock().UTC()
	secret, plain, err := w.newSecret(id, now)
	if err != nil {
		return nil, err
	}
	r, err := w.modifyEndpoint(accountID, id, false, func(r *endpointRecord) error {
		if len(r.Secrets) >= MaxWebhookSecrets {
			return &Error{Code: CodeWebhookLimit, Detail: fmt.Sprintf("an endpoint has at most %d secrets; delete an old one first", MaxWebhookSecrets)}
		}
		r.Secrets = append([]storedSecret{secret}, r.Secrets...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &WebhookEndpointWithSecret{WebhookEndpoint: w.view(r), Secret: plain, SecretID: secret.ID}, nil
}

// DeleteWebhookSecret ends a rotation: the secret no longer signs. The last
// secret of an endpoint cannot be deleted.
func (e *Engine) DeleteWebhookSecret(ctx context.Context, accountID, id, secretID string) (*WebhookEndpoint, error) {
	r, err := e.webhooks.modifyEndpoint(accountID, id, false, func(r *endpointRecord) error {
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
	v := e.webhooks.view(r)
	return &v, nil
}

// EnableWebhookEndpoint re-enables an endpoint disabled by a 410 answer.
// Events recorded while it was disabled are not sent; fetch them with
// Events or send them again with RedeliverEvent.
func (e *Engine) EnableWebhookEndpoint(ctx context.Context, accountID, id string) (*WebhookEndpoint, error) {
	r, err := e.webhooks.modifyEndpoint(accountID, id, true, func(r *endpointRecord) error {
		r.DisabledAt, r.DisabledWhy = nil, ""
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.webhooks.notify()
	v := e.webhooks.view(r)
	return &v, nil
}
