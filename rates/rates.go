package rates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ledger"
)

// Options configure the refresh. Every field documents its zero value.
type Options struct {
	// Feeds are the ECB feed URLs (or a mirror). Zero: fx.DefaultFeeds().
	Feeds fx.Feeds
	// Client fetches the feeds. nil: a client with a 30 s timeout.
	Client *http.Client
	// Logger receives the refresh's log lines. nil: the engine's logger.
	Logger *slog.Logger
	// Clock paces the fetches. nil: the system clock.
	Clock fx.Clock
	// PublicationMargin, RetryMin and RetryMax tune fx.Refresher; zero
	// means its defaults.
	PublicationMargin, RetryMin, RetryMax time.Duration
}

// Service is the running refresh of one engine's rates.
type Service struct {
	e         *fiscal.Engine
	refresher *fx.Refresher
	logger    *slog.Logger
	wake      chan struct{}
}

// loopName is the refresh's reservation in the engine's ledger
// (ledger.Reserve): one refresh per engine.
const loopName = "rates.refresh"

// Side bucket and key of the stored ECB documents in the ledger file.
var (
	bucketFX   = "fx-documents"
	keyFXStore = []byte("ecb")
	// keyFXDigest is the SHA-256 of the value at keyFXStore, written with
	// it: a replica polls these 32 bytes, not the documents (store.digest).
	keyFXDigest = []byte("ecb.sha256")
)

// New restores the ECB documents stored in the engine's ledger into live,
// re-decides what waited for them, and starts the refresh loop as the
// engine's background work. live must be the engine's Config.FX.
//
// One engine has one refresh: a second New on the same engine, while the
// engine is open, is refused with an error wrapping ledger.ErrReserved
// (two loops would fetch twice and re-decide the same waiting records side
// by side); keep the Service the first call returned. The same rule holds
// for ingest.New and webhooks.New.
func New(e *fiscal.Engine, live *fx.LiveTable, opts Options) (_ *Service, err error) {
	if live == nil {
		return nil, errors.New("rates: no live table")
	}
	if e.Settings().FX != fx.Source(live) {
		return nil, errors.New("rates: the engine does not read its rates from this live table (Config.FX)")
	}
	release, err := e.Ledger().Reserve(loopName)
	if err != nil {
		return nil, fmt.Errorf("rates: the engine's rates are already refreshed by an earlier rates.New (one refresh per engine: keep its Service): %w", err)
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	logger := opts.Logger
	if logger == nil {
		logger = e.Settings().Logger
	}
	s := &Service{e: e, logger: logger, wake: make(chan struct{}, 1)}
	r, err := fx.NewRefresher(fx.RefresherConfig{
		Live:              live,
		Store:             store{l: e.Ledger()},
		Client:            opts.Client,
		Feeds:             opts.Feeds,
		Clock:             opts.Clock,
		Logger:            logger,
		OnUpdate:          func(context.Context, *fx.Table) { s.poke() },
		PublicationMargin: opts.PublicationMargin,
		RetryMin:          opts.RetryMin,
		RetryMax:          opts.RetryMax,
	})
	if err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	}
	s.refresher = r
	if err := r.Restore(context.Background()); err != nil {
		return nil, fmt.Errorf("rates: restoring the stored ECB documents: %w", err)
	}
	e.Go(s.run)
	return s, nil
}

// Status reports the newest rate, its age and the refresh's state.
func (s *Service) Status() fx.Status { return s.refresher.Status() }

// poke asks the retry loop to re-decide waiting records (new rates).
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run fetches until stop, and re-decides waiting records after each update
// (and once at start, for records that waited across a restart).
func (s *Service) run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.refresher.Run(ctx); err != nil && ctx.Err() == nil {
			s.logger.Error("ecb rates refresh stopped", "err", err)
		}
	}()
	s.poke()
	var reload <-chan time.Time // nil: never
	if s.e.Ledger().Shared() {
		t := time.NewTicker(sharedReload)
		defer t.Stop()
		reload = t.C
	}
	var seen []byte // the stored documents' digest this replica restored
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case <-s.wake:
			retryLeased(ctx, s.e, s.logger)
		case <-reload:
			// What another replica fetched and stored reaches this one's
			// table (Restore merges; a grown table pokes), and the
			// re-decisions pass to this replica once the holder of their
			// lease has gone.
			if sum, err := (store{l: s.e.Ledger()}).digest(); err == nil && !bytes.Equal(sum, seen) {
				if s.refresher.Restore(ctx) == nil {
					seen = sum
				}
			}
			retryLeased(ctx, s.e, s.logger)
		}
	}
}

// sharedReload is how often a replica sharing its log with others checks
// the ECB documents they stored, and takes its turn at re-deciding the
// records that wait for a rate.
const sharedReload = 5 * time.Second

// retryLeased runs Retry when this server holds the lease: replicas
// sharing a log take turns, and the holder re-decides (its own refresh
// wakes it too).
func retryLeased(ctx context.Context, e *fiscal.Engine, logger *slog.Logger) {
	if held, err := e.Ledger().Lease("rates.retry", 10*time.Minute); err != nil || !held {
		return
	}
	n, err := Retry(ctx, e)
	switch {
	case err != nil && ctx.Err() == nil:
		logger.Error("re-deciding settlements that waited for a rate", "err", err)
	case n > 0:
		logger.Info("settlements decided with newly published rates", "revised", n)
	}
}

