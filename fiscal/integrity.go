package fiscal

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/fiscal402/fiscal402/internal/anchor"
	"github.com/fiscal402/fiscal402/ledger"
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
	sum, anchored, err := anchor.Digest(ent, name)
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
