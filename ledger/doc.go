// Package ledger is the append-only store of fiscal records: a bbolt file
// holding the entries, their indexes and an RFC 6962 Merkle log with signed
// checkpoints.
//
// The ledger is generic: it stores bytes the caller gives it and knows
// nothing of VAT or receipts. Each entry has a unique ID, one leaf (the exact
// bytes appended to the Merkle log; fiscal402's engine passes the receipt
// JWS), named documents (record JSON, UBL XML…), postings in secondary
// indexes and side-data writes. Every append also takes claims: unique keys
// such as (network, lowercase tx hash) or (account, Idempotency-Key) that
// make a retried or duplicated request answer with the entry that already
// holds them instead of writing a second one.
//
// # Appending
//
// [Ledger.Append] hands one [Append] to a single committer goroutine. The
// committer takes the first waiting append and then everything else already
// waiting (at most [Options].MaxBatch), without any artificial delay: while
// one batch is being fsynced, the next one forms (group commit). A batch is
// one bbolt write transaction; for each append in order:
//
//  1. the claims are looked up in order, in the committed data and among the
//     earlier appends of the batch; the first held claim decides: an equal
//     fingerprint answers Existing with the holder's index and ID, a
//     different one *[ClaimConflictError]; nothing is written;
//  2. Build is called with the index the entry will get; an error fails this
//     append only;
//  3. the entry is validated (non-empty unique ID, non-empty leaf, unique
//     postings, bbolt key limits); a problem fails this append only;
//  4. leaf, stored hashes, ID, documents, claims, postings and side writes
//     are put.
//
// When at least one entry was appended, the batch adds one checkpoint of the
// new tree size, signed with the log key, and the new size; then it commits.
// bbolt's commit writes the pages, fsyncs, writes the meta page and fsyncs
// again; only then does any caller of the batch get its answer. An
// acknowledged append therefore survives kill -9 and power loss (as far as
// the disk honours fsync), and a failed commit answers every append of the
// batch with [ErrUnavailable] and leaves nothing of it. A batch that
// appended nothing is rolled back: no fsync, no checkpoint.
//
// # Wire format
//
// A checkpoint is a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint) signed
// as a C2SP signed note (c2sp.org/signed-note, golang.org/x/mod/sumdb/note)
// with an Ed25519 log key distinct from the receipt key, whose key name is
// the origin:
//
//	<origin>\n
//	<tree size, decimal>\n
//	<base64 RFC 6962 root hash>\n
//	\n
//	— <origin> <base64(4-byte key hash ‖ Ed25519 signature)>\n
//
// No extension lines are written; [ParseCheckpoint] accepts and ignores
// them, ignores signatures by other keys (witness cosignatures) and requires
// the origin to equal the key name. The leaf hash is RFC 6962 §2.1
// SHA-256(0x00 ‖ leaf) ([golang.org/x/mod/sumdb/tlog.RecordHash]), interior nodes
// SHA-256(0x01 ‖ left ‖ right); inclusion proofs ([Ledger.InclusionProof],
// RFC 6962 §2.1.1) and consistency proofs ([Ledger.ConsistencyProof],
// §2.1.2) are those of golang.org/x/mod/sumdb/tlog and verify with
// tlog.CheckRecord and tlog.CheckTree or any RFC 6962 / RFC 9162
// verifier. A new file starts with the signed checkpoint of the empty tree
// (size 0, root SHA-256 of the empty string) and every commit adds one;
// all are kept, so [Ledger.CoveringCheckpoint] can name the checkpoint a
// receipt for a leaf proves against (the smallest stored size above its
// index).
//
// Log keys are note keys: the secret "PRIVATE+KEY+<origin>+<hash>+<base64>"
// ([GenerateLogKey], [LoadOrCreateLogKey], file mode 0600) and the public
// verifier key "<origin>+<hash>+<base64>" that auditors pin.
//
// # Storage layout
//
// One bbolt file, mode 0600. Numeric keys and values are 8-byte big-endian,
// so byte order is numeric order. Top-level buckets:
//
//	meta          "schema" → "fiscal402.ledger/1"; "origin" → origin;
//	              "size" → tree size (8 bytes)
//	leaves        index → leaf bytes
//	hashes        tlog stored-hash index (tlog.StoredHashIndex) → 32-byte hash
//	checkpoints   tree size → signed checkpoint note, verbatim
//	entries       index → entry ID
//	ids           entry ID → index
//	docs          index ‖ document name → document
//	claims        one sub-bucket per claim space: key → index ‖ fingerprint
//	postings      one sub-bucket per index name: key → entry ID
//	side          one sub-bucket per caller bucket: key → value (Put, Update)
//
// Caller-named buckets (postings indexes, claim spaces, side buckets) are
// nested under their own top-level bucket, so no caller name can collide with
// the ledger's buckets. A future incompatible layout gets a new schema
// string; Open refuses schemas it does not know, and refuses a file recorded
// with another origin ([ErrOriginMismatch]) or whose latest checkpoint was
// not signed by the configured key ([ErrLogKeyMismatch]). Documents and side
// data are not covered by the Merkle log; only leaves are. An entry's
// documents are authenticated when its leaf commits to them (fiscal402's
// receipt carries their digests).
//
// # Invariants
//
// [Check] (on a file) and [Ledger.Check] (on an open ledger, in one read
// transaction) re-verify the file and return a *[CheckError] for the first
// inconsistency, checking in this order:
//
//  1. bbolt's page structure (file Check only): the B+tree pages reachable
//     from the current meta page are walked with bounds checks, so that a
//     damaged file is reported instead of hanging or crashing bbolt;
//  2. every bucket exists; schema; origin equals the log key's name; size;
//  3. leaves are exactly 0…size−1 and non-empty; for each leaf in order, the
//     stored hashes it completes equal the ones recomputed with
//     tlog.StoredHashes (its record hash first); no stored hash beyond
//     tlog.StoredHashCount(size);
//  4. entries are exactly 0…size−1 with a non-empty ID, and ids maps each ID
//     back to its index; ids holds nothing else;
//  5. every checkpoint, by increasing size: signature by the log key, origin,
//     size equal to its key and at most the log size, root equal to
//     tlog.TreeHash of the verified hashes, consistent with the previous one
//     (RFC 6962 §2.1.2 proof); the latest has the log size;
//  6. claims point at indexes within the log; postings name existing
//     entries; documents belong to indexes within the log.
//
// # Opening and damage
//
// [Open] refuses a damaged file with a *[CorruptError] (errors.Is
// [ErrCorrupt]) whose Error() is one line telling the operator to restore the
// latest backup and verify it with the full check; a service prints it and
// exits non-zero. Before bbolt reads an existing file, Open walks every page
// reachable from its current meta page with bounds checks and checks the
// freelist against them (a truncated file, a page out of range, a cycle, a
// free page in use), under the same lock bbolt takes; bbolt itself trusts
// its pages and would panic or fault on such a file. Then it checks schema,
// origin and size, the latest checkpoint (signature by the configured key,
// size, root equal to the tree hash of the stored hashes) and the newest
// [OpenCheckLeaves] leaves with the hashes they completed. The page walk
// reads the whole file once with one bit of memory per page; the rest reads
// a few hundred values. Measured warm on the 2-CPU development VM: 1.0 s to
// open a file of 100 k records in schema 1 (1.36 GB, of which 0.74 s is the
// page walk). [Options].FullCheck runs [Check] instead (3.1 s at 100 k).
// An empty existing file is refused too: bbolt would make a new log of it,
// which would contradict every checkpoint handed out; Open creates a new
// file under a temporary name and links it into place, so it never leaves
// one.
//
// Once open, every read recovers a panic or memory fault inside bbolt (a
// page damaged after Open, a file truncated under the memory map) into a
// *CorruptError; a write that meets one fails its batch with it and stops
// all further writes of this Ledger. No panic of bbolt reaches a caller; a
// panic in caller code (a View or Update function) is re-raised, and one in
// Build fails its own append.
//
// Reads verify what the log covers: [Ledger.Entry] and [Ledger.EntryAt]
// check the leaf against its stored record hash SHA-256(0x00‖leaf) (one
// SHA-256) and stored checkpoints are served only with a valid signature
// (when the ledger has a verifier); a mismatch is an *[IntegrityError]
// (errors.Is [ErrIntegrity]) naming the index, is counted in
// [Stats].IntegrityFailures, and the bytes are not returned. Documents are
// not covered by the log: the caller anchors them through its leaf
// (fiscal402's receipt carries the SHA-256 of the record and of the invoice)
// and reads them with [Ledger.DocVerified], which checks them against that
// digest. A leaf edited together with every hash above it is caught only by
// the signed checkpoints, which [Check] verifies.
//
// # Errors
//
// Callers branch with errors.Is / errors.As, never on message text:
// [ErrNotFound] (404), [ErrClosed], [ErrReadOnly], [ErrInvalid] (a malformed
// argument; a caller bug or a 400), [ErrDuplicate] (an entry ID or posting
// key already used), [ErrUnavailable] (locked file, failed write, fsync or
// signature: retry later; 503 DB_UNAVAILABLE), *[ClaimConflictError]
// (409 IDEMPOTENCY_CONFLICT when the claim is an Idempotency-Key),
// *[IntegrityError] and *[CorruptError] (500 LEDGER_INTEGRITY on a read;
// refuse to start on Open), [ErrOriginMismatch], [ErrLogKeyMismatch],
// [ErrBadCheckpoint] and *[CheckError]. An unavailable store is never
// reported as a claim conflict or as "not found".
//
// # Determinism
//
// The ledger reads no clock and no randomness: indexes come from the order of
// commits, checkpoints are deterministic Ed25519 signatures over text that
// depends only on the leaves, documents are written in sorted name order.
// Appending the same entries in the same batches with the same key yields a
// byte-identical log. [GenerateLogKey] takes its randomness as an io.Reader.
//
// # Concurrency and processes
//
// All methods are safe for concurrent use. Reads run in bbolt read
// transactions (MVCC snapshots) alongside commits; they wait only while a
// commit grows the file's memory map. One process owns a file: bbolt
// locks it, and Open waits at most [Options].OpenTimeout (default 2 s) before
// answering [ErrUnavailable]; bbolt would wait forever. Side-data [Ledger.Update]
// transactions share bbolt's single writer with the committer.
package ledger
