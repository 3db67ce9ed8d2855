package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"
)

// CopyReport is what CopyToPostgres copied and proved.
type CopyReport struct {
	Entries, Hashes, Checkpoints, Claims, Postings, Side int64
	// Source and Copy are the latest checkpoints of the file and of the
	// copy: the same size and root (the copy's proof).
	Source, Copy Checkpoint
}

// CopyToPostgres copies the bbolt ledger file at path into the PostgreSQL
// log at url, which must be empty (created here, or created and never
// appended to), and proves the copy. opts names the origin and the log key
// (Signer or Verifier) and the Keys the replicas will pin. In order: Check
// on the file (its every leaf, hash and checkpoint); one transaction that
// writes every entry (schema-1 entries become blobs with the same leaf),
// stored hash, checkpoint, claim, posting, side value, sequence and
// dictionary, and the head; then Check on the copy, and the copy's latest
// checkpoint must be the file's, byte for byte (same size, same root,
// same signature). The file is opened read-only: stop the server first.
func CopyToPostgres(ctx context.Context, path, url string, opts Options) (CopyReport, error) {
	var rep CopyReport
	v := opts.Verifier
	if v == nil && opts.Signer != nil {
		v = signerVerifier{opts.Signer}
	}
	if v == nil {
		return rep, fmt.Errorf("ledger: copy: the log key is needed (Options.Verifier or Signer): %w", ErrInvalid)
	}
	src, err := Open(path, Options{Origin: opts.Origin, Verifier: v})
	if errors.Is(err, ErrNeedsRecovery) && opts.Signer != nil {
		// A writer did not close the file: open it for writing once,
		// which replays its journal, then read it.
		var w *Ledger
		if w, err = Open(path, Options{Origin: opts.Origin, Signer: opts.Signer}); err == nil {
			err = w.Close()
		}
		if err == nil {
			src, err = Open(path, Options{Origin: opts.Origin, Verifier: v})
		}
	}
	if err != nil {
		return rep, err
	}
	defer src.Close()
	if err := src.Check(); err != nil {
		return rep, fmt.Errorf("ledger: copy: the file does not check: %w", err)
	}
	bs := src.store.(*boltStore)
	var genesis []byte
	if err := bs.db.View(func(tx *bolt.Tx) error {
		genesis = clone(tx.Bucket(bucketCheckpoints).Get(u64(0)))
		return nil
	}); err != nil || genesis == nil {
		return rep, fmt.Errorf("ledger: copy: the file has no checkpoint of size 0: %v", err)
	}
	logKey := fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())
	dst, _, err := openPGStore(ctx, pgOpen{
		url: url, origin: opts.Origin, logKey: logKey, keys: opts.Keys, write: true,
		genesis: func() (Checkpoint, error) { return parseStoredCheckpoint(genesis) },
	})
	if err != nil {
		return rep, err
	}
	defer dst.close()
	if err := dst.copyFrom(ctx, src, bs, genesis, &rep); err != nil {
		return rep, err
	}
	dst.close()
	// The proof: the copy checks, and ends at the file's checkpoint.
	cp, err := OpenPostgres(ctx, url, Options{Origin: opts.Origin, Verifier: v})
	if err != nil {
		return rep, fmt.Errorf("ledger: copy: the copy does not open: %w", err)
	}
	defer cp.Close()
	if err := cp.Check(); err != nil {
		return rep, fmt.Errorf("ledger: copy: the copy does not check: %w", err)
	}
	if rep.Source, err = src.Checkpoint(); err != nil {
		return rep, err
	}
	if rep.Copy, err = cp.Checkpoint(); err != nil {
		return rep, err
	}
	if string(rep.Source.Note) != string(rep.Copy.Note) {
		return rep, fmt.Errorf("ledger: copy: the copy ends at size %d root %s, the file at size %d root %s",
			rep.Copy.Size, rep.Copy.Root, rep.Source.Size, rep.Source.Root)
	}
	return rep, nil
}

