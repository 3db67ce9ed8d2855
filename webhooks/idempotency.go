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
// JSON, one per key a webhook operation was sent with: an endpoint
// creation, a secret rotation or a redelivery (Op), one key space for the
// three. Kept forever, like the settlement keys, and kept when the
// endpoint is deleted, so that a late retry learns what became of its
// endpoint rather than making another.
const bucketWebhookIdempotency = "webhook-idempotency"

// The operations a key can be bound to (idempotentCreate.Op).
const (
	opCreate    = ""          // CreateEndpointIdempotent (the keys stored before there were others)
	opSecret    = "secret"    // AddSecretIdempotent
	opRedeliver = "redeliver" // RedeliverIdempotent
)

// idempotentCreate is what a key of a webhook operation remembers: the
// operation and the request's fingerprint, and its first answer. For an
// endpoint creation or a rotation, the endpoint and the secret it made and
// the first answer without its secret (the secret stays sealed on the
// endpoint, never in plain text here); for a redelivery, the deliveries
// it scheduled.
type idempotentCreate struct {
	Op          string          `json:"op,omitempty"`
	Fingerprint string          `json:"fingerprint"`
	EndpointID  string          `json:"endpointId,omitempty"`
	SecretID    string          `json:"secretId,omitempty"`
	Answer      json.RawMessage `json:"answer"` // the Endpoint of the first answer, or its []Delivery
}

