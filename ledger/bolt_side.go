package ledger

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// sideTx is the Tx over the side namespace of a bbolt transaction of the
// store s.
type sideTx struct {
	tx *bolt.Tx
	s  *boltStore
}

// ClaimHolder reads a claim as the transaction sees it: the store's
// in-memory index, then the keys records it does not hold yet, as
// boltStore.claimHolder does with a transaction of its own.
func (s sideTx) ClaimHolder(space, key string) (string, []byte, bool, error) {
	kr := newKeysReader(s.s, s.tx)
	_, fp, id, held, err := kr.claim(space, key, 1<<63-1)
	if !held || err != nil {
		return "", nil, false, err
	}
	return id, append(make([]byte, 0, len(fp)), fp...), true, nil
}

func (s sideTx) bucket(name string) *bolt.Bucket {
	if name == "" {
		return nil
	}
	return s.tx.Bucket(bucketSide).Bucket([]byte(name))
}

func (s sideTx) Get(bucket string, key []byte) []byte {
	defer storeGuard()
	b := s.bucket(bucket)
	if b == nil || len(key) == 0 {
		return nil
	}
	// A cursor, unlike Get, tells an empty value from a missing one.
	k, v := b.Cursor().Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return append([]byte{}, v...)
}

func (s sideTx) Put(bucket string, key, value []byte) error {
	defer storeGuard()
	if !s.tx.Writable() {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	if len(value) > maxValueSize {
		return fmt.Errorf("ledger: side %q: value of %d bytes: %w", bucket, len(value), ErrInvalid)
	}
	if value == nil {
		value = []byte{}
	}
	return sidePut(jbucket{Bucket: s.tx.Bucket(bucketSide)}, bucket, key, value, nil)
}

func (s sideTx) Delete(bucket string, key []byte) error {
	defer storeGuard()
	if !s.tx.Writable() {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	b := s.bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Delete(key)
}

func (s sideTx) Scan(bucket string, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) error {
	defer storeGuard()
	if b := s.bucket(bucket); b != nil {
		scanBucket(b, prefix, after, reverse, func(k, v []byte) bool {
			more, _ := callUser(func() (bool, error) { return fn(k, v), nil })
			return more
		})
	}
	return nil
}

// sidePut writes (value non-nil) or deletes (value nil) a side key, creating
// the bucket on a write; fills, when set, learns whether the commit only
// appends to the bucket.
func sidePut(side jbucket, bucket string, key, value []byte, fills fillTracker) error {
	if value == nil {
		if b, ok := side.child([]byte(bucket)); ok {
			return b.Delete(key)
		}
		return nil
	}
	b, err := side.createIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	if fills != nil {
		fills.put(b.Bucket, key)
	}
	return b.Put(key, value)
}

// scanBucket walks the keys of b that start with prefix, ascending or
// descending, strictly past after, until fn returns false. An empty after is
// no cursor. The buckets scanned hold no nested buckets.
func scanBucket(b *bolt.Bucket, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) {
	c := b.Cursor()
	var k, v []byte
	if !reverse {
		start := prefix
		if len(after) > 0 && bytes.Compare(after, prefix) >= 0 {
			start = after
		}
		k, v = c.Seek(start)
		if len(after) > 0 && bytes.Equal(k, after) {
			k, v = c.Next()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if !fn(k, v) {
				return
			}
		}
		return
	}
	// Descending: start at the largest key below the bound, which is the
	// smaller of after and the first key past the prefix range.
	bound := prefixEnd(prefix)
	if len(after) > 0 && (bound == nil || bytes.Compare(after, bound) < 0) {
		bound = after
	}
	if bound == nil {
		k, v = c.Last()
	} else if k, _ = c.Seek(bound); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if !fn(k, v) {
			return
		}
	}
}

// prefixEnd returns the smallest key greater than every key starting with
// prefix, or nil when there is none (empty prefix or all 0xff bytes).
func prefixEnd(prefix []byte) []byte {
	end := clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
