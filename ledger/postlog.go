package ledger

import (
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

// get returns the pending posting of index and key.
func (p *pendingPostings) get(index string, key []byte) (string, bool) {
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

// postLogValueSize bounds the size of a posting log value (uvarints
// counted at their longest, as keysRecordSize does).
func postLogValueSize(p postingWrite) int {
	return 2*binary.MaxVarintLen64 + len(p.index) + len(p.key) + len(p.id)
}

// appendPostLogValue appends a posting log value: the index name and the
// key as parts (codec.go: uvarint length, bytes), then the entry ID.
func appendPostLogValue(v []byte, p postingWrite) []byte {
	return append(appendPart(appendPart(v, []byte(p.index)), p.key), p.id...)
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
	index, rest, ok1 := cutPart(v)
	key, id, ok2 := cutPart(rest)
	if !ok1 || !ok2 || len(index) == 0 || len(key) == 0 || len(id) == 0 {
		return 0, nil, nil, nil, fmt.Errorf("posting log record %x does not parse", k)
	}
	return at, index, key, id, nil
}

// sortPending sorts a list of pending postings by key.
func sortPending(l []pendingPosting) {
	slices.SortFunc(l, func(a, b pendingPosting) int { return strings.Compare(a.key, b.key) })
}

// groupPending groups postings by index name, each group sorted by key.
func groupPending(ps []postingWrite) map[string][]pendingPosting {
	g := map[string][]pendingPosting{}
	for _, p := range ps {
		g[p.index] = append(g[p.index], pendingPosting{string(p.key), p.id})
	}
	for _, l := range g {
		sortPending(l)
	}
	return g
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
		sortPending(l)
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
// transaction's own log, decoded (a *CorruptError if it does not parse).
func (s *boltStore) pendingFor(tx *bolt.Tx) (*pendingPostings, error) {
	b := tx.Bucket(bucketPostLog)
	if b != nil {
		last, _ := b.Cursor().Last()
		cur := s.pend.Load()
		for _, p := range []*pendingPostings{cur, cur.prev.Load()} {
			if p != nil && p.last == string(last) {
				return p, nil
			}
		}
	}
	p, err := loadPending(b)
	if err != nil {
		return nil, &CorruptError{Path: s.path, Index: -1, Reason: err.Error()}
	}
	return p, nil
}

// writePostings puts a batch's postings. A posting whose key follows
// every key of its index bucket (one account's, or the last account's) is
// put there at once: it lands on the bucket's last page, which the commit
// dirties anyway. The others go behind, into the posting log, or, when the
// log would reach flushAt, with the log's into the index buckets. It
// returns the pending postings after the commit.
func (s *boltStore) writePostings(tx jtx, base *pendingPostings, ps []postingWrite, a *arena) (*pendingPostings, error) {
	if len(ps) == 0 {
		return base, nil
	}
	postings := subBuckets{parent: tx.bucket(bucketPostings)}
	fills := fillTracker{}
	defer fills.apply()
	var behind []postingWrite
	for _, p := range ps {
		bk, err := postings.get(p.index)
		if err != nil {
			return nil, err
		}
		if !fills.follows(bk.Bucket, p.key) {
			behind = append(behind, p)
			continue
		}
		fills.put(bk.Bucket, p.key)
		if err := bk.Put(p.key, a.str(p.id)); err != nil {
			return nil, err
		}
	}
	if len(behind) == 0 {
		return base, nil
	}
	merged := maps.Clone(base.byIndex)
	if merged == nil {
		merged = map[string][]pendingPosting{}
	}
	for name, l := range groupPending(behind) {
		merged[name] = mergePending(base.byIndex[name], l)
	}
	if base.n+len(behind) >= s.flushAt {
		// A new empty set, never a shared one: publishing links it to the
		// set before (prev), which must stay this store's.
		return &pendingPostings{}, movePostings(tx, &postings, fills, merged, base.n > 0, a)
	}
	log := tx.bucket(bucketPostLog)
	log.FillPercent = 1.0 // keys only grow
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
	}
	return &pendingPostings{byIndex: merged, n: base.n + len(behind), last: string(k)}, nil
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

// movePostings puts all pending postings (the log's and a batch's, sorted
// per index) into the index buckets and, if the file's log holds any,
// empties it.
func movePostings(tx jtx, postings *subBuckets, fills fillTracker, all map[string][]pendingPosting, logged bool, a *arena) error {
	for _, name := range slices.Sorted(maps.Keys(all)) {
		bk, err := postings.get(name)
		if err != nil {
			return err
		}
		for _, p := range all[name] {
			key := a.str(p.key)
			fills.put(bk.Bucket, key)
			if err := bk.Put(key, a.str(p.id)); err != nil {
				return err
			}
		}
	}
	if !logged {
		return nil
	}
	if err := tx.deleteBucket(bucketPostLog); err != nil {
		return err
	}
	return tx.createBucket(bucketPostLog)
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
	old.prev.Store(nil)
	s.pend.Store(next)
	return func() { s.pend.Store(old) }
}

// scanPending runs fn over the postings of index in a scan's range (see
// scanBucket), merged in order with those of the index bucket b (nil: no
// bucket yet).
func scanPending(b *bolt.Bucket, p *pendingPostings, index string, prefix, after []byte, reverse bool, fn func(k []byte, id string) bool) {
	// The pending postings in the range (see scanBucket), in scan order.
	l := p.byIndex[index]
	lo := sort.Search(len(l), func(i int) bool { return l[i].key >= string(prefix) })
	hi := lo
	for hi < len(l) && strings.HasPrefix(l[hi].key, string(prefix)) {
		hi++
	}
	var mine []pendingPosting
	for _, q := range l[lo:hi] {
		if len(after) == 0 || !reverse && q.key > string(after) || reverse && q.key < string(after) {
			mine = append(mine, q)
		}
	}
	if reverse {
		slices.Reverse(mine)
	}
	// first reports whether the next pending posting comes before k.
	first := func(k []byte) bool {
		if reverse {
			return mine[0].key > string(k)
		}
		return mine[0].key < string(k)
	}
	stopped := false
	if b != nil {
		scanBucket(b, prefix, after, reverse, func(k, v []byte) bool {
			for len(mine) > 0 && first(k) {
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