// RetryAtStart re-decides, once and as the engine's background work, the
// settlements that waited for a rate, for an engine whose rates are not
// refreshed (a fixed table, e.g. the server's -fx-file): the table it
// started with may hold the publications they waited for, which is how an
// operator loads them (fx_rate_unavailable is "re-decided when it is"
// published). New does the same at its start and after every update. A
// nil logger is the engine's.
func RetryAtStart(e *fiscal.Engine, logger *slog.Logger) {
	if logger == nil {
		logger = e.Settings().Logger
	}
	onceInBackground(e, func(ctx context.Context) { retryLeased(ctx, e, logger) })
}

// onceInBackground runs fn once as e's background work, with a context
// cancelled when the engine stops.
func onceInBackground(e *fiscal.Engine, fn func(ctx context.Context)) {
	e.Go(func(stop <-chan struct{}) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		fn(ctx)
	})
}

// store keeps the fetched documents in a side bucket of the ledger file.
type store struct{ l *ledger.Ledger }

func (st store) Load(ctx context.Context) ([]byte, error) {
	b, err := st.l.Get(bucketFX, keyFXStore)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

// Save keeps the documents already stored that blob lacks: replicas
// sharing a log each save what they fetched, and one must not drop what
// another saved (a replica whose own fetches fail serves the rates the
// others fetched: sharedReload).
func (st store) Save(ctx context.Context, blob []byte) error {
	docs, err := fx.DecodeDocuments(blob)
	if err != nil {
		return err
	}
	return st.l.Update(func(tx ledger.Tx) error {
		if old := tx.Get(bucketFX, keyFXStore); old != nil {
			stored, err := fx.DecodeDocuments(old)
			if err != nil {
				return err // never overwritten: the refresher reports it
			}
			have := make(map[string]bool, len(docs))
			for _, d := range docs {
				have[d.SHA256] = true
			}
			merged := false
			for _, d := range stored {
				if !have[d.SHA256] {
					docs, merged = append(docs, d), true
				}
			}
			if merged {
				if blob, err = fx.EncodeDocuments(docs); err != nil {
					return err
				}
			}
		}
		sum := sha256.Sum256(blob)
		if err := tx.Put(bucketFX, keyFXDigest, sum[:]); err != nil {
			return err
		}
		return tx.Put(bucketFX, keyFXStore, blob)
	})
}

// digest identifies the stored documents: the digest Save wrote beside
// them, or, for documents saved before it did, their own SHA-256.
func (st store) digest() ([]byte, error) {
	sum, err := st.l.Get(bucketFX, keyFXDigest)
	if !errors.Is(err, ledger.ErrNotFound) {
		return sum, err
	}
	blob, err := st.Load(context.Background())
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(blob)
	return h[:], nil
}

// Report is the public state of an engine's ECB rates: the newest
// reference date it can convert with, how old that publication is, and the
// refresh's state. GET /v1/fx/status serves it.
type Report struct {
	Refresh         bool      `json:"refresh"`         // a refresh loop keeps the table current
	Newest          string    `json:"newest"`          // the newest ECB reference date known
	NewestPublished time.Time `json:"newestPublished"` // 16:00 Frankfurt time on Newest
	AgeSeconds      int64     `json:"ageSeconds"`      // now − NewestPublished
	Expected        string    `json:"expected,omitempty"`
	Behind          bool      `json:"behind"` // a publication that should be out is not in the table
	LastSuccess     time.Time `json:"lastSuccess,omitzero"`
	NextAttempt     time.Time `json:"nextAttempt,omitzero"`
	Failures        int       `json:"failures"`
	LastError       string    `json:"lastError,omitempty"`
	Conflict        string    `json:"conflict,omitempty"`
	// Waiting is how many settlements and fiscal events wait for a rate not yet published.
	Waiting int `json:"waiting"`
}

// Report describes the refresh now.
func (s *Service) Report() Report {
	st := s.refresher.Status()
	return Report{
		Refresh: true, Newest: st.Newest, NewestPublished: st.NewestPublished, AgeSeconds: int64(st.Age / time.Second),
		Expected: st.Expected, Behind: st.Behind, LastSuccess: st.LastSuccess, NextAttempt: st.NextAttempt,
		Failures: st.Failures, LastError: st.LastError, Conflict: st.Conflict, Waiting: waiting(s.e),
	}
}

// StaticReport describes an engine whose rates are not refreshed (an
// embedded snapshot or an operator's file).
func StaticReport(e *fiscal.Engine) Report {
	r := Report{Waiting: waiting(e)}
	var t *fx.Table
	switch src := e.Settings().FX.(type) {
	case *fx.Table:
		t = src
	case *fx.LiveTable:
		t = src.Table()
	}
	if t == nil {
		return r
	}
	_, r.Newest = t.Range()
	if at, err := fx.PublicationInstant(r.Newest); err == nil {
		r.NewestPublished = at.UTC()
		r.AgeSeconds = int64(e.Now().Sub(at) / time.Second)
	}
	return r
}

// waiting is how many records wait for a rate (0 when unreadable).
func waiting(e *fiscal.Engine) int {
	q, _ := e.Queues()
	return q.WaitingForRates
}
