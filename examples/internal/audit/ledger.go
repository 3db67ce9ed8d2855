package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// Checks of "audit ledger", in the order they run.
const (
	checkFile          = "file"                 // the ledger's own check (ledger.Check) of the copy
	checkCheckpointSig = "checkpoint-signature" // every checkpoint is signed by the log key
	checkCheckpoint    = "checkpoint-root"      // every checkpoint's root is that of the leaves before it
	checkLeaf          = "leaf"                 // a leaf is a receipt (JWS or 4.0.0 payload), or the entry's record
	checkReceiptID     = "receipt-id"           // a receipt leaf carries its own entry's receipt id
	checkDuplicate     = "duplicate-receipt"    // no two leaves carry one receipt id
	checkReceipt       = "receipt"              // a receipt leaf verifies as its receipt (with --jwks)
	checkRecord        = "record"               // the stored record matches its leaf
	checkInvoice       = "invoice"              // the stored invoice matches the SHA-256 the receipt signs
)

var ledgerWords = map[string]string{
	checkFile:          "the file must pass the ledger's own consistency check",
	checkCheckpointSig: "every checkpoint must be signed by the log key",
	checkCheckpoint:    "every checkpoint must sign the root of the leaves before it",
	checkLeaf:          "every leaf must be a receipt (a JWS or a 4.0.0 payload) or its entry's record",
	checkReceiptID:     "a receipt leaf must carry its own entry's receipt id (rcpt_ + entry id)",
	checkDuplicate:     "no two leaves may carry the same receipt id",
	checkReceipt:       "every receipt leaf must verify as a receipt",
	checkRecord:        "the stored record must match its signed leaf",
	checkInvoice:       "the stored invoice must match the SHA-256 its receipt signs",
}

// Names of the documents the engine stores with each entry (fiscal:
// docRecord, docUBL).
const (
	docRecord   = "record"
	docUBL      = "ubl"
	docOpenings = "openings"
)

// ledgerFailure is the first failed check of a ledger audit.
type ledgerFailure struct {
	check string
	index int64  // -1: the file as a whole
	entry string // the entry id, when known
	msg   string
	// unreadable: the copy could not be opened or checked at all (no
	// verdict on its contents; exit ExitUnreadable).
	unreadable bool
	// badKeySet: the --jwks key set's entry for a receipt's key cannot be
	// used (no verdict on the ledger: the key set is not one; ExitUsage).
	badKeySet bool
}

