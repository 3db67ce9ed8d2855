package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"
)

// pgCheckChunk is how many leaves the check reads per round trip.
const pgCheckChunk = 2048

// check walks the whole log in one REPEATABLE READ snapshot, in chunks of
// leaves (their entries, the stored hashes they complete and the
// checkpoints between them, one pipelined round trip per chunk), feeding
// the logChecker; then what lies beyond the size, the head row against
// the walk, claims and postings. The ids index of bbolt is the entries
// table's unique id column here: an ID maps back to its row by
// construction.
func (s *pgStore) check(c *logChecker) error {
	ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.unavailable("check", err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.unavailable("check", err)
	}
	defer tx.Rollback(context.Background())
	failAt := func(err error) error {
		c.pending = append(c.pending, checkEvent{err: err})
		return c.finish()
	}
	// Meta: origin, then the head.
	var origin string
	if err := tx.QueryRow(ctx, "SELECT value FROM ledger_meta WHERE name = 'origin'").Scan(&origin); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fail(-1, "ledger_meta has no origin")
		}
		return s.unavailable("check", err)
	}
	if origin != c.key.Name() {
		return fail(-1, "meta origin %q is not the log key's name %q", origin, c.key.Name())
	}
	if c.origin != "" && origin != c.origin {
		return fail(-1, "meta origin %q is not the ledger's origin %q", origin, c.origin)
	}
	var size, did, dcut int64
	var fr, headNote []byte
	if err := tx.QueryRow(ctx, pgHeadSQL).Scan(&size, &fr, &headNote, &did, &dcut); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fail(-1, "log_head has no row")
		}
		return s.unavailable("check", err)
	}
	c.size = size
	// Dictionaries: every one must load (another replica may have cut some
	// after this ledger opened).
	rows, err := tx.Query(ctx, "SELECT id FROM dicts ORDER BY id")
	if err != nil {
		return s.unavailable("check", err)
	}
	var dictIDs []int64
	var id int64
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { dictIDs = append(dictIDs, id); return nil }); err != nil {
		return s.unavailable("check", err)
	}
	for _, id := range dictIDs {
		if c.l.codec.load != nil {
			if err := c.l.codec.ensure(uint32(id)); err != nil {
				return fail(-1, "dictionary %d: %v", id, err)
			}
		}
	}
	// The entries, hashes and checkpoints, chunk by chunk.
	for a := int64(0); a < size; a += pgCheckChunk {
		b := min(a+pgCheckChunk, size)
		h0, h1 := tlog.StoredHashIndex(0, a), tlog.StoredHashIndex(0, b)
		batch := &pgx.Batch{}
		batch.Queue("SELECT idx, id, blob FROM entries WHERE idx >= $1 AND idx < $2 ORDER BY idx", a, b)
		batch.Queue("SELECT idx, hash FROM hashes WHERE idx >= $1 AND idx < $2 ORDER BY idx", h0, h1)
		batch.Queue("SELECT size, note FROM checkpoints WHERE size >= $1 AND size < $2 ORDER BY size", a, b)
		br := tx.SendBatch(ctx, batch)
		type ent struct {
			idx      int64
			id, blob []byte
		}
		type hv struct {
			idx int64
			h   []byte
		}
		type cpv struct {
			size int64
			note []byte
		}
		var ents []ent
		var hs []hv
		var cps []cpv
		var e ent
		var h hv
		var cp cpv
		r1, _ := br.Query()
		_, err := pgx.ForEachRow(r1, []any{&e.idx, &e.id, &e.blob}, func() error { ents = append(ents, e); return nil })
		if err == nil {
			r2, _ := br.Query()
			_, err = pgx.ForEachRow(r2, []any{&h.idx, &h.h}, func() error { hs = append(hs, h); return nil })
		}
		if err == nil {
			r3, _ := br.Query()
			_, err = pgx.ForEachRow(r3, []any{&cp.size, &cp.note}, func() error { cps = append(cps, cp); return nil })
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return s.unavailable("check", err)
		}
		ei, hi, ci := 0, 0, 0
		for i := a; i < b; i++ {
			for ; ci < len(cps) && cps[ci].size <= i; ci++ {
				if err := c.checkpoint(cps[ci].size, cps[ci].note); err != nil {
					return err
				}
			}
			ev := checkEvent{index: i}
			switch {
			case ei >= len(ents) || ents[ei].idx != i:
				if ei < len(ents) {
					return failAt(fail(i, "leaf %d is missing (next stored leaf is %d)", i, ents[ei].idx))
				}
				return failAt(fail(i, "leaf %d is missing (log size %d)", i, size))
			case len(ents[ei].blob) == 0:
				return failAt(fail(i, "leaf %d is empty", i))
			}
			ev.entry.blob, ev.id = ents[ei].blob, ents[ei].id
			ev.idBack = u64(i) // the id column of the same row
			ei++
			base := tlog.StoredHashIndex(0, i)
			n := 1
			for i>>(n-1)&1 == 1 {
				n++
			}
			ev.stored = make([]tlog.Hash, 0, n)
			for j := range n {
				want := base + int64(j)
				if hi >= len(hs) || hs[hi].idx != want {
					ev.missed = "no such row"
					break
				}
				if len(hs[hi].h) != tlog.HashSize {
					ev.missed = fmt.Sprintf("it has %d bytes", len(hs[hi].h))
					break
				}
				ev.stored = append(ev.stored, tlog.Hash(hs[hi].h))
				hi++
			}
			if err := c.leaf(ev); err != nil {
				return err
			}
		}
	}
	// Rows beyond the size.
	var beyond *int64
	if err := tx.QueryRow(ctx, "SELECT min(idx) FROM entries WHERE idx >= $1", size).Scan(&beyond); err != nil {
		return s.unavailable("check", err)
	}
	if beyond != nil {
		return failAt(fail(*beyond, "entry %d beyond the log size %d", *beyond, size))
	}
	if err := tx.QueryRow(ctx, "SELECT min(idx) FROM hashes WHERE idx >= $1", tlog.StoredHashCount(size)).Scan(&beyond); err != nil {
		return s.unavailable("check", err)
	}
	if beyond != nil {
		return failAt(fail(-1, "stored hash %d beyond the %d hashes of a tree of size %d", *beyond, tlog.StoredHashCount(size), size))
	}
	rows, err = tx.Query(ctx, "SELECT size, note FROM checkpoints WHERE size >= $1 ORDER BY size", size)
	if err != nil {
		return s.unavailable("check", err)
	}
	var cpSize int64
	var note []byte
	var cpErr error
	if _, err := pgx.ForEachRow(rows, []any{&cpSize, &note}, func() error {
		if cpErr == nil {
			cpErr = c.checkpoint(cpSize, clone(note))
		}
		return nil
	}); err != nil {
		return s.unavailable("check", err)
	}
	if cpErr != nil {
		return cpErr
	}
	if err := c.finish(); err != nil {
		return err
	}
	// The head row: its checkpoint is the stored one of its size, its
	// right edge the walk's.
	var stored []byte
	err = tx.QueryRow(ctx, "SELECT note FROM checkpoints WHERE size = $1", size).Scan(&stored)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s.unavailable("check", err)
	}
	if err != nil || string(stored) != string(headNote) {
		return fail(size, "log_head's checkpoint is not the stored checkpoint of size %d", size)
	}
	if f, err := decodeFrontier(size, fr); err != nil || f != c.fr {
		return fail(size, "log_head's right edge is not the one of the stored leaves")
	}
	// Claims within the log, postings naming entries.
	var space, key []byte
	var at int64
	err = tx.QueryRow(ctx, "SELECT space, key, idx FROM claims WHERE idx >= $1 OR idx < 0 LIMIT 1", size).Scan(&space, &key, &at)
	switch {
	case err == nil:
		return fail(at, "claim %q %q points at index %d, beyond the log size %d", space, key, at, size)
	case !errors.Is(err, pgx.ErrNoRows):
		return s.unavailable("check", err)
	}
	var pid []byte
	err = tx.QueryRow(ctx, `SELECT p.ix, p.key, p.id FROM postings p WHERE NOT EXISTS
		(SELECT 1 FROM entries e WHERE e.id = p.id) LIMIT 1`).Scan(&space, &key, &pid)
	switch {
	case err == nil:
		return fail(-1, "posting %q %q names entry %q, which does not exist", space, key, pid)
	case !errors.Is(err, pgx.ErrNoRows):
		return s.unavailable("check", err)
	}
	return nil
}
