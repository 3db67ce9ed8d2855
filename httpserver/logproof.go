package httpserver

import (
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// InclusionProof is an RFC 6962 audit path: the hashes that lead from the
// leaf at Index to the root of the tree of Size leaves.
type InclusionProof struct {
	Index  int64       `json:"index"`
	Size   int64       `json:"size"`
	Root   tlog.Hash   `json:"root"`   // base64 (tlog.Hash marshals as text)
	Hashes []tlog.Hash `json:"hashes"` // leaf sibling first (RFC 6962 §2.1.1 order)
}

// ConsistencyProof proves that the tree of To leaves extends the tree of
// From leaves (RFC 6962 §2.1.2): the log only grew.
type ConsistencyProof struct {
	From     int64       `json:"from"`
	To       int64       `json:"to"`
	FromRoot tlog.Hash   `json:"fromRoot"`
	ToRoot   tlog.Hash   `json:"toRoot"`
	Hashes   []tlog.Hash `json:"hashes"`
}

// inclusionProof proves that leaf index is in the tree of size leaves;
// size 0 means the current size (the handler passes 0 only for an absent
// parameter; an explicit 0 is refused there).
func inclusionProof(l *ledger.Ledger, index, size int64) (*InclusionProof, error) {
	if size == 0 {
		size = l.Size()
	}
	if index < 0 || size < 1 || index >= size || size > l.Size() {
		field := "index"
		if size > l.Size() { // the offending parameter is the size
			field = "size"
		}
		return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf("need 0 <= index < size <= %d", l.Size())}
	}
	p, err := l.InclusionProof(index, size)
	if err != nil {
		return nil, proofError(err)
	}
	root, err := l.TreeHash(size)
	if err != nil {
		return nil, proofError(err)
	}
	return &InclusionProof{Index: index, Size: size, Root: root, Hashes: p}, nil
}

// consistencyProof proves that the tree of to leaves extends the tree of
// from leaves; to 0 means the current size (only for an absent parameter,
// as for inclusionProof).
func consistencyProof(l *ledger.Ledger, from, to int64) (*ConsistencyProof, error) {
	if to == 0 {
		to = l.Size()
	}
	if from < 1 || from > to || to > l.Size() {
		field := "from"
		if to > l.Size() { // the offending parameter is to
			field = "to"
		}
		return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf("need 1 <= from <= to <= %d", l.Size())}
	}
	p, err := l.ConsistencyProof(from, to)
	if err != nil {
		return nil, proofError(err)
	}
	fromRoot, err := l.TreeHash(from)
	if err != nil {
		return nil, proofError(err)
	}
	toRoot, err := l.TreeHash(to)
	if err != nil {
		return nil, proofError(err)
	}
	return &ConsistencyProof{From: from, To: to, FromRoot: fromRoot, ToRoot: toRoot, Hashes: p}, nil
}

func proofError(err error) error {
	if errors.Is(err, ledger.ErrInvalid) {
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Detail: err.Error(), Err: err}
	}
	return fiscal.StoreError(err)
}