func runLedger(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit ledger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lk logKeyFlags
	lk.register(fs)
	jwksPath := fs.String("jwks", "", "the receipt key set: verify every receipt leaf as a receipt (signature, claims, inclusion); without it signatures are not checked")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audit ledger FILE (--log-key KEY | --log-key-file FILE) [--jwks FILE]")
		fmt.Fprintln(stderr, "\nChecks a ledger file fully, on a copy it opens read-only: the ledger's own consistency check, then entry by")
		fmt.Fprintln(stderr, "entry every leaf against the checkpoints (each signature, each root recomputed here), every receipt leaf")
		fmt.Fprintln(stderr, "(with --jwks, as a receipt) against its stored record and invoice, and no receipt id on two leaves.")
		fmt.Fprintln(stderr, "Copy a running service's file from a backup or with the service stopped: a copy taken mid-write is torn.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return ExitUsage
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "audit ledger: %v\n", err)
		return inputExit(err)
	}
	key, err := lk.value(nil, "")
	if err != nil {
		return usageErr(err)
	}
	if key == "" {
		return usageErr(fmt.Errorf("give --log-key KEY or --log-key-file FILE: the log's note verifier key, published at GET %s", receipt.PathLogKey))
	}
	verifier, err := note.NewVerifier(key)
	if err != nil {
		return usageErr(fmt.Errorf("%q is not a log verifier key (%v): it has the form origin+hash+base64; copy it from GET %s", key, err, receipt.PathLogKey))
	}
	var rv *receipt.Verifier
	if *jwksPath != "" {
		jwks, err := readFile(*jwksPath)
		if err != nil {
			return usageErr(err)
		}
		if rv, err = receipt.NewVerifier(jwks, key); err != nil {
			return usageErr(fmt.Errorf("%s: %v", *jwksPath, err))
		}
	}
	// The copy is of the file alone: a file whose journal holds commits
	// not yet in it (its server crashed, or still runs) is not whole, and
	// ledger.Check refuses it for that; so does this command, rather than
	// verify what the file happens to hold.
	if needs, err := ledger.NeedsRecovery(pos[0]); err == nil && needs {
		return usageErr(unreadable(fmt.Errorf("%s was not closed and its journal (%s.journal0, %s.journal1) holds commits not yet in it: audit it once its server has replayed them (started once, or stopped cleanly; with the server stopped, \"server check -data DIR -recover\" does it), or audit a backup (GET /v1/admin/backup)", pos[0], pos[0], pos[0])))
	}
	tmp, err := os.MkdirTemp("", "audit-ledger-")
	if err != nil {
		return usageErr(unreadable(fmt.Errorf("a directory for the copy of %s: %w", pos[0], err)))
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, "ledger.db")
	if err := copyFile(pos[0], cp); err != nil {
		return usageErr(unreadable(err))
	}

	a := &ledgerAudit{path: cp, verifier: verifier, receipts: rv, progress: isTerminal(stderr), stderr: stderr}
	fail := a.run()
	a.clearProgress()
	if fail != nil && fail.unreadable {
		// Not a verdict on the ledger: this copy could not be opened.
		return usageErr(unreadable(fmt.Errorf("%s could not be checked: %s", pos[0], fail.msg)))
	}
	if fail != nil && fail.badKeySet {
		// Nor when the key set given is not one (as when it does not
		// parse): its entry for a receipt's key is unusable.
		return usageErr(fmt.Errorf("--jwks %s: %s", *jwksPath, fail.msg))
	}
	if fail != nil {
		where := ""
		if fail.index >= 0 {
			where = fmt.Sprintf(" at ledger index %d", fail.index)
			if fail.entry != "" {
				where += " (entry " + fail.entry + ")"
			}
		}
		fmt.Fprintf(stdout, "LEDGER NOT VERIFIED: check %q failed%s: %s\n", fail.check, where, ledgerWords[fail.check])
		fmt.Fprintf(stdout, "  What  %s\n", wrap(fail.msg, 90, "        "))
		if fail.check != checkFile {
			fmt.Fprintf(stdout, "  Entries checked before the failure: %d of %d\n", a.checked, a.size)
		}
		return ExitFailed
	}
	a.summary(stdout, pos[0], *jwksPath)
	return ExitOK
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", from)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}

// ledgerAudit walks a ledger copy entry by entry. Its memory is bounded:
// one entry at a time, the O(log n) subtree hashes of the running root, and
// the next checkpoint; duplicate receipt ids are found through the
// ledger's own id index, not a table of every id seen.
type ledgerAudit struct {
	path     string
	verifier note.Verifier
	receipts *receipt.Verifier // nil: receipt signatures are not checked
	progress bool
	stderr   io.Writer
	lastDraw time.Time

	size, checked   int64
	receiptLeaves   int64
	documentLeaves  int64
	checkpoints     int64
	invoices        int64
	committedRecord int64 // 3.0.0 and 4.0.0 receipts whose record hash is committed and not opened here: checked field by field
	openedRecord    int64 // 3.0.0 and 4.0.0 receipts whose record hash the entry's openings open: checked byte for byte
	latest          ledger.Checkpoint
	stack           []subtree // the running RFC 6962 root: complete subtrees, largest first
}

type subtree struct {
	hash tlog.Hash
	size int64
}

