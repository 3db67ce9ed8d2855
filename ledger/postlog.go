package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// Postings written behind (schema 4).
//
// A posting's key sorts by what it indexes (an account, then a time or an
// index), not by when it was written. A commit of ~30 entries of one
// account adds ~30 keys to one leaf page of each posting index; of 30
// accounts, it dirties 30 leaf pages of each, and bbolt reads, rewrites
// and writes every one of them (issue 22: a facilitator's books at 50
// accounts wrote 3.4 pages per record against 1.3 for one account, and
// its committer spent 30-50 µs per record against 16-26).
//
// So a posting whose key follows every key of its bucket is put there at
// once (it lands on the bucket's last page, which the commit dirties
// anyway), and the others are appended to the posting log, a bucket keyed
// by entry index ‖ ordinal: keys that only grow, so the commit dirties one
// or two of its pages whatever the accounts. Either way the posting is
// durable with the commit, as before. When the log would hold flushAt
// postings, the commit moves all of them, sorted, into their index
// buckets and empties the log: each index page is then dirtied once for
// many postings.
//
// The log's postings are also held in memory, sorted per index name
// (pendingPostings), and every reader merges them with the index buckets:
// a lookup, a scan, the committer's duplicate check, Check and the copy to
// PostgreSQL. A read transaction finds the in-memory set of its own
// committed state by its log's last key (pendingFor). The last key names
// the log's content: log keys grow with the entry index, a move empties
// the log (and every empty log has the same, empty, content), and the only
// set published for a state never committed, a failed commit's, is taken
// back before the committer plans again, so no committed log can end with
// its key. When no set matches (a read that began two commits ago), the
// reader decodes the log from its own transaction, which is the truth
// either way.

// postLogFlush is how many postings the posting log holds before a commit
// moves them into their index buckets. At 64 callers over 50 accounts a
// commit logs ~60 postings, so the log is moved about every 16 commits;
// the in-memory set stays under ~150 KB.
const postLogFlush = 1024

// pendingPostings is the posting log of one committed state, sorted per
// index name. It is immutable once published.
type pendingPostings struct {
	last    string                      // the log's last key; "" when the log is empty
	byIndex map[string][]pendingPosting // sorted by key
	n       int
	// prev is the state before, kept one commit so that a read that began
	// before a commit finds its own; cleared when the next state is
	// published.
	prev atomic.Pointer[pendingPostings]
}

type pendingPosting struct{ key, id string }

// previous returns the set published before p (nil if none, or p is nil).
func (p *pendingPostings) previous() *pendingPostings {
	if p == nil {
		return nil
	}
	return p.prev.Load()
}

// get returns the pending posting of index and key.
func (p *pendingPostings) get(index string, key []byte) (string, bool) {
	if p == nil {
		return "", false
	}
	l := p.byIndex[index]
	i := sort.Search(len(l), func(i int) bool { return l[i].key >= string(key) })
	if i < len(l) && l[i].key == string(key) {
		return l[i].id, true
	}
	return "", false
}

// appendPostLogKey appends a posting log key: the entry's index and the
// posting's ordinal among the entry's postings.
func appendPostLogKey(b []byte, at int64, ord int) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(b, uint64(at)), uint32(ord))
}

func postLogValueSize(p postingWrite) int {
	return uvarintLen(len(p.index)) + len(p.index) + uvarintLen(len(p.key)) + len(p.key) + len(p.id)
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// appendPostLogValue appends a posting log value: the index name and the
// key, each behind its length as a uvarint, then the entry ID.
func appendPostLogValue(v []byte, p postingWrite) []byte {
	v = binary.AppendUvarint(v, uint64(len(p.index)))
	v = append(v, p.index...)
	v = binary.AppendUvarint(v, uint64(len(p.key)))
	v = append(v, p.key...)
	return append(v, p.id...)
}

// parsePostLog parses a posting log record; the slices point into k and v.
func parsePostLog(k, v []byte) (at int64, index, key, id []byte, err error) {
	if len(k) != 12 {
		return 0, nil, nil, nil, fmt.Errorf("posting log key %x: want 12 bytes", k)
	}
	at = int64(binary.BigEndian.Uint64(k))
	if at < 0 {
		return 0, nil, nil, nil, fmt.Errorf("posting log key %x: index out of range", k)
	}
	rest := v
	field := func() ([]byte, bool) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return nil, false
		}
		f := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		return f, true
	}
	var ok1, ok2 bool
	index, ok1 = field()
	key, ok2 = field()
	if !ok1 || !ok2 || len(index) == 0 || len(key) == 0 || len(rest) == 0 {
		return 0, nil, nil, nil, fmt.Errorf("posting log record %x does not parse", k)
	}
	return at, index, key, rest, nil
}

