package ledger

import (
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
	"golang.org/x/mod/sumdb/tlog"
)

// pgStore keeps a ledger in a PostgreSQL schema (# Storage backends): one
// log per schema, shared by every server that opens it. The row of
// log_head is the log's sequencer: a commit reads it FOR UPDATE, so commits
// of all replicas queue on it, and each continues from the head it reads
// under the lock.
type pgStore struct {
	pool    *pgxpool.Pool
	name    string // the URL without password, for messages
	schema  string // the first schema of search_path, if the URL sets it
	timeout time.Duration
	cur     atomic.Pointer[storeHead]
}

//go:embed pgschema/*.sql
var pgMigrations embed.FS

// pgMigration is one versioned migration of the embedded schema.
type pgMigration struct {
	version int
	name    string
	sql     string
}

// pgMigrationList returns the embedded migrations in version order; a file
// is named NNNN_what.sql.
func pgMigrationList() ([]pgMigration, error) {
	files, err := fs.Glob(pgMigrations, "pgschema/*.sql")
	if err != nil {
		return nil, err
	}
	var out []pgMigration
	for _, f := range files {
		base := strings.TrimPrefix(f, "pgschema/")
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("ledger: migration %s: not NNNN_name.sql", f)
		}
		b, err := pgMigrations.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, pgMigration{version: n, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// pgOpen are the parameters of openPGStore.
type pgOpen struct {
	url     string
	origin  string
	logKey  string            // name+hash of the log key, pinned at first open
	keys    map[string]string // Options.Keys
	genesis func() (Checkpoint, error)
	write   bool
}

// pgLockMigrate is the advisory lock key under which a server migrates and
// initializes the schema ("f402" "migr").
const pgLockMigrate = int64(0x66343032_6d696772)

// openPGStore connects, applies the missing migrations and initializes a
// new log (origin, pinned keys, signed genesis checkpoint) or checks an
// existing one's origin and pinned keys, all in one transaction under an
// advisory lock, so replicas starting together migrate once.
func openPGStore(ctx context.Context, o pgOpen) (*pgStore, loadedFile, error) {
	var lf loadedFile
	cfg, err := pgxpool.ParseConfig(o.url)
	if err != nil {
		return nil, lf, fmt.Errorf("ledger: postgres URL: %w: %w", ErrInvalid, err)
	}
	rp := cfg.ConnConfig.RuntimeParams
	// An acknowledged append is durable: the commit waits for the WAL flush
	// (whatever the server's default), and a commit never waits forever on
	// the sequencer lock.
	rp["synchronous_commit"] = "on"
	if _, ok := rp["lock_timeout"]; !ok {
		rp["lock_timeout"] = "30s"
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	s := &pgStore{name: redactURL(o.url), timeout: time.Minute}
	if sp := strings.TrimSpace(strings.Split(rp["search_path"], ",")[0]); sp != "" && !strings.HasPrefix(sp, "$") {
		s.schema = strings.Trim(sp, `"`)
	}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, lf, fmt.Errorf("ledger: open %s: %w: %w", s.name, ErrUnavailable, err)
	}
	if err := s.migrate(ctx, o); err != nil {
		s.pool.Close()
		return nil, lf, err
	}
	head, dicts, err := s.load(ctx)
	if err != nil {
		s.pool.Close()
		return nil, lf, err
	}
	s.cur.Store(&head)
	return s, loadedFile{head: head, dicts: dicts}, nil
}

// redactURL drops the user and its password from a connection URL, and
// the query parameters that carry a secret: libpq takes every connection
// parameter in the query too, password and sslpassword (the client key's
// passphrase) included.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" {
		return "postgres"
	}
	p.User = nil
	if p.RawQuery != "" {
		q, err := url.ParseQuery(p.RawQuery)
		if err != nil {
			p.RawQuery = "…"
		} else {
			for k := range q {
				if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
					q.Del(k)
				}
			}
			p.RawQuery = q.Encode()
		}
	}
	return p.String()
}

func (s *pgStore) unavailable(what string, err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrClosed) {
		return err
	}
	if errors.Is(err, puddle.ErrClosedPool) {
		return ErrClosed
	}
	return fmt.Errorf("ledger: %s %s: %w: %w", what, s.name, ErrUnavailable, err)
}

