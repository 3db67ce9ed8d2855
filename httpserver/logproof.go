package fiscal

import (
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/ledger"
)

// Checkpoint returns the latest signed checkpoint of the Merkle log: a C2SP
// tlog-checkpoint signed note (origin, tree size, base64 root hash).
func (e *Engine) Checkpoint() ([]byte, error) {
	cp, err := e.ledger.Checkpoint()
	if err != nil {
		return nil, storeError(err)
	}
	return cp.Note, nil
}

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

// InclusionProof proves that leaf index is in the tree of size leaves;
// size 0 means the current size.
func (e *Engine) InclusionProof(index, size int64) (*InclusionProof, error) {
	if size == 0 {
		size = e.ledger.Size()
	}
	if index < 0 || size < 1 || index >= size || size > e.ledger.Size() {
		return nil, &Error{Code: CodeBadRequest, Field: "index", Detail: fmt.Sprintf("need 0 <= index < size <= %d", e.ledger.Size())}
	}
	p, err := e.ledger.InclusionProof(index, size)
	if err != nil {
		return nil, proofError(err)
	}
	root, err := e.ledger.TreeHash(size)
	if err != nil {
		return nil, proofError(err)
	}
	return &InclusionProof{Index: index, Size: size, Root: root, Hashes: p}, nil
}

// ConsistencyProof proves that the tree of to leaves extends the tree of
// from leaves; to 0 means the current size.
func (e *Engine) ConsistencyProof(from, to int64) (*ConsistencyProof, error) {
	if to == 0 {
		to = e.ledger.Size()
	}
	if from < 1 || from > to || to > e.ledger.Size() {
		return nil, &Error{Code: CodeBadRequest, Field: "from", Detail: fmt.Sprintf("need 1 <= from <= to <= %d", e.ledger.Size())}
	}
	p, err := e.ledger.ConsistencyProof(from, to)
	if err != nil {
		return nil, proofError(err)
	}
	fromRoot, err := e.ledger.TreeHash(from)
	if err != nil {
		return nil, proofError(err)
	}
	toRoot, err := e.ledger.TreeHash(to)
	if err != nil {
		return nil, proofError(err)
	}
	return &ConsistencyProof{From: from, To: to, FromRoot: fromRoot, ToRoot: toRoot, Hashes: p}, nil
}

func proofError(err error) error {
	if errors.Is(err, ledger.ErrInvalid) {
		return &Error{Code: CodeBadRequest, Detail: err.Error(), Err: err}
	}
	return storeError(err)
}