func (a *ledgerAudit) run() *ledgerFailure {
	if a.progress {
		fmt.Fprint(a.stderr, "checking the file structure (ledger.Check)…")
	}
	if err := ledger.Check(a.path, a.verifier); err != nil {
		var ce *ledger.CheckError
		if errors.As(err, &ce) {
			return &ledgerFailure{check: checkFile, index: -1, msg: sentence(ce.What) +
				" The file was altered or damaged after the ledger wrote it (or the log key is not this log's). Compare it with a backup; do not rely on its entries until the difference is explained."}
		}
		return &ledgerFailure{check: checkFile, index: -1, msg: sentence(strings.TrimPrefix(err.Error(), "ledger: ")), unreadable: true}
	}
	l, err := ledger.Open(a.path, ledger.Options{Origin: a.verifier.Name(), Verifier: a.verifier})
	if err != nil {
		return &ledgerFailure{check: checkFile, index: -1, msg: sentence(strings.TrimPrefix(err.Error(), "ledger: ")), unreadable: true}
	}
	defer l.Close()
	a.size = l.Size()

	next, err := l.CheckpointAt(0)
	if errors.Is(err, ledger.ErrNotFound) {
		next, err = l.CoveringCheckpoint(0)
	}
	if err != nil {
		return &ledgerFailure{check: checkCheckpointSig, index: -1, msg: "the file holds no checkpoint: " + err.Error()}
	}
	have := true
	for i := int64(0); ; i++ {
		// Every checkpoint of the tree of i leaves is checked once the
		// running root covers exactly those leaves.
		for have && next.Size == i {
			if f := a.checkpoint(next); f != nil {
				return f
			}
			next, err = l.CoveringCheckpoint(next.Size)
			if errors.Is(err, ledger.ErrNotFound) {
				have = false
			} else if err != nil {
				return &ledgerFailure{check: checkFile, index: i, msg: sentence(err.Error())}
			}
		}
		if i == a.size {
			break
		}
		if have && next.Size < i {
			return &ledgerFailure{check: checkCheckpoint, index: -1, msg: fmt.Sprintf("a checkpoint of %d entries was met after %d leaves", next.Size, i)}
		}
		e, err := l.EntryAt(i)
		if err != nil {
			return &ledgerFailure{check: checkFile, index: i, msg: sentence(err.Error())}
		}
		a.push(tlog.RecordHash(e.Leaf))
		if f := a.entry(l, e); f != nil {
			return f
		}
		a.checked++
		a.drawProgress()
	}
	if have {
		return &ledgerFailure{check: checkCheckpoint, index: -1, msg: fmt.Sprintf("a checkpoint of %d entries is stored, but the log has %d", next.Size, a.size)}
	}
	return nil
}

// push adds a leaf hash to the running root (RFC 6962 §2.1: equal-sized
// complete subtrees merge as SHA-256(0x01 ‖ left ‖ right)).
func (a *ledgerAudit) push(h tlog.Hash) {
	a.stack = append(a.stack, subtree{h, 1})
	for n := len(a.stack); n >= 2 && a.stack[n-2].size == a.stack[n-1].size; n = len(a.stack) {
		a.stack[n-2] = subtree{tlog.NodeHash(a.stack[n-2].hash, a.stack[n-1].hash), 2 * a.stack[n-1].size}
		a.stack = a.stack[:n-1]
	}
}

// root is the RFC 6962 root of the leaves pushed so far: the complete
// subtrees combined from the right (MTH of §2.1 with k the largest power
// of two below n).
func (a *ledgerAudit) root() tlog.Hash {
	if len(a.stack) == 0 {
		h, _ := tlog.TreeHash(0, nil)
		return h
	}
	h := a.stack[len(a.stack)-1].hash
	for j := len(a.stack) - 2; j >= 0; j-- {
		h = tlog.NodeHash(a.stack[j].hash, h)
	}
	return h
}

func (a *ledgerAudit) checkpoint(stored ledger.Checkpoint) *ledgerFailure {
	cp, err := ledger.ParseCheckpoint(stored.Note, a.verifier)
	if err != nil {
		return &ledgerFailure{check: checkCheckpointSig, index: -1, msg: fmt.Sprintf("the checkpoint stored for %d entries is not signed by the log key %s+%08x: %s. It was altered after signing, or the key is not this log's.",
			stored.Size, a.verifier.Name(), a.verifier.KeyHash(), strings.TrimPrefix(err.Error(), "ledger: "))}
	}
	if cp.Size != stored.Size {
		return &ledgerFailure{check: checkCheckpoint, index: -1, msg: fmt.Sprintf("the checkpoint stored for %d entries signs %d entries", stored.Size, cp.Size)}
	}
	if root := a.root(); cp.Root != root {
		return &ledgerFailure{check: checkCheckpoint, index: cp.Size - 1, msg: fmt.Sprintf("the checkpoint of %d entries signs root %s, but the first %d leaves of the file give root %s: a leaf up to index %d was altered after the checkpoint was signed, or the checkpoint is of another history (a fork).",
			cp.Size, cp.Root, cp.Size, root, cp.Size-1)}
	}
	a.checkpoints++
	a.latest = cp
	return nil
}