// migrate applies the embedded migrations not yet in schema_migrations,
// then creates or checks the log.
func (s *pgStore) migrate(ctx context.Context, o pgOpen) error {
	ms, err := pgMigrationList()
	if err != nil {
		return err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.unavailable("open", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", pgLockMigrate); err != nil {
		return s.unavailable("open", err)
	}
	if sp := s.schema; sp != "" {
		// The schema the URL names is made on first use (a sandbox log
		// beside the production one).
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{sp}.Sanitize()); err != nil {
			return s.unavailable("open", err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return s.unavailable("open", err)
	}
	applied := map[int]bool{}
	rows, err := tx.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return s.unavailable("open", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return s.unavailable("open", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return s.unavailable("open", err)
	}
	known := 0
	for _, m := range ms {
		known = max(known, m.version)
		if applied[m.version] {
			continue
		}
		switch {
		case !o.write && len(applied) == 0:
			// No writer has opened it: nothing there, as for a missing file.
			return fmt.Errorf("ledger: open %s read-only: no log there: %w", s.name, ErrNotFound)
		case !o.write:
			// A writer of this version migrates it: the log is not
			// readable by this version yet, which is no caller's mistake.
			return fmt.Errorf("ledger: open %s read-only: migration %s is not applied yet: %w", s.name, m.name, ErrUnavailable)
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("ledger: open %s: migration %s: %w: %w", s.name, m.name, ErrUnavailable, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return s.unavailable("open", err)
		}
	}
	for v := range applied {
		if v > known {
			return fmt.Errorf("ledger: %s has schema migration %d, this version knows up to %d: %w", s.name, v, known, ErrInvalid)
		}
	}
	meta := map[string]string{}
	rows, err = tx.Query(ctx, "SELECT name, value FROM ledger_meta")
	if err != nil {
		return s.unavailable("open", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return s.unavailable("open", err)
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return s.unavailable("open", err)
	}
	origin, exists := meta["origin"]
	switch {
	case !exists && !o.write:
		return fmt.Errorf("ledger: open %s read-only: no log there: %w", s.name, ErrNotFound)
	case !exists:
		cp, err := o.genesis()
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue("INSERT INTO ledger_meta (name, value) VALUES ('origin', $1), ('schema', $2)", o.origin, schemaPostgres)
		b.Queue("INSERT INTO log_head (size, frontier, checkpoint, dict_id, dict_cut) VALUES (0, ''::bytea, $1, 0, 0)", cp.Note)
		b.Queue("INSERT INTO checkpoints (size, note) VALUES (0, $1)", cp.Note)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return s.unavailable("initialize", err)
		}
	case origin != o.origin:
		return fmt.Errorf("ledger: %s belongs to origin %q, not %q: %w", s.name, origin, o.origin, ErrOriginMismatch)
	}
	pins := map[string]string{}
	for k, v := range o.keys {
		pins["key:"+k] = v
	}
	if o.logKey != "" {
		pins["key:log"] = o.logKey
	}
	for _, k := range slices.Sorted(maps.Keys(pins)) {
		want := pins[k]
		have, ok := meta[k]
		switch {
		case ok && have != want:
			return fmt.Errorf("ledger: %s: the replicas share their keys, and %s is %q here but %q in the log: %w",
				s.name, strings.TrimPrefix(k, "key:"), want, have, ErrLogKeyMismatch)
		case !ok && o.write:
			if _, err := tx.Exec(ctx, "INSERT INTO ledger_meta (name, value) VALUES ($1, $2)", k, want); err != nil {
				return s.unavailable("open", err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return s.unavailable("open", err)
	}
	return nil
}

// load reads the head and the dictionaries.
func (s *pgStore) load(ctx context.Context) (storeHead, map[uint32]storedDict, error) {
	head, err := s.readHead(ctx, s.pool)
	if err != nil {
		return head, nil, err
	}
	dicts := map[uint32]storedDict{}
	rows, err := s.pool.Query(ctx, "SELECT id, cut_at, content FROM dicts")
	if err != nil {
		return head, nil, s.unavailable("open", err)
	}
	for rows.Next() {
		var id, cut int64
		var content []byte
		if err := rows.Scan(&id, &cut, &content); err != nil {
			return head, nil, s.unavailable("open", err)
		}
		dicts[uint32(id)] = storedDict{cutAt: cut, content: content}
	}
	if err := rows.Err(); err != nil {
		return head, nil, s.unavailable("open", err)
	}
	return head, dicts, nil
}

type pgQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const pgHeadSQL = "SELECT size, frontier, checkpoint, dict_id, dict_cut FROM log_head"

func (s *pgStore) readHead(ctx context.Context, q pgQuerier) (storeHead, error) {
	var size, did, dcut int64
	var fr, note []byte
	if err := q.QueryRow(ctx, pgHeadSQL).Scan(&size, &fr, &note, &did, &dcut); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return storeHead{}, &CheckError{Index: -1, What: "log_head has no row"}
		}
		return storeHead{}, s.unavailable("read", err)
	}
	return s.parseHead(size, fr, note, did, dcut)
}

func (s *pgStore) parseHead(size int64, fr, note []byte, did, dcut int64) (storeHead, error) {
	f, err := decodeFrontier(size, fr)
	if err != nil {
		return storeHead{}, &CheckError{Index: size, What: "log_head frontier: " + err.Error()}
	}
	cp, err := parseStoredCheckpoint(note)
	if err != nil {
		return storeHead{}, &CheckError{Index: size, What: "latest checkpoint: " + err.Error()}
	}
	if cp.Size != size {
		return storeHead{}, &CheckError{Index: size, What: fmt.Sprintf("log size %d but the latest checkpoint has size %d", size, cp.Size)}
	}
	return storeHead{frontier: f, latest: cp, dictID: uint32(did), dictCut: dcut}, nil
}

// encodeFrontier stores the right edge: the node of every set bit of the
// size, lowest level first.
func encodeFrontier(f frontier) []byte {
	out := make([]byte, 0, 32*8)
	for level := range 63 {
		if f.size>>level&1 == 1 {
			out = append(out, f.node[level][:]...)
		}
	}
	return out
}

func decodeFrontier(size int64, b []byte) (frontier, error) {
	f := frontier{size: size}
	for level := range 63 {
		if size>>level&1 == 1 {
			if len(b) < tlog.HashSize {
				return f, fmt.Errorf("too short for size %d", size)
			}
			copy(f.node[level][:], b)
			b = b[tlog.HashSize:]
		}
	}
	if len(b) != 0 {
		return f, fmt.Errorf("%d bytes too many for size %d", len(b), size)
	}
	return f, nil
}

func (s *pgStore) head() storeHead { return *s.cur.Load() }

func (s *pgStore) close() error {
	s.pool.Close()
	return nil
}

func (s *pgStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

// pgRoundTrip bounds one round trip to the database (a connection's
// acquisition, a statement or a pipelined batch, waiting for the
// sequencer included): a database that stops answering (a partition that
// drops everything, no FIN or RST) is ErrUnavailable within it, and a
// request is answered 503 DB_UNAVAILABLE while the server can still
// write its answer (the bundled server's write timeout is 30 s; a request
// may wait on two store operations). A read transaction that pages
// through many rows may take longer in all (s.timeout); each of its
// round trips is bounded.
const pgRoundTrip = 10 * time.Second

// trip is the context of one round trip within ctx.
func (s *pgStore) trip(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, min(pgRoundTrip, s.timeout))
}

// latest reads the newest committed checkpoint (another replica may have
// committed since this one's last commit).
func (s *pgStore) latest() (Checkpoint, error) {
	ctx, cancel := s.trip(context.Background())
	defer cancel()
	var note []byte
	if err := s.pool.QueryRow(ctx, "SELECT checkpoint FROM log_head").Scan(&note); err != nil {
		return Checkpoint{}, s.unavailable("read", err)
	}
	return parseStoredCheckpoint(note)
}

// dict reads one stored dictionary (written by another replica).
func (s *pgStore) dict(id uint32) ([]byte, error) {
	ctx, cancel := s.trip(context.Background())
	defer cancel()
	var content []byte
	if err := s.pool.QueryRow(ctx, "SELECT content FROM dicts WHERE id = $1", int64(id)).Scan(&content); err != nil {
		return nil, s.unavailable("read", err)
	}
	return content, nil
}

// trips counts the round trips of one commit.
type pgTrips struct{ n int64 }

// pgSequencerHold bounds, in every transaction that takes the sequencer
// (a commit, an update), how long it may wait idle for its writer's next
// statement: 5 s, where a commit's gap between its two round trips is its
// planning (milliseconds). A writer that stops answering while it holds
// the lock (its host cut off, powered down: no FIN or RST reaches the
// database) is otherwise noticed only when TCP keepalive gives up, hours
// later, and every other replica's commits wait for the lock until
// lock_timeout, again and again. The database ends such a session
// (idle_in_transaction_session_timeout), which rolls its transaction
// back: nothing of it was acknowledged, and its writer finds its
// connection gone (ErrUnavailable).
const pgSequencerHold = "SET LOCAL idle_in_transaction_session_timeout = '5s'"

// commit is one transaction of two round trips (# Storage backends):
// BEGIN, the head under its row lock and the batch's keys, pipelined; then
// every write and COMMIT, pipelined. Reads plan makes outside the loaded
// keys cost one round trip each.
func (s *pgStore) commit(keys func() *batchKeys, plan func(v commitView) (*batchWrites, error)) (st commitStats, err error) {
	ctx, cancel := s.ctx()
	defer cancel()
	actx, acancel := s.trip(ctx)
	conn, err := s.pool.Acquire(actx)
	acancel()
	if err != nil {
		return st, s.unavailable("commit", err)
	}
	ok := false
	defer func() {
		if !ok {
			// The transaction's state is unknown: drop the connection,
			// which rolls back whatever is open.
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}()
	k := keys()
	v := &pgView{s: s, ctx: ctx, conn: conn.Conn(), trips: &st.trips}
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue(pgSequencerHold)
	b.Queue(pgHeadSQL + " FOR UPDATE")
	v.queueKeys(b, k)
	st.trips++
	start := time.Now()
	ctx1, cancel1 := s.trip(ctx)
	defer cancel1()
	br := conn.SendBatch(ctx1, b)
	for range 2 { // BEGIN, pgSequencerHold
		if _, err := br.Exec(); err != nil {
			br.Close()
			return st, s.unavailable("commit", err)
		}
	}
	var size, did, dcut int64
	var fr, note []byte
	if err := br.QueryRow().Scan(&size, &fr, &note, &did, &dcut); err != nil {
		br.Close()
		return st, s.unavailable("commit", err)
	}
	// Close reads the keys' answers into v (queueKeys' callbacks).
	if err := br.Close(); err != nil {
		return st, s.unavailable("commit", err)
	}
	st.io += time.Since(start)
	head, err := s.parseHead(size, fr, note, did, dcut)
	if err != nil {
		return st, corrupt(s.name, err)
	}
	s.cur.Store(&head)
	v.size = size
	// Planning and encoding the writes: one measured span, which blocks
	// only when the plan reads beyond the keys loaded above.
	var w *batchWrites
	b = &pgx.Batch{}
	st.cpu = measuredCPU(func() {
		if w, err = plan(v); err == nil && w != nil {
			queueWrites(b, w)
		}
	})
	if err != nil {
		return st, err
	}
	if w == nil {
		st.trips++
		rctx, rcancel := s.trip(ctx)
		defer rcancel()
		if _, err := conn.Exec(rctx, "ROLLBACK"); err != nil {
			return st, s.unavailable("commit", err)
		}
		ok = true
		return st, nil
	}
	b.Queue("COMMIT")
	st.trips++
	start = time.Now()
	ctx2, cancel2 := s.trip(ctx)
	defer cancel2()
	err = conn.SendBatch(ctx2, b).Close()
	st.io += time.Since(start)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			// A unique constraint: the planner saw the keys free under
			// the lock, so this is a caller's duplicate it could not see.
			return st, fmt.Errorf("ledger: commit: %w: %s", ErrDuplicate, pe.Message)
		}
		// The answer to COMMIT may be what was lost: the log says.
		if s.committed(w.head.latest) {
			s.cur.Store(&w.head)
			return st, nil
		}
		return st, s.unavailable("commit", err)
	}
	ok = true
	s.cur.Store(&w.head)
	return st, nil
}

// committed settles a commit whose answer was lost: the checkpoint of its
// size is stored, byte for byte, exactly when it committed (checkpoint
// signatures are deterministic, and a different batch reaching the same
// size has a different root).
func (s *pgStore) committed(cp Checkpoint) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var note []byte
	err := s.pool.QueryRow(ctx, "SELECT note FROM checkpoints WHERE size = $1", cp.Size).Scan(&note)
	return err == nil && string(note) == string(cp.Note)
}

// queueWrites queues a batch's writes as multi-row statements.
func queueWrites(b *pgx.Batch, w *batchWrites) {
	if n := len(w.entries); n > 0 {
		idx, ids, blobs := make([]int64, n), make([][]byte, n), make([][]byte, n)
		for i, e := range w.entries {
			idx[i], ids[i], blobs[i] = e.index, []byte(e.id), e.blob
		}
		b.Queue("INSERT INTO entries (idx, id, blob) SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[])", idx, ids, blobs)
		base := tlog.StoredHashIndex(0, w.entries[0].index)
		hidx, hs := make([]int64, len(w.hashes)), make([][]byte, len(w.hashes))
		for i := range w.hashes {
			hidx[i], hs[i] = base+int64(i), w.hashes[i][:]
		}
		b.Queue("INSERT INTO hashes (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])", hidx, hs)
	}
	if n := len(w.claims); n > 0 {
		sp, ks, idx, fps := make([][]byte, n), make([][]byte, n), make([]int64, n), make([][]byte, n)
		for i, c := range w.claims {
			sp[i], ks[i], idx[i], fps[i] = []byte(c.space), []byte(c.key), c.index, nonNil(c.fingerprint)
		}
		b.Queue("INSERT INTO claims (space, key, idx, fingerprint) SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bigint[], $4::bytea[])", sp, ks, idx, fps)
	}
	if n := len(w.postings); n > 0 {
		ix, ks, ids := make([][]byte, n), make([][]byte, n), make([][]byte, n)
		for i, p := range w.postings {
			ix[i], ks[i], ids[i] = []byte(p.index), p.key, []byte(p.id)
		}
		b.Queue("INSERT INTO postings (ix, key, id) SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])", ix, ks, ids)
	}
	queueSide(b, w.side)
	if len(w.seqs) > 0 {
		var names [][]byte
		var ns []int64
		for _, name := range slices.Sorted(maps.Keys(w.seqs)) {
			names, ns = append(names, []byte(name)), append(ns, w.seqs[name])
		}
		b.Queue(`INSERT INTO sequences (name, n) SELECT * FROM unnest($1::bytea[], $2::bigint[])
			ON CONFLICT (name) DO UPDATE SET n = excluded.n`, names, ns)
	}
	if d := w.dict; d != nil {
		b.Queue("INSERT INTO dicts (id, cut_at, content) VALUES ($1, $2, $3)", int64(d.id), d.cutAt, d.content)
	}
	cp := w.head.latest
	b.Queue("INSERT INTO checkpoints (size, note) VALUES ($1, $2)", cp.Size, cp.Note)
	b.Queue("UPDATE log_head SET size = $1, frontier = $2, checkpoint = $3, dict_id = $4, dict_cut = $5",
		cp.Size, encodeFrontier(w.head.frontier), cp.Note, int64(w.head.dictID), w.head.dictCut)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// queueSide queues side writes, in order: the last write of a key wins,
// then upserts and deletes go as one statement each.
func queueSide(b *pgx.Batch, puts []Put) {
	if len(puts) == 0 {
		return
	}
	last := map[sideMapKey]int{}
	for i, p := range puts {
		last[sideMapKey{p.Bucket, string(p.Key)}] = i
	}
	var ub, uk, uv, db, dk [][]byte
	for i, p := range puts {
		if last[sideMapKey{p.Bucket, string(p.Key)}] != i {
			continue
		}
		if p.Value == nil {
			db, dk = append(db, []byte(p.Bucket)), append(dk, p.Key)
		} else {
			ub, uk, uv = append(ub, []byte(p.Bucket)), append(uk, p.Key), append(uv, p.Value)
		}
	}
	if len(ub) > 0 {
		b.Queue(`INSERT INTO side (bucket, key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value`, ub, uk, uv)
	}
	if len(db) > 0 {
		b.Queue("DELETE FROM side WHERE (bucket, key) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))", db, dk)
	}
}

// pgView is the commitView of a commit: the keys loaded in the first round
// trip, and queries in the transaction for anything else.
type pgView struct {
	s     *pgStore
	ctx   context.Context
	conn  *pgx.Conn
	trips *int64

	claims   map[claimKey]claimHolder
	asked    map[claimKey]bool
	ids      map[string]bool // asked → present
	postings map[postingKey]bool
	ranges   map[postingKey]bool      // AppendIndex prefixes loaded from the size on
	size     int64                    // the log's size, read under the lock with them
	sides    map[sideMapKey]sideValue // asked → value (deleted: absent)
	seqs     map[string]int64
}

// queueKeys queues the reads of the batch's keys; BatchResults.Close runs
// their callbacks, which fill the view's maps.
func (v *pgView) queueKeys(b *pgx.Batch, k *batchKeys) {
	v.claims, v.asked = map[claimKey]claimHolder{}, map[claimKey]bool{}
	v.ids, v.postings, v.ranges = map[string]bool{}, map[postingKey]bool{}, map[postingKey]bool{}
	v.sides, v.seqs = map[sideMapKey]sideValue{}, map[string]int64{}
	if len(k.claims) > 0 {
		sp, ks := make([][]byte, len(k.claims)), make([][]byte, len(k.claims))
		for i, c := range k.claims {
			sp[i], ks[i] = []byte(c.space), []byte(c.key)
			v.asked[c] = true
		}
		b.Queue(`SELECT c.space, c.key, c.idx, c.fingerprint, coalesce(e.id, ''::bytea) FROM claims c LEFT JOIN entries e ON e.idx = c.idx
			WHERE (c.space, c.key) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))`, sp, ks).Query(func(rows pgx.Rows) error {
			var space, key, fp, id []byte
			var idx int64
			_, err := pgx.ForEachRow(rows, []any{&space, &key, &idx, &fp, &id}, func() error {
				v.claims[claimKey{string(space), string(key)}] = claimHolder{idx, clone(fp), string(id)}
				return nil
			})
			return err
		})
	}
	if len(k.ids) > 0 {
		ids := make([][]byte, len(k.ids))
		for i, id := range k.ids {
			ids[i] = []byte(id)
			v.ids[id] = false
		}
		b.Queue("SELECT id FROM entries WHERE id = ANY($1::bytea[])", ids).Query(func(rows pgx.Rows) error {
			var id []byte
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error { v.ids[string(id)] = true; return nil })
			return err
		})
	}
	// Both posting queries answer (ix, key) rows of postings that exist.
	readPostings := func(rows pgx.Rows) error {
		var ix, key []byte
		_, err := pgx.ForEachRow(rows, []any{&ix, &key}, func() error {
			v.postings[postingKey{string(ix), string(key)}] = true
			return nil
		})
		return err
	}
	if len(k.postings) > 0 {
		ix, ks := make([][]byte, len(k.postings)), make([][]byte, len(k.postings))
		for i, p := range k.postings {
			ix[i], ks[i] = []byte(p.index), []byte(p.key)
			v.postings[p] = false
		}
		b.Queue("SELECT ix, key FROM postings WHERE (ix, key) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))", ix, ks).Query(readPostings)
	}
	if len(k.indexed) > 0 {
		// An AppendIndex posting's key ends in the index the entry gets,
		// at least the size read under the lock in the same round trip:
		// load whatever is already posted from there on (normally nothing).
		ix, ps := make([][]byte, len(k.indexed)), make([][]byte, len(k.indexed))
		for i, p := range k.indexed {
			ix[i], ps[i] = []byte(p.index), []byte(p.key)
			v.ranges[p] = true
		}
		b.Queue(`SELECT p.ix, p.key FROM postings p JOIN unnest($1::bytea[], $2::bytea[]) AS q(ix, prefix)
			ON p.ix = q.ix AND p.key >= q.prefix || int8send((SELECT size FROM log_head))
			AND p.key <= q.prefix || '\xffffffffffffffff'::bytea AND length(p.key) = length(q.prefix) + 8`, ix, ps).Query(readPostings)
	}
	if len(k.side) > 0 {
		bs, ks := make([][]byte, len(k.side)), make([][]byte, len(k.side))
		for i, sk := range k.side {
			bs[i], ks[i] = []byte(sk.Bucket), sk.Key
			v.sides[sideMapKey{sk.Bucket, string(sk.Key)}] = sideValue{deleted: true}
		}
		b.Queue("SELECT bucket, key, value FROM side WHERE (bucket, key) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))", bs, ks).Query(func(rows pgx.Rows) error {
			var bucket, key, val []byte
			_, err := pgx.ForEachRow(rows, []any{&bucket, &key, &val}, func() error {
				v.sides[sideMapKey{string(bucket), string(key)}] = sideValue{value: clone(val)}
				return nil
			})
			return err
		})
	}
	if len(k.sequences) > 0 {
		names := make([][]byte, len(k.sequences))
		for i, n := range k.sequences {
			names[i] = []byte(n)
			v.seqs[n] = 0
		}
		b.Queue("SELECT name, n FROM sequences WHERE name = ANY($1::bytea[])", names).Query(func(rows pgx.Rows) error {
			var name []byte
			var n int64
			_, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error { v.seqs[string(name)] = n; return nil })
			return err
		})
	}
}

// one is a query outside the loaded keys: one more round trip.
func (v *pgView) one(sql string, args []any, dest ...any) (bool, error) {
	*v.trips++
	ctx, cancel := v.s.trip(v.ctx)
	defer cancel()
	err := v.conn.QueryRow(ctx, sql, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, v.s.unavailable("commit", err)
	}
	return true, nil
}

func (v *pgView) claim(space, key string) (int64, []byte, string, bool, error) {
	ck := claimKey{space, key}
	if v.asked[ck] {
		h, ok := v.claims[ck]
		return h.index, h.fingerprint, h.id, ok, nil
	}
	var idx int64
	var fp, id []byte
	ok, err := v.one(`SELECT c.idx, c.fingerprint, coalesce(e.id, ''::bytea) FROM claims c LEFT JOIN entries e ON e.idx = c.idx
		WHERE c.space = $1 AND c.key = $2`, []any{[]byte(space), []byte(key)}, &idx, &fp, &id)
	return idx, fp, string(id), ok, err
}

func (v *pgView) hasID(id string) (bool, error) {
	if has, asked := v.ids[id]; asked {
		return has, nil
	}
	var one int
	return v.one("SELECT 1 FROM entries WHERE id = $1", []any{[]byte(id)}, &one)
}

func (v *pgView) hasPosting(index string, key []byte) (bool, error) {
	if has, asked := v.postings[postingKey{index, string(key)}]; asked {
		return has, nil
	}
	if n := len(key) - 8; n >= 0 && v.ranges[postingKey{index, string(key[:n])}] && binary.BigEndian.Uint64(key[n:]) >= uint64(v.size) {
		// The range from the size on was loaded, and the key ends in an
		// index at least the size. A key of the same form below the size
		// (an entry built in the committer posting an older index's key
		// itself) is asked below: a review found it passed as free and
		// the batch failed at the insert, every append of it with it.
		return false, nil
	}
	var one int
	return v.one("SELECT 1 FROM postings WHERE ix = $1 AND key = $2", []any{[]byte(index), key}, &one)
}

func (v *pgView) side(bucket string, key []byte) ([]byte, error) {
	if sv, asked := v.sides[sideMapKey{bucket, string(key)}]; asked {
		if sv.deleted {
			return nil, nil
		}
		return clone(sv.value), nil
	}
	var val []byte
	ok, err := v.one("SELECT value FROM side WHERE bucket = $1 AND key = $2", []any{[]byte(bucket), key}, &val)
	if !ok {
		return nil, err
	}
	return nonNil(val), nil
}

func (v *pgView) sequence(name string) (int64, error) {
	if n, asked := v.seqs[name]; asked {
		return n, nil
	}
	var n int64
	_, err := v.one("SELECT n FROM sequences WHERE name = $1", []any{[]byte(name)}, &n)
	return n, err
}

func (v *pgView) entry(index int64) (rawEntry, error) { return pgEntry(v.one, v.s.name, index) }

// pgEntry reads the entry at index with one (a view's or a reader's query);
// a missing entry below the size read is damage.
func pgEntry(one func(sql string, args []any, dest ...any) (bool, error), name string, index int64) (rawEntry, error) {
	var id, blob []byte
	ok, err := one("SELECT id, blob FROM entries WHERE idx = $1", []any{index}, &id, &blob)
	if err == nil && !ok {
		err = &CorruptError{Path: name, Index: index, Reason: fmt.Sprintf("entry %d is missing", index)}
	}
	return rawEntry{id: string(id), blob: blob}, err
}

// view runs fn in a read-only REPEATABLE READ transaction: one snapshot.
func (s *pgStore) view(fn func(r storeReader) error) error {
	ctx, cancel := s.ctx()
	defer cancel()
	actx, acancel := s.trip(ctx)
	conn, err := s.pool.Acquire(actx)
	acancel()
	if err != nil {
		return s.unavailable("read", err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.Queue("SELECT size FROM log_head")
	bctx, bcancel := s.trip(ctx)
	defer bcancel()
	br := conn.SendBatch(bctx, b)
	_, err = br.Exec()
	r := &pgReader{s: s, ctx: ctx, conn: conn.Conn()}
	if err == nil {
		err = br.QueryRow().Scan(&r.n)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		conn.Conn().Close(context.Background())
		return s.unavailable("read", err)
	}
	ferr := fn(r)
	rctx, rcancel := s.trip(ctx)
	defer rcancel()
	if _, err := conn.Exec(rctx, "ROLLBACK"); err != nil {
		conn.Conn().Close(context.Background())
		if ferr == nil {
			ferr = s.unavailable("read", err)
		}
	}
	if ferr == nil && r.err != nil {
		return r.err
	}
	return ferr
}

// update runs fn in a transaction that holds the sequencer lock, like
// bbolt's single writer: side-data read-modify-writes of all replicas and
// commits are serialized.
func (s *pgStore) update(fn func(tx Tx) error) error {
	ctx, cancel := s.ctx()
	defer cancel()
	actx, acancel := s.trip(ctx)
	conn, err := s.pool.Acquire(actx)
	acancel()
	if err != nil {
		return s.unavailable("update", err)
	}
	ok := false
	defer func() {
		if !ok {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}()
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue(pgSequencerHold)
	b.Queue("SELECT size FROM log_head FOR UPDATE")
	bctx, bcancel := s.trip(ctx)
	defer bcancel()
	if err := conn.SendBatch(bctx, b).Close(); err != nil {
		return s.unavailable("update", err)
	}
	r := &pgReader{s: s, ctx: ctx, conn: conn.Conn(), writable: true}
	err = fn(pgSideTx{r})
	if err == nil {
		err = r.err
	}
	if err != nil {
		// The caller's refusal (a quota used up) keeps the connection.
		rctx, rcancel := s.trip(ctx)
		defer rcancel()
		if _, rerr := conn.Exec(rctx, "ROLLBACK"); rerr == nil && r.err == nil {
			ok = true
		}
		return err
	}
	cctx, ccancel := s.trip(ctx)
	defer ccancel()
	if _, err := conn.Exec(cctx, "COMMIT"); err != nil {
		return s.unavailable("update", err)
	}
	ok = true
	return nil
}

// pgReader is the storeReader of a read transaction (and, writable, the
// Tx of an update). A failed read inside a Tx method that cannot return
// an error is remembered and fails the transaction.
type pgReader struct {
	s        *pgStore
	ctx      context.Context
	conn     *pgx.Conn
	n        int64
	writable bool
	err      error
}

func (r *pgReader) size() int64 { return r.n }

func (r *pgReader) fail(err error) error {
	err = r.s.unavailable("read", err)
	if r.err == nil {
		r.err = err
	}
	return err
}

func (r *pgReader) one(sql string, args []any, dest ...any) (bool, error) {
	ctx, cancel := r.s.trip(r.ctx)
	defer cancel()
	err := r.conn.QueryRow(ctx, sql, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, r.fail(err)
	}
	return true, nil
}

func (r *pgReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	ctx, cancel := r.s.trip(r.ctx)
	defer cancel()
	rows, err := r.conn.Query(ctx, "SELECT idx, hash FROM hashes WHERE idx = ANY($1::bigint[])", indexes)
	if err != nil {
		return nil, r.fail(err)
	}
	got := make(map[int64]tlog.Hash, len(indexes))
	var idx int64
	var h []byte
	if _, err := pgx.ForEachRow(rows, []any{&idx, &h}, func() error {
		if len(h) == tlog.HashSize {
			got[idx] = tlog.Hash(h)
		}
		return nil
	}); err != nil {
		return nil, r.fail(err)
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		hv, ok := got[x]
		if !ok {
			return nil, fmt.Errorf("ledger: stored hash %d is missing", x)
		}
		out[i] = hv
	}
	return out, nil
}

func (r *pgReader) entryIndex(id string) (int64, bool, error) {
	var idx int64
	ok, err := r.one("SELECT idx FROM entries WHERE id = $1 AND idx < $2", []any{[]byte(id), r.n}, &idx)
	return idx, ok, err
}

func (r *pgReader) entry(index int64) (rawEntry, error) { return pgEntry(r.one, r.s.name, index) }

func (r *pgReader) entryID(index int64) (string, error) {
	var id []byte
	_, err := r.one("SELECT id FROM entries WHERE idx = $1", []any{index}, &id)
	return string(id), err
}

func (r *pgReader) checkpoint(size int64) ([]byte, bool, error) {
	var note []byte
	ok, err := r.one("SELECT note FROM checkpoints WHERE size = $1", []any{size}, &note)
	return note, ok, err
}

func (r *pgReader) checkpointAbove(index int64) ([]byte, bool, error) {
	var note []byte
	ok, err := r.one("SELECT note FROM checkpoints WHERE size > $1 ORDER BY size LIMIT 1", []any{index}, &note)
	return note, ok, err
}

func (r *pgReader) claim(space, key string) (int64, []byte, bool, error) {
	if key == "" {
		return 0, nil, false, nil
	}
	var idx int64
	var fp []byte
	ok, err := r.one("SELECT idx, fingerprint FROM claims WHERE space = $1 AND key = $2", []any{[]byte(space), []byte(key)}, &idx, &fp)
	return idx, fp, ok, err
}

func (r *pgReader) posting(index string, key []byte) (string, bool, error) {
	if len(key) == 0 {
		return "", false, nil
	}
	var id []byte
	ok, err := r.one("SELECT id FROM postings WHERE ix = $1 AND key = $2", []any{[]byte(index), key}, &id)
	return string(id), ok, err
}

// pgScanPage is how many keys a scan reads per query.
const pgScanPage = 256

// scanRows pages through the keys of one bucket-like table in byte order.
func (r *pgReader) scanRows(table, col, keyCol, valCol string, name []byte, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) error {
	var hi []byte
	if len(prefix) > 0 {
		hi = prefixEnd(prefix)
	}
	op, order := ">", "ASC"
	if reverse {
		op, order = "<", "DESC"
	}
	sql := fmt.Sprintf(`SELECT %[3]s, %[4]s FROM %[1]s WHERE %[2]s = $1 AND %[3]s >= $2 AND ($3::bytea IS NULL OR %[3]s < $3)
		AND ($4::bytea IS NULL OR %[3]s %[5]s $4) ORDER BY %[3]s %[6]s LIMIT %[7]d`, table, col, keyCol, valCol, op, order, pgScanPage)
	lo := nonNil(prefix)
	var cur []byte
	if len(after) > 0 {
		cur = clone(after)
	}
	for {
		ctx, cancel := r.s.trip(r.ctx)
		rows, err := r.conn.Query(ctx, sql, name, lo, hi, cur)
		if err != nil {
			cancel()
			return r.fail(err)
		}
		type kv struct{ k, v []byte }
		var page []kv
		var k, v []byte
		_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
			page = append(page, kv{clone(k), nonNil(clone(v))})
			return nil
		})
		cancel()
		if err != nil {
			return r.fail(err)
		}
		for _, p := range page {
			if !fn(p.k, p.v) {
				return nil
			}
		}
		if len(page) < pgScanPage {
			return nil
		}
		cur = page[len(page)-1].k
	}
}

func (r *pgReader) scan(index string, prefix, after []byte, reverse bool, fn func(k []byte, id string) bool) error {
	return r.scanRows("postings", "ix", "key", "id", []byte(index), prefix, after, reverse, func(k, v []byte) bool { return fn(k, string(v)) })
}

func (r *pgReader) sideTx() Tx { return pgSideTx{r} }

func (r *pgReader) sequence(name string) (int64, error) {
	var n int64
	_, err := r.one("SELECT n FROM sequences WHERE name = $1", []any{[]byte(name)}, &n)
	return n, err
}

// pgSideTx is the Tx over the side table.
type pgSideTx struct{ r *pgReader }

func (t pgSideTx) Get(bucket string, key []byte) []byte {
	if bucket == "" || len(key) == 0 {
		return nil
	}
	var v []byte
	ok, _ := t.r.one("SELECT value FROM side WHERE bucket = $1 AND key = $2", []any{[]byte(bucket), key}, &v)
	if !ok {
		return nil
	}
	return nonNil(v)
}

func (t pgSideTx) Put(bucket string, key, value []byte) error {
	if !t.r.writable {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	if len(value) > maxValueSize {
		return fmt.Errorf("ledger: side %q: value of %d bytes: %w", bucket, len(value), ErrInvalid)
	}
	ctx, cancel := t.r.s.trip(t.r.ctx)
	defer cancel()
	if _, err := t.r.conn.Exec(ctx, `INSERT INTO side (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value`, []byte(bucket), key, nonNil(value)); err != nil {
		return t.r.fail(err)
	}
	return nil
}

func (t pgSideTx) Delete(bucket string, key []byte) error {
	if !t.r.writable {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	ctx, cancel := t.r.s.trip(t.r.ctx)
	defer cancel()
	if _, err := t.r.conn.Exec(ctx, "DELETE FROM side WHERE bucket = $1 AND key = $2", []byte(bucket), key); err != nil {
		return t.r.fail(err)
	}
	return nil
}

func (t pgSideTx) Scan(bucket string, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) error {
	if bucket == "" {
		return nil
	}
	return t.r.scanRows("side", "bucket", "key", "value", []byte(bucket), prefix, after, reverse, func(k, v []byte) bool {
		more, _ := callUser(func() (bool, error) { return fn(k, v), nil })
		return more
	})
}

// ClaimHolder looks a claim up in the transaction's own connection (Tx):
// no second connection while an update holds the log's lock. A review
// found concurrent bindings of Idempotency-Keys, each asking through the
// Ledger, exhausting the pool until lock_timeout.
func (t pgSideTx) ClaimHolder(space, key string) (string, []byte, bool, error) {
	idx, fp, held, err := t.r.claim(space, key)
	if err != nil || !held {
		return "", nil, false, err
	}
	id, err := t.r.entryID(idx)
	return id, nonNil(fp), true, err
}
