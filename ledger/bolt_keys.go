package ledger

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// buildIDIndex fills the in-memory index of IDs and claims at Open: the
// legacy ids and claims B-trees (the entries below v3from of an upgraded
// file) and then the keys records in index order, which must be there for
// every index from v3from to the size (Open refuses the file otherwise).
// A legacy key that names an index at or beyond v3from is not indexed
// (Check reports it).
func (s *boltStore) buildIDIndex(tx *bolt.Tx, size int64) error {
	x := newIDIndex(int(min(2*size, 1<<30)))
	if s.v3from > 0 {
		c := tx.Bucket(bucketIDs).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			at, err := parseU64(v)
			if err != nil {
				return &CheckError{Index: -1, What: fmt.Sprintf("ids index: entry %q: %v", k, err)}
			}
			if at < s.v3from {
				if err := x.load(keyRef{x.hashIDBytes(k), at}); err != nil {
					return err
				}
			}
		}
		err := forEachSub(tx.Bucket(bucketClaims), "claims", func(space, key, v []byte) error {
			at, _, err := parseClaimValue(v)
			if err != nil {
				return &CheckError{Index: -1, What: fmt.Sprintf("claim %q %q: %v", space, key, err)}
			}
			if at < s.v3from {
				return x.load(keyRef{x.hashClaimBytes(space, key), at})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if keys := tx.Bucket(bucketKeys); keys != nil {
		c := keys.Cursor()
		next := s.v3from
		k, v := c.First()
		// A record below v3from (an upgraded file's legacy entries have
		// none) is named as Check names it, not taken for a missing one.
		if at, err := parseU64(k); k != nil && err == nil && at < next {
			return &CheckError{Index: at, What: fmt.Sprintf(keysBelowV3From, k, next)}
		}
		for ; k != nil && next < size; k, v = c.Next() {
			if at, err := parseU64(k); err != nil || at != next {
				return &CheckError{Index: next, What: fmt.Sprintf("keys record %d is missing (next stored key %x)", next, k)}
			}
			rec, err := parseKeysRecord(v)
			if err != nil {
				return &CheckError{Index: next, What: fmt.Sprintf("keys record %d: %v", next, err)}
			}
			if err := x.load(keyRef{x.hashIDBytes(rec.id), next}); err != nil {
				return err
			}
			rec.each(func(space, key, _ []byte) bool {
				err = x.load(keyRef{x.hashClaimBytes(space, key), next})
				return err == nil
			})
			if err != nil {
				return err
			}
			next++
		}
		if next < size {
			return &CheckError{Index: next, What: fmt.Sprintf("keys record %d is missing", next)}
		}
	}
	x.finish()
	x.pending = nil
	x.upTo = size
	s.keys = x
	return nil
}

// keysReader reads keys records and the legacy B-trees of one transaction.
type keysReader struct {
	s    *boltStore
	tx   *bolt.Tx
	keys *bolt.Bucket // nil: a schema-1 or schema-2 file opened read-only
	k    [8]byte
}

func newKeysReader(s *boltStore, tx *bolt.Tx) keysReader {
	return keysReader{s: s, tx: tx, keys: tx.Bucket(bucketKeys)}
}

// record returns the keys record of index at (ok false when the snapshot
// has none: at is beyond it).
func (r *keysReader) record(at int64) (keysRecord, bool, error) {
	if r.keys == nil || at < r.s.v3from {
		return keysRecord{}, false, nil
	}
	binary.BigEndian.PutUint64(r.k[:], uint64(at))
	v := r.keys.Get(r.k[:])
	if v == nil {
		return keysRecord{}, false, nil
	}
	rec, err := parseKeysRecord(v)
	if err != nil {
		return rec, false, &CorruptError{Path: r.s.path, Index: at, Reason: fmt.Sprintf("keys record %d: %v", at, err)}
	}
	return rec, true, nil
}

// legacyID looks an ID up in the ids B-tree (entries below v3from).
func (r *keysReader) legacyID(id string) (int64, bool, error) {
	if r.s.v3from == 0 {
		return 0, false, nil
	}
	v := r.tx.Bucket(bucketIDs).Get([]byte(id))
	if v == nil {
		return 0, false, nil
	}
	at, err := parseU64(v)
	if err != nil {
		return 0, false, &CorruptError{Path: r.s.path, Index: -1, Reason: fmt.Sprintf("ids index: entry %q: %v", id, err)}
	}
	return at, at < r.s.v3from, nil
}

// legacyClaim looks a claim up in the claims B-tree (entries below v3from).
func (r *keysReader) legacyClaim(space, key string) (int64, []byte, bool, error) {
	if r.s.v3from == 0 {
		return 0, nil, false, nil
	}
	b := r.tx.Bucket(bucketClaims).Bucket([]byte(space))
	if b == nil {
		return 0, nil, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return 0, nil, false, nil
	}
	at, fp, err := parseClaimValue(v)
	if err != nil {
		return 0, nil, false, &CorruptError{Path: r.s.path, Index: -1, Reason: fmt.Sprintf("claim %q %q: %v", space, key, err)}
	}
	return at, fp, at < r.s.v3from, nil
}

// find looks a key up: the in-memory index (each hit confirmed by confirm),
// then the keys records the index does not hold yet (committed after its
// last update, up to the end of the snapshot or n). Without an index
// (Check) the legacy B-tree is asked by legacy and every keys record is
// read.
func (r *keysReader) find(hash uint64, n int64, legacy func() (int64, bool, error), confirm func(at int64, rec keysRecord) bool) (int64, bool, error) {
	var found int64
	upTo := r.s.v3from
	if x := r.s.keys; x != nil {
		var ok bool
		var err error
		upTo, ok, err = x.find(hash, n, func(at int64) (bool, error) {
			if at < r.s.v3from {
				got, ok, err := legacy()
				found = got
				return ok && got == at, err
			}
			rec, ok, err := r.record(at)
			if !ok || err != nil {
				return false, err
			}
			found = at
			return confirm(at, rec), nil
		})
		if ok || err != nil {
			return found, ok, err
		}
	} else if at, ok, err := legacy(); ok || err != nil {
		return at, ok && at < n, err
	}
	for at := max(upTo, r.s.v3from); at < n; at++ {
		rec, ok, err := r.record(at)
		if !ok || err != nil {
			return 0, false, err
		}
		if confirm(at, rec) {
			return at, true, nil
		}
	}
	return 0, false, nil
}

// id looks an entry ID up in a snapshot of size n.
func (r *keysReader) id(id string, n int64) (int64, bool, error) {
	if id == "" {
		return 0, false, nil
	}
	var hash uint64
	if x := r.s.keys; x != nil {
		hash = x.hashID(id)
	}
	return r.find(hash, n, func() (int64, bool, error) { return r.legacyID(id) },
		func(_ int64, rec keysRecord) bool { return string(rec.id) == id })
}

// claim looks a claim up in a snapshot of size n: its holder's index,
// fingerprint (pointing into the transaction) and ID.
func (r *keysReader) claim(space, key string, n int64) (index int64, fp []byte, id string, held bool, err error) {
	if space == "" || key == "" {
		return 0, nil, "", false, nil
	}
	var hash uint64
	if x := r.s.keys; x != nil {
		hash = x.hashClaim(space, key)
	}
	index, held, err = r.find(hash, n, func() (int64, bool, error) {
		at, f, ok, err := r.legacyClaim(space, key)
		fp = f
		return at, ok, err
	}, func(_ int64, rec keysRecord) bool {
		f, ok := rec.claim(space, key)
		if ok {
			fp, id = f, string(rec.id)
		}
		return ok
	})
	if !held || err != nil {
		return 0, nil, "", false, err
	}
	if index < r.s.v3from {
		id = string(r.tx.Bucket(bucketEntries).Get(u64(index)))
	}
	return index, fp, id, true, nil
}

// entryID returns the ID of entry index.
func (r *keysReader) entryID(index int64) (string, error) {
	if index < r.s.v3from {
		return string(r.tx.Bucket(bucketEntries).Get(u64(index))), nil
	}
	rec, _, err := r.record(index)
	return string(rec.id), err
}