// entry checks one entry's leaf, receipt, record and invoice.
func (a *ledgerAudit) entry(l *ledger.Ledger, e ledger.StoredEntry) *ledgerFailure {
	fail := func(check, format string, args ...any) *ledgerFailure {
		return &ledgerFailure{check: check, index: e.Index, entry: e.ID, msg: fmt.Sprintf(format, args...)}
	}
	record, hasRecord := e.Docs[docRecord]
	if len(e.Leaf) > 0 && e.Leaf[0] == '{' && !receipt.IsLeafV4(e.Leaf) {
		// An entry without a receipt: its leaf is its record document
		// (fiscal.Engine.Commit), which must be stored unchanged.
		a.documentLeaves++
		if !hasRecord || !bytes.Equal(record, e.Leaf) {
			return fail(checkRecord, "the leaf is a document (an entry without a receipt), and the stored record differs from it: the record was changed after the leaf was logged. The leaf is what the log committed to.")
		}
		return nil
	}
	id, err := receipt.LeafReceiptID(e.Leaf)
	if err != nil {
		return fail(checkLeaf, "the leaf is neither a receipt (a JWS or a 4.0.0 payload) nor a JSON document: %s.", strings.TrimPrefix(err.Error(), "receipt: "))
	}
	a.receiptLeaves++
	if own := "rcpt_" + e.ID; id != own {
		other, err := l.Entry(strings.TrimPrefix(id, "rcpt_"))
		if err == nil && other.Index != e.Index {
			return fail(checkDuplicate, "the leaf carries receipt %s, which the entry at index %d (entry %s) carries too: one receipt is logged twice, at indexes %d and %d. Each copy has a valid inclusion proof, so the log holds two leaves for one receipt: count it once, and ask the operator why the log key appended it again (receipt/doc.go, \"Version 3.0.0\").",
				id, other.Index, other.ID, other.Index, e.Index)
		}
		return fail(checkReceiptID, "the leaf carries receipt %s, but its entry is %s, whose receipt would be %s: the receipt is not where the service serves it from (GET /v1/receipts/%s reads entry %s).",
			id, e.ID, own, id, strings.TrimPrefix(id, "rcpt_"))
	}
	var c receipt.Claims
	if a.receipts != nil {
		doc, err := a.receiptDoc(l, e)
		if err != nil {
			return fail(checkReceipt, "%s", sentence(err.Error()))
		}
		claims, err := a.receipts.Verify(doc)
		if err != nil {
			var ve *receipt.VerifyError
			if errors.As(err, &ve) && ve.Step == receipt.StepJWKS {
				return &ledgerFailure{check: checkReceipt, index: e.Index, entry: e.ID, badKeySet: true, msg: sentence(ve.Err.Error())}
			}
			if errors.As(err, &ve) {
				return fail(checkReceipt, "receipt %s fails step %q (%s): %s", id, ve.Step, checkWords[ve.Step], sentence(ve.Err.Error()))
			}
			return fail(checkReceipt, "receipt %s: %v", id, err)
		}
		c = *claims
	} else if err := decodeLeafClaims(e.Leaf, &c); err != nil {
		return fail(checkLeaf, "the receipt's payload cannot be read: %v.", err)
	}
	if receipt.ConcealedSpec(c.Spec) {
		c.Log.Index = e.Index // 3.0.0 and 4.0.0 sign no index: the leaf's position is it
	} else if c.Log.Index != e.Index {
		// 1.0.0 and 2.0.0 sign their index (Verify, with --jwks, checks it
		// against the proof; without, it is checked here).
		return fail(checkLeaf, "the receipt signs ledger index %d, but its leaf is at index %d: it was signed for another position.", c.Log.Index, e.Index)
	}
	if !hasRecord {
		return fail(checkRecord, "the entry has no stored record document (%q).", docRecord)
	}
	if msg := recordMismatch(record, &c); msg != "" {
		return fail(checkRecord, "%s: the record was changed after the receipt was signed, or it belongs to another entry. The receipt is what the service signed; the record it serves for this entry no longer matches it.", msg)
	}
	ubl, hasUBL := e.Docs[docUBL]
	if receipt.ConcealedSpec(c.Spec) {
		// 3.0.0 and 4.0.0 conceal the digests of the stored record and invoice as
		// salted commitments; the entry keeps their openings (fiscal
		// DocOpenings), so whoever holds the file checks the exact bytes.
		opened, err := openedDigests(e.Docs[docOpenings], &c)
		if err != nil {
			return fail(checkRecord, "the entry's openings do not open its receipt's commitments: %s.", sentence(err.Error()))
		}
		if want, ok := opened["/record_sha256"]; ok {
			sum := sha256.Sum256(record)
			if got := hex.EncodeToString(sum[:]); got != want {
				return fail(checkRecord, "the stored record has SHA-256 %s, but the receipt commits to %s: the record was changed after the receipt was signed.", got, want)
			}
			a.openedRecord++
		} else if _, ok := c.Commitments["/record_sha256"]; ok {
			a.committedRecord++
		}
		if want, ok := opened["/invoice/ubl_sha256"]; ok {
			if !hasUBL {
				return fail(checkInvoice, "the receipt commits to an invoice (UBL SHA-256 %s), but no invoice document is stored with the entry.", want)
			}
			sum := sha256.Sum256(ubl)
			if got := hex.EncodeToString(sum[:]); got != want {
				return fail(checkInvoice, "the stored invoice has SHA-256 %s, but the receipt commits to %s: the invoice was changed after the receipt was signed. The service would serve an invoice its receipt does not cover.", got, want)
			}
			a.invoices++
		}
	}
	if c.Invoice != nil && c.Invoice.UBLSHA256 != "" {
		if !hasUBL {
			return fail(checkInvoice, "the receipt binds invoice %s (UBL SHA-256 %s), but no invoice document is stored with the entry.", c.Invoice.ID, c.Invoice.UBLSHA256)
		}
		sum := sha256.Sum256(ubl)
		if got := hex.EncodeToString(sum[:]); got != c.Invoice.UBLSHA256 {
			return fail(checkInvoice, "the stored invoice has SHA-256 %s, but the receipt signs %s: the invoice was changed after the receipt was signed. The service would serve an invoice its receipt does not cover.", got, c.Invoice.UBLSHA256)
		}
		a.invoices++
	}
	return nil
}

