package ledger

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
)

// OpenPostgres opens (or creates) the ledger kept in the PostgreSQL
// database (and schema: search_path in the URL) that url names, for
// example "postgres://fiscal@db/fiscal402?sslmode=verify-full". Several
// processes may open the same log and append to it at once: each commit
// takes the log's sequencer lock, continues from the head it reads under
// it and signs the checkpoint of the size it reaches, so the log is one
// RFC 6962 log whatever the number of writers (# Storage backends).
//
// At open the missing schema migrations are applied (embedded SQL, recorded
// in schema_migrations, under an advisory lock so that replicas starting
// together migrate once). A new log gets its origin, the log key's name and
// hash, Options.Keys, and the signed checkpoint of the empty tree; an
// existing one is refused when its origin differs (ErrOriginMismatch) or
// when the log key or a key of Options.Keys differs from the one the first
// opener recorded (ErrLogKeyMismatch): replicas share their keys. Open then
// checks the latest checkpoint (signature, root of the stored right edge)
// and the newest OpenCheckLeaves leaves as for a file; Options.FullCheck
// runs Check instead. OpenTimeout bounds the connection and migration; ctx
// bounds them too.
func OpenPostgres(ctx context.Context, url string, opts Options) (*Ledger, error) {
	l, timeout, err := newLedger(redactURL(url), opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, max(timeout, 10*time.Second))
	defer cancel()
	logKey := ""
	switch {
	case opts.Signer != nil:
		logKey = fmt.Sprintf("%s+%08x", opts.Signer.Name(), opts.Signer.KeyHash())
	case opts.Verifier != nil:
		logKey = fmt.Sprintf("%s+%08x", opts.Verifier.Name(), opts.Verifier.KeyHash())
	}
	for k := range opts.Keys {
		if k == "" || k == "log" || strings.ContainsAny(k, " \n") {
			return nil, fmt.Errorf("ledger: key name %q: %w", k, ErrInvalid)
		}
	}
	st, lf, err := openPGStore(ctx, pgOpen{
		url: url, origin: opts.Origin, logKey: logKey, keys: opts.Keys,
		genesis: l.genesis, write: opts.Signer != nil,
	})
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			return nil, corrupt(l.path, ce)
		}
		return nil, err
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		st.close()
		return nil, fmt.Errorf("ledger: lease holder id: %w", err)
	}
	host, _ := os.Hostname()
	l.holder = fmt.Sprintf("%s/%d/%x", host, os.Getpid(), id)
	return l.start(st, lf, opts)
}

// sharedLog is a store other processes append to as well: the committed
// head this process knows may be behind.
type sharedLog interface {
	latest() (Checkpoint, error)
	lease(name, holder string, ttl time.Duration) (bool, error)
	release(name, holder string) error
}

// refresh moves the cached size and checkpoint to the store's latest, for
// a shared log. It returns why the latest could not be read (the store
// unreachable, or a stored head that does not verify): the cached head
// may then be older than one another replica acknowledged, so a caller
// that answers "the latest" (Checkpoint) must not answer it; Size keeps
// the cached one (it was true once).
func (l *Ledger) refresh() error {
	s, ok := l.store.(sharedLog)
	if !ok || l.closed.Load() {
		return nil
	}
	cp, err := s.latest()
	if err != nil {
		if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrClosed) {
			return err
		}
		l.integrityFailures.Add(1)
		return &IntegrityError{Index: -1, What: "latest checkpoint does not parse: " + err.Error()}
	}
	if cp.Size <= l.size.Load() {
		return nil
	}
	if l.verifier != nil {
		if _, err := note.Open(cp.Note, note.VerifierList(l.verifier)); err != nil {
			l.integrityFailures.Add(1)
			return &IntegrityError{Index: cp.Size, What: "latest checkpoint of size " + strconv.FormatInt(cp.Size, 10) + ": signature by the log key does not verify"}
		}
	}
	l.storeHead(cp)
	return nil
}

// storeHead moves the cached size and checkpoint to cp unless they are
// past it already: on a shared log a refresh may store another replica's
// newer head between this process's commit and its finish, and the size
// and checkpoint served must never go back (a review found that window).
func (l *Ledger) storeHead(cp Checkpoint) {
	l.headMu.Lock()
	defer l.headMu.Unlock()
	if cp.Size < l.size.Load() {
		return
	}
	l.latest.Store(&cp)
	l.size.Store(cp.Size)
}

// Lease takes or renews the lease name for this Ledger (this process's
// opening of the log) for ttl: it answers true while this Ledger holds it.
// On a log shared by several processes (PostgreSQL) a lease is held by one
// Ledger at a time and passes to another only after it expired (database
// time, so replicas' clocks do not matter), so that background work every
// replica runs (a queue, a periodic re-check) is done by one of them, and
// by another when that one dies. Renew well within ttl; work that may
// outlast ttl must tolerate being done twice. A bbolt file has one
// process: every lease is held.
func (l *Ledger) Lease(name string, ttl time.Duration) (bool, error) {
	return l.lease(name, l.holder, ttl)
}

func (l *Ledger) lease(name, holder string, ttl time.Duration) (bool, error) {
	if name == "" || ttl <= 0 {
		return false, fmt.Errorf("ledger: lease %q (%v): %w", name, ttl, ErrInvalid)
	}
	if l.closed.Load() {
		return false, ErrClosed
	}
	s, ok := l.store.(sharedLog)
	if !ok {
		return true, nil
	}
	return s.lease(name, holder, ttl)
}

// ReleaseLease gives a lease up before it expires (a clean shutdown), so
// another replica takes over at once.
func (l *Ledger) ReleaseLease(name string) error {
	return l.releaseLease(name, l.holder)
}

func (l *Ledger) releaseLease(name, holder string) error {
	if l.closed.Load() {
		return ErrClosed
	}
	s, ok := l.store.(sharedLog)
	if !ok {
		return nil
	}
	return s.release(name, holder)
}

// Shared reports whether other processes may append to the log at the
// same time (a PostgreSQL store).
func (l *Ledger) Shared() bool {
	_, ok := l.store.(sharedLog)
	return ok
}

func (s *pgStore) lease(name, holder string, ttl time.Duration) (bool, error) {
	ctx, cancel := s.trip(context.Background())
	defer cancel()
	var got string
	err := s.pool.QueryRow(ctx, `INSERT INTO leases (name, holder, until) VALUES ($1, $2, now() + $3 * interval '1 microsecond')
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leases.holder = excluded.holder OR leases.until < now()
		RETURNING holder`, name, holder, ttl.Microseconds()).Scan(&got)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return false, s.unavailable("lease", err)
	}
	return got == holder, nil
}

func (s *pgStore) release(name, holder string) error {
	ctx, cancel := s.trip(context.Background())
	defer cancel()
	if _, err := s.pool.Exec(ctx, "DELETE FROM leases WHERE name = $1 AND holder = $2", name, holder); err != nil {
		return s.unavailable("lease", err)
	}
	return nil
}

// isPostgresURL reports whether a store location is a PostgreSQL URL.
func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// checkPostgres is Check on a PostgreSQL log: opened read-only, checked in
// one snapshot.
func checkPostgres(url string, logKey note.Verifier) error {
	l, err := OpenPostgres(context.Background(), url, Options{Origin: logKey.Name(), Verifier: logKey})
	if err != nil {
		var co *CorruptError
		if errors.As(err, &co) {
			return &CheckError{Index: co.Index, What: co.Reason}
		}
		return err
	}
	defer l.Close()
	return l.Check()
}
