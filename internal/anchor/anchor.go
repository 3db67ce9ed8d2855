package anchor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fiscal402/fiscal402/internal/jsontop"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// Names of the documents the engine stores with a ledger entry.
const (
	DocRecord   = "record"
	DocUBL      = "ubl"
	DocOpenings = "openings"
)

// Digest is the SHA-256 the entry's leaf commits its document name to,
// and whether it commits to one at all. An error means the leaf's payload
// or the openings do not parse or do not open.
func Digest(ent ledger.StoredEntry, name string) (sum [sha256.Size]byte, anchored bool, err error) {
	raw, isReceipt, err := receipt.LeafPayload(ent.Leaf) // a 4.0.0 leaf, or a JWS's payload
	if err != nil {
		return sum, false, err
	}
	if !isReceipt {
		// No receipt: the leaf is the document itself.
		if name == DocRecord {
			return sha256.Sum256(ent.Leaf), true, nil
		}
		return sum, false, nil
	}
	// The three members it needs, not the whole payload (jsontop): this
	// runs for every document served or listed.
	top, err := jsontop.Raw(raw, "spec", "invoice", "commitments")
	var commitments map[string]string
	if err == nil && top[2] != nil {
		err = json.Unmarshal(top[2], &commitments)
	}
	if err != nil {
		return sum, false, fmt.Errorf("leaf payload: %w", err)
	}
	field := map[string]string{DocRecord: "/record_sha256", DocUBL: "/invoice/ubl_sha256"}[name]
	if spec, _ := jsontop.String(top[0]); !receipt.ConcealedSpec(spec) {
		if inv, err := jsontop.Strings(top[1], "ubl_sha256"); name == DocUBL && err == nil && inv[0] != "" {
			return hexDigest(inv[0])
		}
		return sum, false, nil
	}
	if _, ok := commitments[field]; field == "" || !ok {
		return sum, false, nil
	}
	openings, err := receipt.ParseOpenings(ent.Docs[DocOpenings])
	if err != nil {
		return sum, false, fmt.Errorf("openings: %w", err)
	}
	for _, o := range openings {
		if o.Field != field {
			continue
		}
		if err := receipt.VerifyOpening(&receipt.Claims{Commitments: commitments}, o); err != nil {
			return sum, false, err
		}
		return hexDigest(o.Value)
	}
	return sum, false, fmt.Errorf("no opening of %s", field)
}

func hexDigest(s string) (sum [sha256.Size]byte, anchored bool, err error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != sha256.Size {
		return sum, false, fmt.Errorf("digest %q is not a SHA-256", s)
	}
	copy(sum[:], b)
	return sum, true, nil
}

// CheckDocuments is the part of the full check (fiscal's
// Config.LedgerFullCheck) above the ledger l, the file at path: every document a leaf anchors by its digest (the
// record and invoice of a 3.0.0 receipt, the invoice of 1.0.0 and 2.0.0,
// the record of an entry without a receipt) matches it. ledger.Check
// verifies the leaves and the tree but does not know which documents a
// leaf commits to. A mismatch is a *ledger.CorruptError naming the index.
func CheckDocuments(l *ledger.Ledger, path string) error {
	n := l.Size()
	for i := int64(0); i < n; i++ {
		ent, err := l.EntryAt(i)
		if err != nil {
			var ce *ledger.CorruptError
			if errors.As(err, &ce) {
				return err
			}
			return &ledger.CorruptError{Path: path, Index: i, Reason: "entry unreadable: " + err.Error(), Err: err}
		}
		names := make([]string, 0, len(ent.Docs))
		for name := range ent.Docs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			sum, anchored, err := Digest(ent, name)
			if err != nil {
				return &ledger.CorruptError{Path: path, Index: i, Reason: fmt.Sprintf("the leaf's payload does not parse: %v", err), Err: err}
			}
			if !anchored {
				continue
			}
			if _, err := l.DocVerified(ent.ID, name, sum); err != nil {
				return &ledger.CorruptError{Path: path, Index: i, Reason: fmt.Sprintf("document %q does not match the digest its leaf commits to", name), Err: err}
			}
		}
	}
	return nil
}
