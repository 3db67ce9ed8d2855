package fiscal

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

// Every document the engine serves (a record, an invoice) is checked, as
// it is read, against what the entry's leaf commits to, and the leaf
// against the log: ledger.Entry verifies the leaf against its RFC 6962
// record hash; the leaf names the document's digest: the leaf is the
// document itself (an entry without a receipt), or the receipt signs the
// invoice's SHA-256 (1.0.0, 2.0.0), or commits to the record's and the
// invoice's SHA-256 (3.0.0 and 4.0.0, opened with the salts kept beside
// them). Bytes
// that do not match are never served: the answer is LEDGER_INTEGRITY (500),
// the damaged index is logged and counted (ledger.Stats). A document read
// by id (Engine.Document) must also name itself that id, and one an
// account's index lists (Books.Indexed: listings, the OSS return, refunds
// by date) must be that account's and of the index's kind: the way from a
// name to its entry (the heads side bucket, the ledger's keys records) and
// the indexes are not covered by the log as the bytes are, and a damaged
// one must not serve another genuine document under the name or to
// another account (logged; the ledger does not count it, having served
// what it was asked for). A record of an
// older receipt version has no digest in its leaf; it is served as the
// ledger's own checks (zstd checksums, Open's page walk) leave it.

// CodeLedgerIntegrity: stored bytes do not match the hash the log commits
// to; the data was altered or damaged. Restore the ledger from a backup.
const CodeLedgerIntegrity Code = "LEDGER_INTEGRITY"

// verifiedDoc reads the document name of entry entryID, checked against its
// leaf's digest where the leaf holds one.
func (e *Engine) verifiedDoc(entryID, name string) ([]byte, error) {
	ent, err := e.ledger.Entry(entryID)
	if err != nil {
		return nil, e.integrityError(err)
	}
	doc, ok := ent.Docs[name]
	if !ok {
		return nil, fmt.Errorf("fiscal: entry %s has no %s: %w", entryID, name, ledger.ErrNotFound)
	}
	sum, anchored, err := committedDigest(ent, name)
	if err != nil {
		e.cfg.Logger.Error("stored document fails its integrity check", "index", ent.Index, "entry", entryID, "doc", name, "err", err)
		return nil, &Error{Code: CodeLedgerIntegrity, Detail: "the stored data does not match what the log commits to; restore the ledger from a backup", Err: err}
	}
	if !anchored || sha256.Sum256(doc) == sum {
		return doc, nil
	}
	out, err := e.ledger.DocVerified(entryID, name, sum) // fails as doc did: counted, and named by index
	if err != nil {
		return nil, e.integrityError(err)
	}
	return out, nil
}

// misfiled is LEDGER_INTEGRITY for a genuine document found where another
// was asked for (what says how), logged.
func (e *Engine) misfiled(id, what string) *Error {
	e.cfg.Logger.Error("ledger integrity check failed", "id", id, "what", what)
	return &Error{Code: CodeLedgerIntegrity, Detail: "the stored data does not match what the log commits to; restore the ledger from a backup", Err: fmt.Errorf("%s: %s", id, what)}
}

// integrityError maps a ledger read error: a damaged leaf or document is
// LEDGER_INTEGRITY, logged with its index.
func (e *Engine) integrityError(err error) error {
	var ie *ledger.IntegrityError
	var ce *ledger.CorruptError
	switch {
	case errors.As(err, &ie):
		e.cfg.Logger.Error("ledger integrity check failed", "index", ie.Index, "what", ie.What)
		return &Error{Code: CodeLedgerIntegrity, Detail: fmt.Sprintf("the stored data of ledger index %d does not match its hash; restore the ledger from a backup", ie.Index), Err: err}
	case errors.As(err, &ce):
		e.cfg.Logger.Error("ledger file damaged", "index", ce.Index, "reason", ce.Reason)
		return &Error{Code: CodeLedgerIntegrity, Detail: "the ledger file is damaged; restore it from a backup", Err: err}
	}
	return err
}

// committedDigest is the SHA-256 the entry's leaf commits the document
// name to, and whether it commits to one at all.
func committedDigest(ent ledger.StoredEntry, name string) (sum [sha256.Size]byte, anchored bool, err error) {
	raw, isReceipt, err := receipt.LeafPayload(ent.Leaf) // a 4.0.0 leaf, or a JWS's payload
	if err != nil {
		return sum, false, err
	}
	if !isReceipt {
		// No receipt: the leaf is the document itself.
		if name == docRecord {
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
	field := map[string]string{docRecord: "/record_sha256", docUBL: "/invoice/ubl_sha256"}[name]
	if spec, _ := jsontop.String(top[0]); !receipt.ConcealedSpec(spec) {
		if inv, err := jsontop.Strings(top[1], "ubl_sha256"); name == docUBL && err == nil && inv[0] != "" {
			return hexDigest(inv[0])
		}
		return sum, false, nil
	}
	if _, ok := commitments[field]; field == "" || !ok {
		return sum, false, nil
	}
	openings, err := receipt.ParseOpenings(ent.Docs[docOpenings])
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

// checkDocuments is the part of the full check (Config.LedgerFullCheck)
// above the ledger: every document a leaf anchors by its digest (the
// record and invoice of a 3.0.0 receipt, the invoice of 1.0.0 and 2.0.0,
// the record of an entry without a receipt) matches it. ledger.Check
// verifies the leaves and the tree but does not know which documents a
// leaf commits to. A mismatch is a *ledger.CorruptError naming the index.
func (e *Engine) checkDocuments(path string) error {
	n := e.ledger.Size()
	for i := int64(0); i < n; i++ {
		ent, err := e.ledger.EntryAt(i)
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
			sum, anchored, err := committedDigest(ent, name)
			if err != nil {
				return &ledger.CorruptError{Path: path, Index: i, Reason: fmt.Sprintf("the leaf's payload does not parse: %v", err), Err: err}
			}
			if !anchored {
				continue
			}
			if _, err := e.ledger.DocVerified(ent.ID, name, sum); err != nil {
				return &ledger.CorruptError{Path: path, Index: i, Reason: fmt.Sprintf("document %q does not match the digest its leaf commits to", name), Err: err}
			}
		}
	}
	return nil
}
