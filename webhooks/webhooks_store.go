package webhooks

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/internal/durable"
	"github.com/fiscal402/fiscal402/ledger"
)

// Side buckets of the webhook machinery (ledger side data: durable and
// fsynced with every Update, never only in memory).
const (
	// account \x00 endpoint id → endpointRecord JSON
	bucketWebhookEndpoints = "webhook-endpoints"
	// endpoint id \x00 be64(sequence) → deliveryState JSON: one per
	// (endpoint, event)
	bucketWebhookDeliveries = "webhook-deliveries"
	// be64(due unix nanos) + delivery key → empty: the pending deliveries
	// in the order they are due
	bucketWebhookDue = "webhook-due"
	// "cursor" → be64(the next outbox sequence to fan out)
	bucketWebhookMeta = "webhook-meta"
)

var metaCursor = []byte("cursor")

// Endpoint sources.
const (
	EndpointSourceAPI    = "api"    // created with POST /v1/webhook-endpoints; secrets sealed in the ledger
	EndpointSourceConfig = "config" // listed in the accounts file; secrets read from it
)

// endpointRecord is an endpoint as stored. Config endpoints have one too:
// it holds their first sequence, disabled state and last attempt, while
// their URL and secrets come from the accounts file.
type endpointRecord struct {
	ID            string         `json:"id"`
	Account       string         `json:"account"`
	URL           string         `json:"url"`
	Description   string         `json:"description,omitempty"`
	Source        string         `json:"source"`
	CreatedAt     time.Time      `json:"createdAt"`
	FirstSequence int64          `json:"firstSequence"`
	DisabledAt    *time.Time     `json:"disabledAt,omitempty"`
	DisabledWhy   string         `json:"disabledReason,omitempty"`
	Secrets       []storedSecret `json:"secrets,omitempty"`
	LastAttempt   *Attempt       `json:"lastAttempt,omitempty"`
}

type storedSecret struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	Hint      string    `json:"hint"`
	Sealed    string    `json:"sealed"` // base64(nonce ‖ AES-256-GCM ciphertext)
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"   // waiting for its next attempt
	DeliveryDelivered = "delivered" // a 2xx was received
	DeliveryFailed    = "failed"    // retries exhausted, the receiver answered 410, or no replica could send it within the retry horizon
	DeliveryCancelled = "cancelled" // the endpoint was deleted or disabled before delivery
)

// deliveryState is the durable state of one event for one endpoint.
type deliveryState struct {
	Account         string     `json:"account"`
	Endpoint        string     `json:"endpoint"`
	EndpointCreated int64      `json:"endpointCreated"` // the endpoint's CreatedAt (unix nanos): a re-created endpoint does not inherit
	Sequence        int64      `json:"sequence"`
	EventID         string     `json:"eventId"`
	Status          string     `json:"status"`
	Attempts        int        `json:"attempts"`    // all attempts so far: the X-Service-Attempt of the last one
	Round           int        `json:"round"`       // 1 + redeliveries requested
	RoundStart      time.Time  `json:"roundStart"`  // first attempt of the round (zero before it): the retry horizon counts from here
	RoundFailed     int        `json:"roundFailed"` // failed attempts in this round: the backoff exponent
	NextAt          time.Time  `json:"nextAt"`      // pending: when it is due (the due-index key)
	DeliveredAt     *time.Time `json:"deliveredAt,omitempty"`
	LastAttempt     *Attempt   `json:"lastAttempt,omitempty"`
	Reason          string     `json:"reason,omitempty"`      // why it ended without an attempt deciding it (Delivery.Reason)
	AbandonedAt     *time.Time `json:"abandonedAt,omitempty"` // when it was given up so (abandonUnsendable)
}

func endpointKey(account, id string) []byte { return []byte(account + "\x00" + id) }

func deliveryKey(endpointID string, seq int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(endpointID+"\x00"), uint64(seq))
}

func dueKey(at time.Time, dkey []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), dkey...)
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func getJSON(tx ledger.Tx, bucket string, key []byte, v any) (bool, error) {
	raw := tx.Get(bucket, key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("fiscal: %s %q: %w", bucket, key, err)
	}
	return true, nil
}

func putJSON(tx ledger.Tx, bucket string, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(bucket, key, raw)
}

// putDelivery stores a delivery state and keeps the due index in step: the
// old due key (from the state as it was) goes, the new one comes while the
// delivery is pending.
func putDelivery(tx ledger.Tx, old *deliveryState, st *deliveryState) error {
	dkey := deliveryKey(st.Endpoint, st.Sequence)
	if old != nil && old.Status == DeliveryPending {
		if err := tx.Delete(bucketWebhookDue, dueKey(old.NextAt, dkey)); err != nil {
			return err
		}
	}
	if st.Status == DeliveryPending {
		if err := tx.Put(bucketWebhookDue, dueKey(st.NextAt, dkey), nil); err != nil {
			return err
		}
	}
	return putJSON(tx, bucketWebhookDeliveries, dkey, st)
}

