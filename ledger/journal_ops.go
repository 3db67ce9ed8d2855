package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// opLog records the bucket operations of a journaled commit, in the order
// made, as the payload of its journal record (journal.go). Replaying them on
// the state before the commit makes the same state: the writes of a commit
// depend only on that state and the batch.
//
// An operation is its code (1 byte), the bucket path (uvarint count, then
// each name as uvarint length and bytes), then, for a put, the key and the
// value and, for a delete, the key, each as uvarint length and bytes.
//
// A nil *opLog records nothing (a store without a journal).
type opLog struct {
	b []byte
}

const (
	opPut          = 1
	opDelete       = 2
	opCreateBucket = 3 // if it does not exist
	opDeleteBucket = 4
)

// newOpLog starts a record with room for the journal record's header.
func newOpLog(buf []byte) *opLog {
	return &opLog{b: append(buf[:0], make([]byte, journalHeaderSize)...)}
}

// bucketPath is an encoded bucket path.
type bucketPath []byte

func rootPath() bucketPath { return bucketPath{0} }

// child is the path of the bucket name inside p.
func (p bucketPath) child(name []byte) bucketPath {
	out := make([]byte, 0, len(p)+len(name)+2)
	out = binary.AppendUvarint(out, uint64(p.depth()+1))
	out = append(out, p[uvarintLen(p):]...)
	out = binary.AppendUvarint(out, uint64(len(name)))
	return append(out, name...)
}

func (p bucketPath) depth() int { n, _ := binary.Uvarint(p); return int(n) }

func uvarintLen(b []byte) int { _, n := binary.Uvarint(b); return n }

func (l *opLog) op(code byte, p bucketPath, kv ...[]byte) {
	if l == nil {
		return
	}
	l.b = append(l.b, code)
	l.b = append(l.b, p...)
	for _, x := range kv {
		l.b = binary.AppendUvarint(l.b, uint64(len(x)))
		l.b = append(l.b, x...)
	}
}

// jbucket is a bucket whose writes are recorded in an opLog.
type jbucket struct {
	*bolt.Bucket
	path bucketPath
	log  *opLog
}

func (b jbucket) Put(k, v []byte) error {
	if err := b.Bucket.Put(k, v); err != nil {
		return err
	}
	b.log.op(opPut, b.path, k, v)
	return nil
}

func (b jbucket) Delete(k []byte) error {
	if err := b.Bucket.Delete(k); err != nil {
		return err
	}
	b.log.op(opDelete, b.path, k)
	return nil
}

// child is the nested bucket name (nil: none).
func (b jbucket) child(name []byte) (jbucket, bool) {
	c := b.Bucket.Bucket(name)
	if c == nil {
		return jbucket{}, false
	}
	return jbucket{c, b.pathOf(name), b.log}, true
}

func (b jbucket) pathOf(name []byte) bucketPath {
	if b.log == nil {
		return nil
	}
	return b.path.child(name)
}

func (b jbucket) createIfNotExists(name []byte) (jbucket, error) {
	c, err := b.Bucket.CreateBucketIfNotExists(name)
	if err != nil {
		return jbucket{}, err
	}
	p := b.pathOf(name)
	b.log.op(opCreateBucket, p)
	return jbucket{c, p, b.log}, nil
}

// jtx is a write transaction whose top-level changes are recorded.
type jtx struct {
	*bolt.Tx
	log *opLog
}

func (t jtx) bucket(name []byte) jbucket {
	var p bucketPath
	if t.log != nil {
		p = rootPath().child(name)
	}
	return jbucket{t.Tx.Bucket(name), p, t.log}
}

func (t jtx) deleteBucket(name []byte) error {
	if err := t.Tx.DeleteBucket(name); err != nil {
		return err
	}
	if t.log != nil {
		t.log.op(opDeleteBucket, rootPath().child(name))
	}
	return nil
}

func (t jtx) createBucket(name []byte) error {
	if _, err := t.Tx.CreateBucket(name); err != nil {
		return err
	}
	if t.log != nil {
		t.log.op(opCreateBucket, rootPath().child(name))
	}
	return nil
}

// replayOps applies the operations of a journal batch to tx.
func replayOps(tx *bolt.Tx, b []byte) error {
	bad := func(what string) error { return fmt.Errorf("journal batch: %s", what) }
	var name func() ([]byte, bool)
	name = func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, false
		}
		x := b[k : k+int(n)]
		b = b[k+int(n):]
		return x, true
	}
	for len(b) > 0 {
		code := b[0]
		b = b[1:]
		depth, k := binary.Uvarint(b)
		if k <= 0 || depth > 8 {
			return bad("a bucket path")
		}
		b = b[k:]
		var parent *bolt.Bucket
		var last []byte
		for i := uint64(0); i < depth; i++ {
			n, ok := name()
			if !ok {
				return bad("a bucket name")
			}
			if i == depth-1 && (code == opCreateBucket || code == opDeleteBucket) {
				last = n
				break
			}
			var next *bolt.Bucket
			if parent == nil {
				next = tx.Bucket(n)
			} else {
				next = parent.Bucket(n)
			}
			if next == nil {
				return bad(fmt.Sprintf("bucket %q does not exist", n))
			}
			parent = next
		}
		switch code {
		case opPut, opDelete:
			if parent == nil {
				return bad("a key outside any bucket")
			}
			key, ok := name()
			if !ok {
				return bad("a key")
			}
			if code == opDelete {
				if err := parent.Delete(key); err != nil {
					return err
				}
				continue
			}
			v, ok := name()
			if !ok {
				return bad("a value")
			}
			if err := parent.Put(key, v); err != nil {
				return err
			}
		case opCreateBucket:
			var err error
			if parent == nil {
				_, err = tx.CreateBucketIfNotExists(last)
			} else {
				_, err = parent.CreateBucketIfNotExists(last)
			}
			if err != nil {
				return err
			}
		case opDeleteBucket:
			var err error
			if parent == nil {
				err = tx.DeleteBucket(last)
			} else {
				err = parent.DeleteBucket(last)
			}
			if err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
				return err
			}
		default:
			return bad(fmt.Sprintf("operation %d", code))
		}
	}
	return nil
}