// opFingerprint is the fingerprint of a request of operation op (not an
// endpoint creation) on the ids given: three strings, where a creation's
// fingerprint (requestFingerprint) hashes two, so that no request of one
// kind has another kind's fingerprint.
func opFingerprint(op, id, filter string) string {
	raw, _ := json.Marshal([]string{op, id, filter})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// boundKey reads the key's binding in the transaction: nil when the key is
// free; IDEMPOTENCY_CONFLICT when it is bound to another operation or
// request (the way the settlement keys refuse one: 409, field
// Idempotency-Key).
func boundKey(tx ledger.Tx, accountID, idempotencyKey, op, fingerprint string) (*idempotentCreate, error) {
	var ic idempotentCreate
	found, err := getJSON(tx, bucketWebhookIdempotency, endpointKey(accountID, idempotencyKey), &ic)
	if err != nil || !found {
		return nil, err
	}
	if ic.Op != op || ic.Fingerprint != fingerprint {
		return nil, keyConflict("this Idempotency-Key was already used with a different request (another body, endpoint, event or operation)")
	}
	return &ic, nil
}

func keyConflict(format string, args ...any) error {
	return &fiscal.Error{Code: fiscal.CodeIdempotencyConflict, Field: "Idempotency-Key", Detail: fmt.Sprintf(format, args...)}
}

// bindKey binds the key to the operation's first answer, in the
// transaction that made it.
func bindKey(tx ledger.Tx, accountID, idempotencyKey string, ic idempotentCreate) error {
	return putJSON(tx, bucketWebhookIdempotency, endpointKey(accountID, idempotencyKey), ic)
}

// CreateResult is the outcome of CreateEndpointIdempotent and
// AddSecretIdempotent.
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
		ic, err := boundKey(tx, accountID, idempotencyKey, opCreate, fingerprint)
		if err != nil || ic == nil {
			return err != nil, err
		}
		replay, err = w.replaySecret(tx, accountID, *ic)
		return true, err
	}, func(tx ledger.Tx, fingerprint string, ep *EndpointWithSecret) error {
		answer, err := json.Marshal(ep.Endpoint)
		if err != nil {
			return err
		}
		return bindKey(tx, accountID, idempotencyKey,
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

// AddSecretIdempotent is AddSecret bound to an Idempotency-Key
// (draft-ietf-httpapi-idempotency-key-header): "" is AddSecret. The key is
// the account's, in the one key space of its webhook operations
// (CreateEndpointIdempotent). The first request rotates and binds the key
// to its answer in the same transaction, so that concurrent requests with
// the key rotate once; the same key for the same endpoint replays the first
// answer, its secret unsealed again (Replayed), while the endpoint exists
// and that secret is still its newest, as a creation's replay does, and
// adds no secret. Otherwise the key gets 409 IDEMPOTENCY_CONFLICT: bound to
// another endpoint or operation, or its secret rotated or deleted since, or
// the endpoint deleted (the first answer can no longer be given honestly);
// nothing is added.
func (w *Service) AddSecretIdempotent(ctx context.Context, accountID, id, idempotencyKey string) (*CreateResult, error) {
	if err := fiscal.InputError(wire.IdempotencyKey(idempotencyKey)); err != nil {
		return nil, err
	}
	if err := w.account(accountID); err != nil {
		return nil, err
	}
	now := w.clock().UTC()
	secret, plain, err := w.newSecret(id, now)
	if err != nil {
		return nil, err
	}
	fingerprint := opFingerprint(opSecret, id, "")
	var res *CreateResult
	err = w.update(func(tx ledger.Tx) error {
		res = nil
		if idempotencyKey != "" {
			ic, err := boundKey(tx, accountID, idempotencyKey, opSecret, fingerprint)
			if err != nil || ic != nil {
				if err == nil {
					res, err = w.replaySecret(tx, accountID, *ic)
				}
				return err
			}
		}
		r, err := storedEndpoint(tx, accountID, id, false, "change")
		if err != nil {
			return err
		}
		if len(r.Secrets) >= MaxSecrets {
			return &fiscal.Error{Code: CodeLimitReached, Detail: fmt.Sprintf("an endpoint has at most %d secrets; delete an old one first", MaxSecrets)}
		}
		r.Secrets = append([]storedSecret{secret}, r.Secrets...)
		if err := putJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, id), r); err != nil {
			return err
		}
		res = &CreateResult{EndpointWithSecret: &EndpointWithSecret{Endpoint: w.view(r), Secret: plain, SecretID: secret.ID}}
		if idempotencyKey == "" {
			return nil
		}
		answer, err := json.Marshal(res.Endpoint)
		if err != nil {
			return err
		}
		return bindKey(tx, accountID, idempotencyKey, idempotentCreate{Op: opSecret, Fingerprint: fingerprint, EndpointID: id, SecretID: secret.ID, Answer: answer})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
		if err != nil || !found || ic.Op != opCreate || ic.Fingerprint != fingerprint {
			return err
		}
		done = true
		replay, err = w.replaySecret(tx, accountID, ic)
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

// replaySecret answers a key bound to an endpoint creation or a rotation
// of the same request: the first answer with the secret it made, while the
// endpoint exists and that secret is still its newest; otherwise the
// first answer can no longer be given honestly and the key gets
// IDEMPOTENCY_CONFLICT naming the endpoint. The secret is unsealed again
// only for the account that bound the key (the key space is the
// account's), as the first answer gave it to that account.
func (w *Service) replaySecret(tx ledger.Tx, accountID string, ic idempotentCreate) (*CreateResult, error) {
	made := "created endpoint " + ic.EndpointID
	if ic.Op == opSecret {
		made = fmt.Sprintf("made secret %s of endpoint %s", ic.SecretID, ic.EndpointID)
	}
	var r endpointRecord
	found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(accountID, ic.EndpointID), &r)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, keyConflict("this Idempotency-Key %s; the endpoint has since been deleted: its answer cannot be replayed. Send a new key to make another", made)
	case len(r.Secrets) == 0 || r.Secrets[0].ID != ic.SecretID:
		return nil, keyConflict("this Idempotency-Key %s; the endpoint's secret has since been rotated or deleted: the first answer's secret is no longer its newest and is not shown again. GET /v1/webhook-endpoints/%s shows the endpoint; POST /v1/webhook-endpoints/%s/secrets with a new key makes a new secret", made, ic.EndpointID, ic.EndpointID)
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