// accountEndpoints returns the account's endpoint records, oldest first.
func accountEndpoints(tx ledger.Tx, account string) ([]endpointRecord, error) {
	var list []endpointRecord
	var decodeErr error
	err := tx.Scan(bucketWebhookEndpoints, []byte(account+"\x00"), nil, false, func(k, v []byte) bool {
		var r endpointRecord
		if decodeErr = json.Unmarshal(v, &r); decodeErr != nil {
			return false
		}
		list = append(list, r)
		return true
	})
	if err == nil {
		err = decodeErr
	}
	sortEndpoints(list)
	return list, err
}

func sortEndpoints(list []endpointRecord) {
	sort.Slice(list, func(i, j int) bool {
		if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
			return list[i].CreatedAt.Before(list[j].CreatedAt)
		}
		return list[i].ID < list[j].ID
	})
}

// configEndpointID derives the id of an endpoint listed in the accounts
// file from (account, URL), so that it survives restarts and keeps its
// delivery state; another URL is another endpoint.
func configEndpointID(account, url string) string {
	h := sha256.Sum256([]byte("fiscal402 webhook endpoint\x00" + account + "\x00" + url))
	return "we_" + hex.EncodeToString(h[:12])
}

// metaConfigGeneration holds be64 of the highest configuration generation
// (Options.ConfigGeneration) a dispatching service applied to the log.
var metaConfigGeneration = []byte("config-generation")

// configSync is what syncConfigEndpoints did, for the start's log.
type configSync struct {
	generation int64            // the highest generation applied to the log, this one included
	older      bool             // the configuration is of an older generation: nothing was changed
	kept       []endpointRecord // stored accounts-file endpoints the configuration does not list, kept
	removed    []endpointRecord // those it removed (a newer generation, or a log of one server)
	missing    int              // endpoints it lists that an older generation left unstored
}

// syncConfigEndpoints brings the side records of the accounts file's
// endpoints in line with the configuration: new ones start at the next
// sequence (they receive only events created after them), and existing
// ones keep their state (a 410-disabled endpoint stays disabled across
// restarts). Which it may add and remove depends on whether the log is
// shared and on the configuration's generation:
//
//   - a log of one server (shared false): the configuration is the whole
//     truth; what it does not list is removed;
//   - a shared log, generation above the highest applied: the operator's
//     newer configuration; it adds, updates descriptions, removes what it
//     no longer lists, and becomes the highest applied;
//   - a shared log, the generation applied: it adds what it lists and is
//     missing (a replica's file names what that replica knows, and the
//     replicas of one rollout may know more or less); it removes nothing;
//   - a shared log, an older generation: a replica not yet updated, or
//     rolled back; it changes nothing (what a newer one removed stays
//     removed, what it added stays).
//
// It also initialises the fan-out cursor on first use: before this feature
// existed no endpoint could want the older events.
func syncConfigEndpoints(tx ledger.Tx, config map[string][]EndpointConfig, generation int64, shared bool, now time.Time) (configSync, error) {
	var out configSync
	next, err := nextSequence(tx)
	if err != nil {
		return out, err
	}
	if tx.Get(bucketWebhookMeta, metaCursor) == nil {
		if err := tx.Put(bucketWebhookMeta, metaCursor, be64(next)); err != nil {
			return out, err
		}
	}
	applied := int64(0)
	if v := tx.Get(bucketWebhookMeta, metaConfigGeneration); len(v) == 8 {
		applied = int64(binary.BigEndian.Uint64(v))
	}
	newer := generation > applied
	out.generation = max(applied, generation)
	out.older = shared && generation < applied
	remove := !shared || newer
	if newer {
		if err := tx.Put(bucketWebhookMeta, metaConfigGeneration, be64(generation)); err != nil {
			return out, err
		}
	}
	want := map[string]bool{}
	accounts := make([]string, 0, len(config))
	for id := range config {
		accounts = append(accounts, id)
	}
	slices.Sort(accounts)
	for _, account := range accounts {
		for _, cfg := range config[account] {
			eid := configEndpointID(account, cfg.URL)
			want[string(endpointKey(account, eid))] = true
			var r endpointRecord
			found, err := getJSON(tx, bucketWebhookEndpoints, endpointKey(account, eid), &r)
			if err != nil {
				return out, err
			}
			switch {
			case out.older && !found:
				out.missing++
				continue
			case out.older, found && (r.Description == cfg.Description || !remove):
				continue // descriptions are the newest configuration's
			case !found:
				r = endpointRecord{ID: eid, Account: account, URL: cfg.URL, Source: EndpointSourceConfig, CreatedAt: now, FirstSequence: next}
			}
			r.Description = cfg.Description
			if err := putJSON(tx, bucketWebhookEndpoints, endpointKey(account, eid), r); err != nil {
				return out, err
			}
		}
	}
	var stale [][]byte
	err = tx.Scan(bucketWebhookEndpoints, nil, nil, false, func(k, v []byte) bool {
		var r endpointRecord
		if json.Unmarshal(v, &r) == nil && r.Source == EndpointSourceConfig && !want[string(k)] {
			if remove {
				stale = append(stale, bytes.Clone(k))
				out.removed = append(out.removed, r)
			} else {
				out.kept = append(out.kept, r)
			}
		}
		return true
	})
	if err != nil {
		return out, err
	}
	for _, k := range stale {
		if err := tx.Delete(bucketWebhookEndpoints, k); err != nil {
			return out, err
		}
	}
	return out, nil
}