// loadPending decodes a posting log (nil: none, as in a schema-3 file).
func loadPending(b *bolt.Bucket) (*pendingPostings, error) {
	if b == nil {
		return &pendingPostings{}, nil
	}
	p := &pendingPostings{byIndex: map[string][]pendingPosting{}}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		_, index, key, id, err := parsePostLog(k, v)
		if err != nil {
			return nil, err
		}
		p.byIndex[string(index)] = append(p.byIndex[string(index)], pendingPosting{string(key), string(id)})
		p.n++
		p.last = string(k)
	}
	for name, l := range p.byIndex {
		slices.SortFunc(l, func(a, b pendingPosting) int { return strings.Compare(a.key, b.key) })
		for i := 1; i < len(l); i++ {
			if l[i].key == l[i-1].key {
				return nil, fmt.Errorf("posting log: posting %q %q given twice", name, l[i].key)
			}
		}
	}
	return p, nil
}

// pendingFor returns the pending postings of a read transaction: the
// published set whose log ends where the transaction's does, or else the
// transaction's own log, decoded.
func (s *boltStore) pendingFor(tx *bolt.Tx) (*pendingPostings, error) {
	b := tx.Bucket(bucketPostLog)
	if b == nil {
		return &pendingPostings{}, nil
	}
	last, _ := b.Cursor().Last()
	cur := s.pend.Load()
	for _, p := range []*pendingPostings{cur, cur.previous()} {
		if p != nil && p.last == string(last) {
			return p, nil
		}
	}
	return loadPending(b)
}

// writePostings puts a batch's postings. A posting whose key follows
// every key of its index bucket (one account's, or the last account's) is
// put there at once: it lands on the bucket's last page, which the commit
// dirties anyway. The others go behind, into the posting log, or, when the
// log would reach flushAt, with the log's into the index buckets. It
// returns the pending postings after the commit.
func (s *boltStore) writePostings(tx *bolt.Tx, base *pendingPostings, ps []postingWrite, a *arena) (*pendingPostings, error) {
	if len(ps) == 0 {
		return base, nil
	}
	postings := subBuckets{parent: tx.Bucket(bucketPostings)}
	fills := fillTracker{}
	defer fills.apply()
	var behind []postingWrite
	for _, p := range ps {
		bk, err := postings.get(p.index)
		if err != nil {
			return nil, err
		}
		if !fills.follows(bk, p.key) {
			behind = append(behind, p)
			continue
		}
		fills.put(bk, p.key)
		if err := bk.Put(p.key, a.str(p.id)); err != nil {
			return nil, err
		}
	}
	if len(behind) == 0 {
		return base, nil
	}
	if base.n+len(behind) >= s.flushAt {
		// A new empty set, never a shared one: publishing links it to the
		// set before (prev), which must stay this store's.
		return &pendingPostings{}, movePostings(tx, &postings, fills, base, behind, a)
	}
	log := tx.Bucket(bucketPostLog)
	log.FillPercent = 1.0 // keys only grow
	next := &pendingPostings{byIndex: maps.Clone(base.byIndex), n: base.n + len(behind)}
	if next.byIndex == nil {
		next.byIndex = map[string][]pendingPosting{}
	}
	added := map[string][]pendingPosting{}
	var k []byte
	ord, at := 0, int64(-1)
	for _, p := range behind {
		if p.at != at {
			ord, at = 0, p.at
		}
		k = a.cut(12, func(b []byte) []byte { return appendPostLogKey(b, p.at, ord) })
		ord++
		v := a.cut(postLogValueSize(p), func(b []byte) []byte { return appendPostLogValue(b, p) })
		if err := log.Put(k, v); err != nil {
			return nil, err
		}
		added[p.index] = append(added[p.index], pendingPosting{string(p.key), p.id})
	}
	next.last = string(k)
	for name, l := range added {
		slices.SortFunc(l, func(a, b pendingPosting) int { return strings.Compare(a.key, b.key) })
		next.byIndex[name] = mergePending(base.byIndex[name], l)
	}
	return next, nil
}