// receiptDoc assembles the receipt the service would serve for the entry:
// the leaf, its readable claims, and its inclusion proof against the
// checkpoint of the commit that appended it.
func (a *ledgerAudit) receiptDoc(l *ledger.Ledger, e ledger.StoredEntry) ([]byte, error) {
	cp, err := l.CoveringCheckpoint(e.Index)
	if err != nil {
		return nil, fmt.Errorf("no checkpoint covers the entry: %v", err)
	}
	proof, err := l.InclusionProof(e.Index, cp.Size)
	if err != nil {
		return nil, fmt.Errorf("inclusion proof: %v", err)
	}
	if receipt.IsLeafV4(e.Leaf) {
		// The payload is the leaf, its readable copy the same bytes.
		return json.Marshal(receipt.Receipt{
			Spec: receipt.SpecV4, ID: "rcpt_" + e.ID, Claims: e.Leaf,
			Payload:   base64.RawURLEncoding.EncodeToString(e.Leaf),
			TlogProof: receipt.FormatTlogProof(e.Index, proof, cp.Note),
		})
	}
	payload, err := leafPayload(e.Leaf)
	if err != nil {
		return nil, err
	}
	var head struct {
		Spec      string `json:"spec"`
		ReceiptID string `json:"receipt_id"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, fmt.Errorf("the receipt's payload is not JSON: %v", err)
	}
	return json.Marshal(receipt.Receipt{
		Spec: head.Spec, ID: head.ReceiptID, Claims: payload, JWS: string(e.Leaf),
		TlogProof: receipt.FormatTlogProof(e.Index, proof, cp.Note),
	})
}

// leafPayload is the claims' JSON of a receipt leaf: a 4.0.0 leaf itself,
// or the payload of a JWS.
func leafPayload(leaf []byte) ([]byte, error) {
	payload, ok, err := receipt.LeafPayload(leaf)
	if err == nil && !ok {
		err = errors.New("the leaf is not a compact JWS or a 4.0.0 payload")
	}
	return payload, err
}

// decodeLeafClaims reads the claims of a receipt leaf without checking its
// signature (no --jwks): enough to compare the stored record with them.
func decodeLeafClaims(leaf []byte, c *receipt.Claims) error {
	payload, err := leafPayload(leaf)
	if err != nil {
		return err
	}
	return json.Unmarshal(payload, c)
}

// recordField is one fact a stored record (a settlement record or a fiscal
// event) must share with its receipt: the record's JSON paths (the first
// present one counts), what it is in words, and the receipt's value.
type recordField struct {
	paths    []string
	what     string
	value    string
	required bool // the record must have it (otherwise compared when present)
	decimal  bool // compared as numbers: a record may write 20 where the receipt signs "20"
}

// recordMismatch compares a stored record document with the receipt's
// claims and describes the first difference ("" when they agree).
func recordMismatch(record []byte, c *receipt.Claims) string {
	dec := json.NewDecoder(bytes.NewReader(record))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Sprintf("the stored record is not a JSON object (%v)", err)
	}
	fields := []recordField{
		{paths: []string{"receipt.id"}, what: "the receipt id", value: c.ReceiptID, required: true},
		{paths: []string{"ledger.origin"}, what: "the log", value: c.Log.Origin, required: true},
		{paths: []string{"ledger.index"}, what: "the ledger index", value: fmt.Sprint(c.Log.Index), required: true, decimal: true},
		{paths: []string{"environment"}, what: "the environment", value: c.Environment},
		{paths: []string{"reviewStatus"}, what: "the review status", value: c.ReviewStatus},
		{paths: []string{"settlement.amountUsdc", "payment.amountUsdc"}, what: "the amount paid (USDC)", value: c.Settlement.AmountUSDC, decimal: true},
		{paths: []string{"settlement.network", "payment.network"}, what: "the network", value: c.Settlement.Network},
		{paths: []string{"settlement.txHash", "payment.txHash"}, what: "the transaction hash", value: c.Settlement.TxHash},
		{paths: []string{"settlement.timestamp", "payment.timestamp"}, what: "the payment time", value: c.Settlement.Timestamp},
		{paths: []string{"seller.legalName"}, what: "the seller", value: c.Seller.LegalName},
		{paths: []string{"seller.country"}, what: "the seller's country", value: c.Seller.Country},
		{paths: []string{"seller.vatNumber"}, what: "the seller's VAT number", value: c.Seller.VATNumber},
		{paths: []string{"buyer.country"}, what: "the buyer's country", value: c.Buyer.Country},
	}
	if k := c.Classification; k != nil {
		fields = append(fields,
			recordField{paths: []string{"classification.regime", "determination.regime"}, what: "the VAT regime", value: k.Regime},
			recordField{paths: []string{"classification.ratePercent", "determination.ratePercent"}, what: "the VAT rate (%)", value: k.RatePercent, decimal: true},
			recordField{paths: []string{"classification.taxingCountry", "determination.taxingCountry"}, what: "the taxing country", value: k.TaxingCountry})
	}
	if f := c.FX; f != nil {
		fields = append(fields,
			recordField{paths: []string{"fx.grossEur"}, what: "the amount in EUR", value: f.GrossEUR, decimal: true},
			recordField{paths: []string{"fx.netEur"}, what: "the net amount in EUR", value: f.NetEUR, decimal: true},
			recordField{paths: []string{"fx.vatEur"}, what: "the VAT in EUR", value: f.VATEUR, decimal: true})
	}
	if inv := c.Invoice; inv != nil {
		fields = append(fields,
			recordField{paths: []string{"invoice.id"}, what: "the invoice id", value: inv.ID},
			recordField{paths: []string{"invoice.ublSha256"}, what: "the invoice's SHA-256", value: inv.UBLSHA256})
	}
	for _, f := range fields {
		got, ok := "", false
		for _, p := range f.paths {
			if got, ok = lookup(doc, p); ok {
				break
			}
		}
		switch {
		case !ok && f.required:
			return fmt.Sprintf("the stored record does not state %s (%s), which the receipt says is %q", f.what, f.paths[0], f.value)
		case !ok || f.value == "":
			// Absent from the record, or not signed in clear (a 3.0.0
			// commitment): nothing to compare.
			continue
		case f.decimal && sameNumber(got, f.value):
			continue
		case got != f.value:
			return fmt.Sprintf("the stored record says %s is %q, but the signed receipt says %q", f.what, got, f.value)
		}
	}
	return ""
}

// lookup returns the scalar at a dotted path of a decoded JSON object.
func lookup(doc map[string]any, path string) (string, bool) {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[k]; !ok {
			return "", false
		}
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return fmt.Sprint(x), true
	}
	return "", false
}

func sameNumber(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// drawProgress redraws the progress line on a terminal, at most five
// times a second.
func (a *ledgerAudit) drawProgress() {
	if !a.progress || (time.Since(a.lastDraw) < 200*time.Millisecond && a.checked != a.size) {
		return
	}
	a.lastDraw = time.Now()
	fmt.Fprintf(a.stderr, "\r\033[Kchecking entry %d of %d (%d %%)", a.checked, a.size, a.checked*100/max(a.size, 1))
}

func (a *ledgerAudit) clearProgress() {
	if a.progress {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
}

func (a *ledgerAudit) summary(w io.Writer, name, jwksPath string) {
	fmt.Fprintf(w, "LEDGER VERIFIED: %s, log %s\n", name, a.verifier.Name())
	row := func(label, text string) {
		fmt.Fprintf(w, "  %-13s %s\n", label, wrap(text, 84, strings.Repeat(" ", 16)))
	}
	entries := fmt.Sprintf("%d: %d with a receipt", a.size, a.receiptLeaves)
	if a.documentLeaves > 0 {
		entries += fmt.Sprintf(", %d without (the leaf is the record itself)", a.documentLeaves)
	}
	row("Entries", entries)
	row("Receipt ids", fmt.Sprintf("%d distinct; none is carried by two leaves", a.receiptLeaves))
	row("Checkpoints", fmt.Sprintf("%d (one per commit, and the empty log's), each signed by the log key %s+%08x and equal to the root recomputed here from the leaves before it", a.checkpoints, a.verifier.Name(), a.verifier.KeyHash()))
	row("Latest", fmt.Sprintf("%d %s, root %s", a.latest.Size, plural(a.latest.Size, "entry", "entries"), a.latest.Root))
	if a.receipts != nil {
		row("Receipts", fmt.Sprintf("%d verified with %s: signature, key window, claims, inclusion in the checkpoint of their commit", a.receiptLeaves, jwksPath))
	} else {
		row("Receipts", "signatures NOT checked: give --jwks FILE (the receipt key set) to verify every receipt leaf")
	}
	rec := fmt.Sprintf("%d stored records match their leaves", a.receiptLeaves+a.documentLeaves)
	var how []string
	if a.openedRecord > 0 {
		how = append(how, fmt.Sprintf("%d 3.0.0 or 4.0.0 %s byte for byte, through the openings stored with %s", a.openedRecord, plural(a.openedRecord, "record", "records"), plural(a.openedRecord, "it", "them")))
	}
	if a.committedRecord > 0 {
		how = append(how, fmt.Sprintf("%d 3.0.0 or 4.0.0 %s field by field (no openings stored)", a.committedRecord, plural(a.committedRecord, "record", "records")))
	}
	if len(how) > 0 {
		rec += " (" + strings.Join(how, "; ") + ")"
	}
	row("Records", fmt.Sprintf("%s; %d %s match the SHA-256 their receipts sign", rec, a.invoices, plural(a.invoices, "invoice", "invoices")))
	row("File", "the ledger's own check passed: bbolt pages, stored hashes, indexes, checkpoint consistency")
	fmt.Fprintf(w, "Checked a copy, opened read-only; %s itself was only read.\n", name)
}

// openedDigests opens the digest commitments of a 3.0.0 receipt
// (/record_sha256, /invoice/ubl_sha256) with the entry's stored openings,
// each checked by receipt.VerifyOpening: field → hex digest. A commitment
// without an opening is left out (an entry written before openings were
// kept); an opening that does not open its commitment is an error.
func openedDigests(doc []byte, c *receipt.Claims) (map[string]string, error) {
	out := map[string]string{}
	if len(doc) == 0 {
		return out, nil
	}
	openings, err := receipt.ParseOpenings(doc)
	if err != nil {
		return nil, err
	}
	for _, o := range openings {
		if _, ok := c.Commitments[o.Field]; !ok || o.Field != "/record_sha256" && o.Field != "/invoice/ubl_sha256" {
			continue
		}
		if err := receipt.VerifyOpening(c, o); err != nil {
			return nil, err
		}
		out[o.Field] = o.Value
	}
	return out, nil
}