// secretBox seals API-created endpoint secrets with AES-256-GCM under a key
// kept in the key directory, beside the receipt and log keys. HMAC needs the
// secret itself, so it cannot be hashed like an API key; sealing keeps it
// out of the ledger file, which is handed to auditors for ledger.Check, and
// out of its backups. The additional data binds each ciphertext to its
// endpoint and secret id, so a sealed secret cannot be moved to another
// endpoint.
type secretBox struct {
	aead cipher.AEAD
	rand io.Reader
}

const secretKeyFile = "webhook-secrets.key"

// openSecretBox loads the sealing key from dir, or creates it when create
// is set and there is none.
func openSecretBox(dir string, rand io.Reader, create bool) (*secretBox, error) {
	path := filepath.Join(dir, secretKeyFile)
	var fresh func() ([]byte, error)
	if create {
		fresh = func() ([]byte, error) { return newSecretKey(rand) }
	}
	raw, err := durable.ReadOrCreate(path, 0o600, fresh)
	if err != nil {
		return nil, fmt.Errorf("webhooks: secret sealing key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("fiscal: webhook secret key %s: not 32 base64-encoded bytes", path)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &secretBox{aead: aead, rand: rand}, nil
}

// newSecretKey draws a sealing key, as its file holds it (base64).
func newSecretKey(rand io.Reader) ([]byte, error) {
	var key [32]byte
	if _, err := io.ReadFull(rand, key[:]); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(key[:]) + "\n"), nil
}

func secretAD(endpointID, secretID string) []byte {
	return []byte("fiscal402 webhook secret v1\x00" + endpointID + "\x00" + secretID)
}

func (b *secretBox) seal(endpointID, secretID, secret string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := io.ReadFull(b.rand, nonce); err != nil {
		return "", err
	}
	out := b.aead.Seal(nonce, nonce, []byte(secret), secretAD(endpointID, secretID))
	return base64.StdEncoding.EncodeToString(out), nil
}

func (b *secretBox) open(endpointID, secretID, sealed string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", fmt.Errorf("fiscal: webhook secret %s of %s is malformed", secretID, endpointID)
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], secretAD(endpointID, secretID))
	if err != nil {
		return "", fmt.Errorf("fiscal: webhook secret %s of %s does not open with %s (was the key file replaced?)", secretID, endpointID, secretKeyFile)
	}
	return string(plain), nil
}

// bucketSharedKeys holds the SHA-256 of the sealing key every replica of a
// shared log must use.
const bucketSharedKeys = "webhook-shared-keys"

// pinSecretKey, for a log that several replicas share, makes the sealing
// key at start (so that the keys directory copied to the other replicas
// holds it) and records its SHA-256 with the log at the first start; a
// replica with another key is refused: it could not open the secrets the
// others sealed.
func pinSecretKey(l *ledger.Ledger, dir string, rand io.Reader) error {
	path := filepath.Join(dir, secretKeyFile)
	if _, err := openSecretBox(dir, rand, true); err != nil {
		return err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("webhooks: secret sealing key: %w", err)
	}
	sum := sha256.Sum256(bytes.TrimSpace(raw))
	return l.Update(func(tx ledger.Tx) error {
		have := tx.Get(bucketSharedKeys, []byte("sealing-key-sha256"))
		switch {
		case have == nil:
			return tx.Put(bucketSharedKeys, []byte("sealing-key-sha256"), sum[:])
		case !bytes.Equal(have, sum[:]):
			return fmt.Errorf("webhooks: %s is not the sealing key the other replicas of this log use: copy it from one of them", path)
		}
		return nil
	})
}