// mergePending merges two sorted lists. When every key of b follows a's
// (one account's postings: log indexes, times), b is appended, in place
// when a's array has room: a's snapshot reads only a[:len(a)], and no
// other snapshot extends a (the committer builds each on the one before;
// a failed commit's, taken back, is read by nobody).
func mergePending(a, b []pendingPosting) []pendingPosting {
	if len(a) == 0 || len(b) == 0 || a[len(a)-1].key < b[0].key {
		if cap(a)-len(a) >= len(b) {
			return append(a, b...)
		}
		return append(append(make([]pendingPosting, 0, 2*(len(a)+len(b))), a...), b...)
	}
	out := make([]pendingPosting, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].key < b[0].key {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// movePostings puts the log's postings and a batch's into the index
// buckets, each index's in key order, and empties the log.
func movePostings(tx *bolt.Tx, postings *subBuckets, fills fillTracker, base *pendingPostings, ps []postingWrite, a *arena) error {
	all := map[string][]pendingPosting{}
	for _, p := range ps {
		all[p.index] = append(all[p.index], pendingPosting{string(p.key), p.id})
	}
	for name, l := range all {
		slices.SortFunc(l, func(a, b pendingPosting) int { return strings.Compare(a.key, b.key) })
		all[name] = mergePending(base.byIndex[name], l)
	}
	for name, l := range base.byIndex {
		if all[name] == nil {
			all[name] = l
		}
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		bk, err := postings.get(name)
		if err != nil {
			return err
		}
		for _, p := range all[name] {
			key := a.str(p.key)
			fills.put(bk, key)
			if err := bk.Put(key, a.str(p.id)); err != nil {
				return err
			}
		}
	}
	if base.n > 0 {
		if err := tx.DeleteBucket(bucketPostLog); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketPostLog); err != nil {
			return err
		}
	}
	return nil
}

// publishPending makes next the pending postings of the committed state
// (before the commit: a read that begins after it finds next by its log's
// last key, one that began before finds the state before) and returns the
// function that takes it back if the commit fails.
func (s *boltStore) publishPending(next *pendingPostings) (undo func()) {
	old := s.pend.Load()
	if next == old {
		return func() {}
	}
	next.prev.Store(old)
	if old != nil {
		old.prev.Store(nil)
	}
	s.pend.Store(next)
	return func() { s.pend.Store(old) }
}

// scanPending runs fn over the postings of index in a scan's range (see
// scanBucket), merged in order with those of the index bucket b (nil: no
// bucket yet).
func scanPending(b *bolt.Bucket, p *pendingPostings, index string, prefix, after []byte, reverse bool, fn func(k []byte, id string) bool) {
	l := p.byIndex[index]
	// The pending postings in the range, in scan order.
	in := func(k string) bool {
		if !strings.HasPrefix(k, string(prefix)) {
			return false
		}
		if len(after) == 0 {
			return true
		}
		if reverse {
			return k < string(after)
		}
		return k > string(after)
	}
	lo := sort.Search(len(l), func(i int) bool { return l[i].key >= string(prefix) })
	hi := lo
	for hi < len(l) && strings.HasPrefix(l[hi].key, string(prefix)) {
		hi++
	}
	var mine []pendingPosting
	for _, q := range l[lo:hi] {
		if in(q.key) {
			mine = append(mine, q)
		}
	}
	if reverse {
		slices.Reverse(mine)
	}
	before := func(x, y []byte) bool { // x comes before y in scan order
		if reverse {
			return bytes.Compare(x, y) > 0
		}
		return bytes.Compare(x, y) < 0
	}
	stopped := false
	if b != nil {
		scanBucket(b, prefix, after, reverse, func(k, v []byte) bool {
			for len(mine) > 0 && before([]byte(mine[0].key), k) {
				if !fn([]byte(mine[0].key), mine[0].id) {
					stopped = true
					return false
				}
				mine = mine[1:]
			}
			if !fn(k, string(v)) {
				stopped = true
				return false
			}
			return true
		})
	}
	for _, q := range mine {
		if stopped || !fn([]byte(q.key), q.id) {
			return
		}
	}
}