// copyFrom writes the file's contents in one transaction.
func (s *pgStore) copyFrom(ctx context.Context, src *Ledger, bs *boltStore, genesis []byte, rep *CopyReport) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.unavailable("copy", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return s.unavailable("copy", err)
	}
	defer tx.Rollback(context.Background())
	var size int64
	var note []byte
	if err := tx.QueryRow(ctx, "SELECT size, checkpoint FROM log_head FOR UPDATE").Scan(&size, &note); err != nil {
		return s.unavailable("copy", err)
	}
	if size != 0 || string(note) != string(genesis) {
		return fmt.Errorf("ledger: copy: %s already holds a log (size %d, or another genesis checkpoint): %w", s.name, size, ErrInvalid)
	}
	// A server that started on the log appended nothing but wrote side
	// data (readiness, webhook configuration, its rate table), which the
	// file's would collide with: the log is not empty, and no retry makes
	// it so.
	var side, other int64
	var buckets string
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM side),
		(SELECT count(*) FROM sequences) + (SELECT count(*) FROM claims) + (SELECT count(*) FROM postings) + (SELECT count(*) FROM dicts),
		coalesce((SELECT string_agg(b, ', ' ORDER BY b) FROM (SELECT DISTINCT encode(bucket, 'escape') AS b FROM side) AS d), '')`).Scan(&side, &other, &buckets); err != nil {
		return s.unavailable("copy", err)
	}
	if side > 0 || other > 0 {
		return fmt.Errorf("ledger: copy: %s is not empty: a server started on it (%d side values in %s, %d other rows); the copy goes into a log no server has started on: stop the servers, drop the schema (what they stored there, webhook endpoints made through the API included, is lost) and copy again: %w",
			s.name, side, buckets, other, ErrInvalid)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM checkpoints"); err != nil {
		return s.unavailable("copy", err)
	}
	return bs.db.View(func(btx *bolt.Tx) error {
		b := func(name []byte) *bolt.Bucket { return btx.Bucket(name) }
		n, err := parseU64(b(bucketMeta).Get(metaSize))
		if err != nil {
			return err
		}
		r := boltReader{s: bs, tx: btx, n: n}
		copyRows := func(table string, cols []string, next func() ([]any, bool, error)) (int64, error) {
			return tx.CopyFrom(ctx, pgx.Identifier{table}, cols, &copySource{next: next})
		}
		// Entries, in index order; schema-1 entries as blobs of the same leaf.
		i := int64(0)
		if rep.Entries, err = copyRows("entries", []string{"idx", "id", "blob"}, func() ([]any, bool, error) {
			if i >= n {
				return nil, false, nil
			}
			e, err := r.entry(i)
			if err != nil {
				return nil, false, err
			}
			blob := e.blob
			if blob == nil {
				docs := map[string][]byte{}
				for _, d := range e.docs {
					docs[d.name] = d.doc
				}
				blob = src.codec.encode(e.leaf, docs).blob
			} else {
				blob = clone(blob)
			}
			row := []any{i, []byte(e.id), blob}
			i++
			return row, true, nil
		}); err != nil {
			return s.unavailable("copy entries", err)
		}
		cursorRows := func(bk *bolt.Bucket, row func(k, v []byte) []any) func() ([]any, bool, error) {
			c := bk.Cursor()
			k, v := c.First()
			return func() ([]any, bool, error) {
				if k == nil {
					return nil, false, nil
				}
				out := row(k, v)
				k, v = c.Next()
				return out, true, nil
			}
		}
		idx := func(k []byte) int64 { x, _ := parseU64(k); return x }
		if rep.Hashes, err = copyRows("hashes", []string{"idx", "hash"}, cursorRows(b(bucketHashes), func(k, v []byte) []any {
			return []any{idx(k), clone(v)}
		})); err != nil {
			return s.unavailable("copy hashes", err)
		}
		if rep.Checkpoints, err = copyRows("checkpoints", []string{"size", "note"}, cursorRows(b(bucketCheckpoints), func(k, v []byte) []any {
			return []any{idx(k), clone(v)}
		})); err != nil {
			return s.unavailable("copy checkpoints", err)
		}
		subRows := func(parent *bolt.Bucket, row func(sub, k, v []byte) ([]any, error)) func() ([]any, bool, error) {
			var rows [][]any
			var ferr error
			forEachSub(parent, "copy", func(sub, k, v []byte) error {
				r, err := row(sub, k, v)
				if err != nil {
					ferr = err
					return err
				}
				rows = append(rows, r)
				return nil
			})
			j := 0
			return func() ([]any, bool, error) {
				if ferr != nil {
					return nil, false, ferr
				}
				if j >= len(rows) {
					return nil, false, nil
				}
				j++
				return rows[j-1], true, nil
			}
		}
		// Claims: the legacy claims B-tree (below v3from), then the keys
		// records' (schema 3).
		legacyClaims := subRows(b(bucketClaims), func(sub, k, v []byte) ([]any, error) {
			at, fp, err := parseClaimValue(v)
			return []any{clone(sub), clone(k), at, nonNil(clone(fp))}, err
		})
		var kc *bolt.Cursor
		var pending [][]any
		if kb := b(bucketKeys); kb != nil {
			kc = kb.Cursor()
		}
		var kk, kv []byte
		claimRows := func() ([]any, bool, error) {
			if row, ok, err := legacyClaims(); ok || err != nil {
				return row, ok, err
			}
			for len(pending) == 0 && kc != nil {
				if kk == nil {
					kk, kv = kc.First()
				} else {
					kk, kv = kc.Next()
				}
				if kk == nil {
					kc = nil
					break
				}
				at, err := parseU64(kk)
				if err != nil {
					return nil, false, fmt.Errorf("ledger: copy: keys record key %x: %w", kk, err)
				}
				rec, err := parseKeysRecord(kv)
				if err != nil {
					return nil, false, fmt.Errorf("ledger: copy: keys record %d: %w", at, err)
				}
				rec.each(func(space, key, fp []byte) bool {
					pending = append(pending, []any{clone(space), clone(key), at, nonNil(clone(fp))})
					return true
				})
			}
			if len(pending) == 0 {
				return nil, false, nil
			}
			row := pending[0]
			pending = pending[1:]
			return row, true, nil
		}
		if rep.Claims, err = copyRows("claims", []string{"space", "key", "idx", "fingerprint"}, claimRows); err != nil {
			return s.unavailable("copy claims", err)
		}
		// Postings: the index buckets', then the posting log's (schema 4).
		indexed := subRows(b(bucketPostings), func(sub, k, v []byte) ([]any, error) {
			return []any{clone(sub), clone(k), clone(v)}, nil
		})
		// The source was opened (its log loaded and checked): its pending
		// postings are rows already parsed.
		pend, err := bs.pendingFor(btx)
		if err != nil {
			return err
		}
		var logged [][]any
		for _, name := range slices.Sorted(maps.Keys(pend.byIndex)) {
			for _, q := range pend.byIndex[name] {
				logged = append(logged, []any{[]byte(name), []byte(q.key), []byte(q.id)})
			}
		}
		if rep.Postings, err = copyRows("postings", []string{"ix", "key", "id"}, func() ([]any, bool, error) {
			if row, ok, err := indexed(); ok || err != nil || len(logged) == 0 {
				return row, ok, err
			}
			row := logged[0]
			logged = logged[1:]
			return row, true, nil
		}); err != nil {
			return s.unavailable("copy postings", err)
		}
		if rep.Side, err = copyRows("side", []string{"bucket", "key", "value"}, subRows(b(bucketSide), func(sub, k, v []byte) ([]any, error) {
			return []any{clone(sub), clone(k), nonNil(clone(v))}, nil
		})); err != nil {
			return s.unavailable("copy side data", err)
		}
		if seq := b(bucketSequences); seq != nil {
			if _, err = copyRows("sequences", []string{"name", "n"}, cursorRows(seq, func(k, v []byte) []any {
				return []any{clone(k), idx(v)}
			})); err != nil {
				return s.unavailable("copy sequences", err)
			}
		}
		dicts, err := loadDicts(btx)
		if err != nil {
			return err
		}
		var did uint32
		var dcut int64
		for id, d := range dicts {
			if _, err := tx.Exec(ctx, "INSERT INTO dicts (id, cut_at, content) VALUES ($1, $2, $3)", int64(id), d.cutAt, d.content); err != nil {
				return s.unavailable("copy dictionaries", err)
			}
			if id > did {
				did, dcut = id, d.cutAt
			}
		}
		fr, err := loadFrontier(n, hashReader{b(bucketHashes)})
		if err != nil {
			return err
		}
		latest := b(bucketCheckpoints).Get(u64(n))
		if latest == nil {
			return errors.New("ledger: copy: no checkpoint of the file's size")
		}
		if _, err := tx.Exec(ctx, "UPDATE log_head SET size = $1, frontier = $2, checkpoint = $3, dict_id = $4, dict_cut = $5",
			n, encodeFrontier(fr), clone(latest), int64(did), dcut); err != nil {
			return s.unavailable("copy", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return s.unavailable("copy", err)
		}
		return nil
	})
}

// copySource adapts a row function to pgx.CopyFromSource.
type copySource struct {
	next func() ([]any, bool, error)
	row  []any
	err  error
}

func (c *copySource) Next() bool {
	var ok bool
	c.row, ok, c.err = c.next()
	return ok && c.err == nil
}
func (c *copySource) Values() ([]any, error) { return c.row, nil }
func (c *copySource) Err() error             { return c.err }
