package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/ledger"
)

// bucketWebhookIdempotency: account \x00 Idempotency-Key → idempotentCreate
// JSON, one per key an endpoint creation was sent with. Kept forever, like
// the settlement keys, and kept when the endpoint is deleted, so that a
// late retry learns what became of its endpoint rather than making another.
const bucketWebhookIdempotency = "webhook-idempotency"

// idempotentCreate is what a key of CreateEndpointIdempotent remembers:
// the request's fingerprint, the endpoint and secret it created, and the
// first answer without its secret (the secret stays sealed on the
// endpoint, never in plain text here).
type idempotentCreate struct {
	Fingerprint string          `json:"fingerprint"`
	EndpointID  string          `json:"endpointId"`
	SecretID    string          `json:"secretId"`
	Answer      json.RawMessage `json:"answer"` // the Endpoint of the first answer
}

// CreateResult is the outcome of CreateEndpointIdempotent.
type CreateResult struct {
	*EndpointWithSecret
	// Replayed: the answer is the one the Idempotency-Key's first request
	// got, secret included; nothing was created.
	Replayed bool
}

// CreateEndpointIdempotent is CreateEndpoint bound to an Idempotency-Key
// (draft-ietf-httpapi-idempotency-key-header): "" is CreateEndpoint. The
// key is the account's. A first request creates the endpoint and binds the
// key to it; the same key with the same request (compared after
// normalisation: the URL as the same-target check compares it, and the
// description) replays the first answer
// with the same secret, unsealed again, while the endpoint exists and that
// secret is still its newest (no rotation since), without checking the URL
// against the policy again: a policy changed since (TargetPolicy) does not
// change the answer of a request that was already answered. Otherwise the key gets
// 409 IDEMPOTENCY_CONFLICT: with another request, or when the endpoint was
// deleted or its secret rotated since, the first answer can no longer be
// given honestly and nothing new is created for the key; the detail says
// which, and names the endpoint.
func (w *Service) CreateEndpointIdempotent(ctx context.Context, accountID string, req EndpointRequest, idempotencyKey string) (*CreateResult, error) {
	if err := fiscal.InputError(wire.IdempotencyKey(idempotencyKey)); err != nil {
		return nil, err
	}
	if idempotencyKey == "" {
		ep, err := w.CreateEndpoint(ctx, accountID, req)
		if err != nil {
			return nil, err
		}
		return &CreateResult{EndpointWithSecret: ep}, nil
	}
	// A replay first, before the URL is checked against the policy: a
	// retry of a creation that succeeded gets its first answer even when
	// the policy changed since (a restart without -webhooks-allow-loopback)
	// or would now refuse the URL. Only the same request replays; another
	// body under the key is checked as a new request and, once valid,
	// gets 409 IDEMPOTENCY_CONFLICT in the creation's transaction below.
	if replay, done, err := w.replayFirst(accountID, req, idempotencyKey); done || err != nil {
		return replay, err
	}
	var replay *CreateResult
	ep, err := w.createEndpoint(accountID, req, func(tx ledger.Tx, fingerprint string) (bool, error) {
		var ic idempotentCreate
		found, err := getJSON(tx, bucketWebhookIdempotency, endpointKey(accountID, idempotencyKey), &ic)
		if err != nil || !found {
			return false, err
		}
		replay, err = w.replayCreate(tx, accountID, ic, fingerprint)
		return true, err
	}, func(tx ledger.Tx, fingerprint string, ep *EndpointWithSecret) error {
		answer, err := json.Marshal(ep.Endpoint)
		if err != nil {
			return err
		}
		return putJSON(tx, bucketWebhookIdempotency, endpointKey(accountID, idempotencyKey),
			idempotentCreate{Fingerprint: fingerprint, EndpointID: ep.ID, SecretID: ep.SecretID, Answer: answer})
	})
	if err != nil {
		return nil, err
	}
	if replay != nil {
		return replay, nil
	}
	return &CreateResult{EndpointWithSecret: ep}, nil
}

// replayFirst answers a request whose key was already bound to this same
// request (its fingerprint, computed from the URL as parsed, without the
// policy's checks): done with the first answer, or with the 409 of a
// deleted endpoint or rotated secret. A key not bound, or bound to another
// request, or a request that does not parse, is not done: the creation
// checks it.
func (w *Service) replayFirst(accountID string, req EndpointRequest, idempotencyKey string) (replay *CreateResult, done bool, err error) {
	if err := w.account(accountID); err != nil {
		return nil, true, err
	}
	if req.URL == "" || len(req.URL) > MaxURLLength {
		return nil, false, nil
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, false, nil
	}
	desc, err := parseDescription("/description", req.Description)
	if err != nil {
		return nil, false, nil
	}
	fingerprint := endpointFingerprint(u.String(), desc)
	err = w.read(func(tx ledger.Tx) error {
		var ic idempotentCreate
		found, err := getJSON(tx, bucketWebhookIdempotency, endpointKey(accountID, idempotencyKey), &ic)
		if err != nil || !found || ic.Fingerprint != fingerprint {
			return err
		}
		done = true
		replay, err = w.replayCreate(tx, accountID, ic, fingerprint)
		return err
	})
	if err != nil {
		return nil, true, err
	}
	return replay, done, nil
}

// endpointFingerprint is the fingerprint of an endpoint request whose URL
// (as url.URL.String spells it) and description are given: the one the
// creation stores and a replay compares.
func endpointFingerprint(rawURL, description string) string {
	return requestFingerprint(targetKey(rawURL), description)
}

// requestFingerprint identifies an endpoint request after normalisation:
// the URL as targetKey compares targets (RFC 3986 section 6.2.2), so a
// retry that spells the same URL otherwise is the same request.
func requestFingerprint(url, description string) string {
	raw, _ := json.Marshal([]string{url, description})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// replayCreate answers a key already bound: the first answer with its
// secret, or why it can no longer be given.
func (w *Service) replayCreate(tx ledger.Tx, accountID string, ic idempotentCreate, fingerprint string) (*CreateResult, error) {
	conflict := func(format string, args ...any) error {
		return &fiscal.Error{Code: fiscal.CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: fmt.Sprintf(format, args...)}
	}
	if ic.Fingerprint != fingerprint {
		return nil, conflict("this Idempotency-Key was already used with a different request body")
	}
	var r endpointRecord
	found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, ic.EndpointID), &r)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, conflict("this Idempotency-Key created endpoint %s, which has since been deleted: its answer cannot be replayed. Send a new key to create another endpoint", ic.EndpointID)
	case len(r.Secrets) == 0 || r.Secrets[0].ID != ic.SecretID:
		return nil, conflict("this Idempotency-Key created endpoint %s, whose secret has since been rotated: the first answer's secret is no longer its secret and is not shown again. GET /v1/webhook-endpoints/%s shows the endpoint; POST /v1/webhook-endpoints/%s/secrets makes a new secret", ic.EndpointID, ic.EndpointID, ic.EndpointID)
	}
	var first Endpoint
	if err := json.Unmarshal(ic.Answer, &first); err != nil {
		return nil, err
	}
	box, err := w.secretBox(false)
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the webhook secret key is unavailable", Err: err}
	}
	plain, err := box.open(r.ID, r.Secrets[0].ID, r.Secrets[0].Sealed)
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "unsealing the secret failed", Err: err}
	}
	return &CreateResult{EndpointWithSecret: &EndpointWithSecret{Endpoint: first, Secret: plain, SecretID: ic.SecretID}, Replayed: true}, nil
}
