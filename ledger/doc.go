// Package ledger is the append-only store of fiscal records: a bbolt file
// holding the entries, their indexes and an RFC 6962 Merkle log with signed
// checkpoints.
//
// The ledger is generic: it stores bytes the caller gives it and knows
// nothing of VAT or receipts. Each entry has a unique ID, one leaf (the exact
// bytes appended to the Merkle log; fiscal402's engine passes the receipt:
// a 4.0.0 payload, the claims' JSON, or, before 4.0.0, a JWS), named
// documents (record JSON, UBL XML…), postings in secondary
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
// one write transaction. With a journaled bbolt file the fdatasync runs
// behind the committer (# Durability): the committer commits the next
// batch while the journal syncs the one before, and its appends are
// answered, in order, once it is durable; the committer runs at most one
// batch ahead of the answers. With the bbolt store the committer yields its P
// once it has committed a batch, so that the callers answered run before
// it plans the next batch (a scheduling hint, not a delay: on 2 CPUs it
// gave the server 6 % more settlements/s at 32 HTTP clients; with
// GOMAXPROCS=1 batches of one append became batches of 10-46 and
// throughput rose 3-8 times; Ledger.run).
//
// An append carries its entry in one of two forms. The prebuilt form
// ([Append].Entry) is for everything that does not depend on the log
// position: Append validates the entry, computes its RFC 6962 record hash
// and encodes and compresses it in the caller's goroutine, in parallel with
// other callers and with the committer. What depends on the position runs
// in the committer, in an optional [Append].Hook given the index and a small
// transactional view ([Hook]): gap-free sequences ([Hook.Sequence], e.g.
// invoice numbers), side values declared in [Append].Reads (read, compare,
// update: a running total), side writes, and byte splices into the prebuilt
// documents ([Hook.Splice]), with [Hook.SetDoc] and [Hook.SetLeaf] as the
// recompute path when an optimistic decision went stale. The older form
// ([Append].Build) builds the whole entry in the committer with its index;
// everything it does is serial.
//
// A batch is planned in the order its appends arrived, except that the
// appends which set [Append].Order are planned in ascending Order among the
// positions they hold: a caller that predicts the sequence number its Hook
// will draw sets Order to the prediction, so that appends which overtook
// each other on the way still draw their numbers as predicted. An append
// whose Order is ahead of the index it would get (one predicted before it
// is still on its way) waits for the next batch, once, and only when some
// append of the batch goes now; with [Append].Pending it waits as long as
// the caller says that predecessor is still coming, at most [MaxHold] per
// missing position, and when nobody comes the last append of the batch
// takes the gap; an append whose expected index the log has passed goes
// last. Waiting changes when an append is decided, never what it is.
// [Predictor] hands out such predictions (index and sequence number) and
// answers Pending; [Ledger.Prepare] compresses an entry ahead of its
// Append, so that the caller can check its prediction after the work. For
// each append of a batch, in that order, the committer:
//
//  1. looks the claims up in order, in the committed data (on bbolt: the
//     in-memory key index, # Storage layout) and among the
//     earlier appends of the batch; the first held claim decides: an equal
//     fingerprint answers Existing with the holder's index and ID, a
//     different one *[ClaimConflictError]; nothing is written;
//  2. calls Build with the index the entry will get and prepares its result
//     like a prebuilt entry (Build form only); an error fails this append
//     only;
//  3. checks that the entry ID and the postings are not taken (committed or
//     earlier in the batch): [ErrDuplicate] fails this append only;
//  4. runs Hook; an error (or a panic) fails this append only, and nothing
//     it wrote or drew is kept;
//  5. records the entry: its stored RFC 6962 hashes, computed from the
//     tree's right frontier kept in memory (the record hash and the at most
//     log2(n) interior hashes it completes: no stored hash is read), and its
//     blob, claims, postings, side writes and sequence numbers. A side key
//     written by several appends of a batch is put once, with its last
//     value, and a side value is read from the file once per batch.
//
// When at least one entry was appended, the batch adds one checkpoint of the
// new tree size (its root folded from the frontier), signed with the log
// key, and the new size; then it commits. On bbolt the signature is made on
// another goroutine while the committer puts the batch's other writes, and
// the checkpoint is put last, once signed: the Ed25519 signature (tens of
// µs per commit) is off the committer's serial path whenever a CPU is free.
// When that goroutine has not started by the time the note is needed
// (every CPU busy), the committer signs itself rather than wait for the
// scheduler.
// It is still made before the transaction commits and stored in it, so a
// crash means what it meant before (the batch and its checkpoint are both
// durable or both gone); a signer that fails or panics fails the batch with
// [ErrUnavailable] and writes nothing of it. PostgreSQL signs in plan. Only then does any caller of the
// batch get its answer. An acknowledged append therefore survives kill -9
// and power loss (# Durability), and a failed commit answers every append of
// the batch with [ErrUnavailable] and leaves nothing of it, but for one
// whose journal write or sync failed after bbolt had taken it, which stops
// the ledger (# Durability). A batch that
// appended nothing is rolled back: no fsync, no checkpoint.
//
// # Durability
//
// A writable bbolt file keeps a journal (journal.go): ledger.db.journal0 and
// ledger.db.journal1 beside it. A commit records its bucket operations
// while it puts them, lets bbolt write its pages and meta page without
// syncing (NoSync), appends the operations to the journal as one record
// with a CRC-32C and fdatasyncs the journal: one flush a commit, where
// bbolt alone needs two (its data pages, then its meta page, since it
// checksums no data page and only that first flush keeps a meta page on
// disk from pointing at pages that are not). Only then does any caller of
// the batch get its answer. What batching saves on top is the flushes per
// record: one per batch, however many appends it holds.
//
// The fdatasync runs behind the committer (journal_sync.go): a syncer
// goroutine syncs the journal file as soon as a batch is written, each
// fdatasync making every batch written before it durable, while the
// committer plans and commits the next batch. Nothing of a batch is seen
// before it is durable: its appends are answered, and Size and Checkpoint
// move, only then, and a read whose snapshot holds it (an entry, a claim's
// holder, a posting, a backup made with [Ledger.WriteTo]) waits for it
// first, so that no answer read from the ledger (a retried payment found
// by its claim) is one a crash could take back. A checkpoint record
// written with a batch counts only once that batch is durable.
//
// The journal does not grow without end: now and then (at most every
// 50 ms after a commit, and at each switch between the two files, every
// 32 MB) a checkpoint fdatasyncs the bbolt file in the background and then
// notes, in the next journal write, the meta page of the transaction it
// made durable; each turn of a file begins with the newest durable one, so
// the file written over never holds the only checkpoint on the disk, and a
// file is written over only once a checkpoint covers every batch it holds.
// From the checkpoint's start until a later checkpoint is
// durable a read transaction is held at its transaction, so bbolt reuses
// none of the pages that state reaches (bbolt frees a page only once no
// read transaction older than the commit that freed it is open: freelist
// ReleasePendingPages). Side-data writes (Update) are not
// journaled: a checkpoint made at once makes them durable, and so does
// Close, whose checkpoint is marked clean.
//
// Open, holding the file's lock throughout (it hands its locked descriptor
// to bbolt), puts the newest checkpoint's meta page back into both of bbolt's
// meta slots (after a power cut, later meta pages may point at pages that
// never reached the disk; after a clean close nothing is put back, so a
// later commit by another writer, bbolt's own tools say, stays), opens
// bbolt, replays the journal's batches after the checkpoint as the same
// transactions, syncs the file and appends a new checkpoint. A batch record
// that is not whole (its checksum fails: torn by the cut) ends the journal,
// as an invalid record ends PostgreSQL's WAL replay (its reader,
// src/backend/access/transam/xlogreader.c, stops at the first record
// whose CRC fails); its append had not been
// answered. The rest of that file is then zeroed, so that no byte of the
// torn record can pass for a later one. The file is mapped 64 GiB ahead
// (address space, not memory: bbolt grows the file as it writes), because
// a held read transaction would block a commit that must map the file
// anew; a commit that would come near the mapping anyway first makes a
// checkpoint and holds nothing across it. A file opened read-only ([Check],
// a [Ledger] without a Signer) is refused with [ErrNeedsRecovery] while its
// journal holds commits a writer did not checkpoint at Close (a crash, a
// kill, a power cut): the file alone may be behind, or torn; a writer's
// Open replays them ([CopyToPostgres], given the Signer, does so itself).
// A journal whose checkpoint is newer than the file (a backup copied over
// it) is refused as damage, not written over; journal files left where no
// ledger file is (a deleted one) are removed when a new file is created.
// The journal needs flock and a 64-bit address space: on Windows, Plan 9,
// Solaris, AIX and Android, and on 32-bit platforms, bbolt syncs every
// commit itself as before.
//
// A commit that fails before it is in force in bbolt (the journal cannot
// grow: a full disk; bbolt's own commit failing before its meta page) is
// answered [ErrUnavailable], changes nothing, and writing goes on. One that
// fails after (the journal's write or fdatasync, a checkpoint's fdatasync,
// or, without the journal, bbolt's second fdatasync) is in force in bbolt
// although it may not be on the disk, and a later sync would not put it
// there (Linux marks pages whose write-back failed clean and reports the
// error once, while the page cache may go on showing them). The ledger then
// stops reading and writing, as PostgreSQL stops on a failed flush: every
// call, [Ledger.Check] included, answers a *[HaltedError] (errors.Is
// [ErrUnavailable]) that tells the operator to check the disk, drop the
// file from the page cache (reboot) and open it with the full check; only
// the in-memory Size and Checkpoint (the state before the commit) and
// [Ledger.WriteTo], a copy of the file as the page cache shows it (verify
// it with the full check too), still answer. A failed journal fdatasync
// fails the batch it covered and the one committed during it alike.
// Opened again, the file holds a failed commit if its journal record
// reached the disk, and not otherwise; nobody was told it succeeded. These cases are tested on a file
// system whose fdatasync fails with EIO (internal/faultfs, a FUSE mount):
// the kernel's error reaches the journal's, the checkpoint's and (without
// the journal) bbolt's own syncs (faultfs_test.go), and the bundled server
// answers 503 throughout (examples/server, TestServerAfterAFailedDiskSync).
//
// bbolt options, and what they do to a crash: NoSync and NoGrowSync are on
// with the journal (the journal's flush makes a commit durable, and a
// checkpoint's fdatasync flushes the file's size with its pages) and off
// without it (either would then lose acknowledged appends on power loss);
// the freelist is written with every commit (NoFreelistSync off: one page
// more per commit, but Open needs no scan of the whole file to rebuild it,
// the page walk at Open can check it, and a checkpoint's meta page names a
// freelist the held read transaction keeps); the freelist is bbolt's array
// kind: writing the freelist every commit costs time in its length whatever
// the kind (bbolt serializes all of it, sorted), so the hashmap kind's
// constant-time allocation buys nothing here, and its map upkeep took 8 %
// of the committer's instructions (callgrind, 12 k realistic records, 12
// per commit; the array kind's linear search runs only for a multi-page
// allocation, within the same order as that write). That sorting is also
// why checkpoints come every 50 ms and not only at a switch of journal
// files: every page freed while a read transaction is held stays in the
// list, and a checkpoint every 32 MB tripled the committer's time. The page
// format is the same, so either kind opens a file the other wrote (files up
// to this version were written with the hashmap kind); buckets whose keys
// only grow (blobs, keys, hashes, checkpoints, and caller buckets and
// posting indexes a commit only appended to) split full pages full
// (FillPercent 1.0 instead of 0.5), which changes how pages are packed,
// never what a crash can do (a replayed batch may pack its pages less
// tightly). A file is created under a temporary name, fsynced and linked
// into place, then the directory is fsynced; so is the directory when the
// journal files are made.
//
// What a power loss does is tested, not only argued: internal/faultfs
// models a disk's volatile cache (a block written since its file's last
// sync reaches the disk or not, any subset, in any order) and cuts the
// power under load from 8 appenders, with the journal (its files switched
// every 256 KB, so that checkpoints come every few commits) and without:
// at a journal file's sync, at a checkpoint's sync of the ledger file (and
// without the journal at a commit's data-page sync and at its meta-page
// sync), at a drawn write, at a moment the test does not choose, keeping
// none, some or all of the unsynced blocks, and at each of the next syncs
// keeping exactly the ledger file's meta pages and none of the rest (the
// order that finds a missing barrier); a seeded soak of 24 draws among
// these. Every acknowledged append is in the file, whole, Check passes and
// appending goes on (faultfs_test.go, TestPowerCut*; the server binary
// alike in examples/server, TestServerPowerCut). The tests fail on the
// mistakes they exist for (each a mutation, stop 48): without the meta
// page put back at Open, 17 of the 20 journal cases and 18 of the 24 soak
// draws find lost appends or a damaged file; without the held read
// transaction, 5 and 6; with a checkpoint noted before its fdatasync, 17
// and 24; with the journal's fdatasync dropped, or bbolt's
// NoSync without the journal, a cut that keeps nothing loses acknowledged
// appends (TestPowerCutCatchesNoSync). The replay itself is tested against
// the live ledger (TestJournalReplayRebuildsTheState: the file as it was at
// Open plus the journal give the same entries, postings, side values,
// sequences and checkpoint). A kill -9 (crash_test.go, the server's soak)
// keeps the page cache and so tests none of this.
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
// With [Options].Cosigners, each checkpoint carries after the log key's
// line one more signature line per cosigner, "— <name> <base64(key hash ‖
// signature)>" over the same text, made with the log key's (on the same
// goroutine, off the committer's serial path as above; on PostgreSQL in
// plan): fiscal402's engine cosigns with its active receipt key, named by
// its kid, which then signs one tree head per commit instead of every
// receipt (receipt package, "# Version 4.0.0"). Cosigners is asked once
// per checkpoint, so a rotated key signs from the next commit on.
// No extension lines are written; [ParseCheckpoint] accepts and ignores
// them, ignores signatures by other keys (witness and receipt-key
// cosignatures) and requires the origin to equal the key name. The leaf hash is RFC 6962 §2.1
// SHA-256(0x00 ‖ leaf) ([golang.org/x/mod/sumdb/tlog.RecordHash]), interior
// nodes SHA-256(0x01 ‖ left ‖ right); inclusion proofs
// ([Ledger.InclusionProof], RFC 6962 §2.1.1) and consistency proofs
// ([Ledger.ConsistencyProof], §2.1.2) are those of golang.org/x/mod/sumdb/tlog
// and verify with tlog.CheckRecord and tlog.CheckTree or any RFC 6962 /
// RFC 9162 verifier. A new file starts with the signed checkpoint of the
// empty tree (size 0, root SHA-256 of the empty string) and every commit
// adds one; all are kept, so [Ledger.CoveringCheckpoint] can name the
// checkpoint a receipt for a leaf proves against (the smallest stored size
// above its index).
//
// Log keys are note keys: the secret "PRIVATE+KEY+<origin>+<hash>+<base64>"
// ([GenerateLogKey], [LoadOrCreateLogKey], file mode 0600) and the public
// verifier key "<origin>+<hash>+<base64>" that auditors pin.
//
// # Storage layout
//
// One bbolt file, mode 0600, schema "fiscal402.ledger/4". Numeric keys and
// values are 8-byte big-endian, so byte order is numeric order. Top-level
// buckets:
//
//	meta          "schema"; "origin"; "size" → tree size; "v2from" → the
//	              first index stored as a blob; "v3from" → the first index
//	              whose ID and claims are a keys record
//	blobs         index → the entry's blob: leaf and documents (below)
//	keys          index → the entry's keys record: its ID and claims (below)
//	dicts         dictionary id → log size it was cut at ‖ content
//	hashes        tlog stored-hash index (tlog.StoredHashIndex) → 32-byte hash
//	checkpoints   tree size → signed checkpoint note, verbatim
//	entries       schema 2: index → entry ID         } for the entries below
//	ids           schema 2: entry ID → index         } v3from of a file
//	claims        schema 2: one sub-bucket per claim } upgraded from schema
//	              space: key → index ‖ fingerprint   } 1 or 2; empty otherwise
//	postings      one sub-bucket per index name: key → entry ID
//	postlog       schema 4: entry index ‖ ordinal (4 bytes) → a posting
//	              not yet in postings: index name and key (uvarint length
//	              and bytes each), then the entry ID
//	side          one sub-bucket per caller bucket: key → value (Put, Update)
//	sequences     sequence name → last number given
//	leaves, docs  schema 1: index → leaf, and index ‖ name → document, for
//	              the entries below v2from of a file upgraded from schema 1
//
// A keys record is 0x01, the entry ID (uvarint length, bytes), the number
// of claims (uvarint), each claim's space, key and fingerprint (uvarint
// length and bytes each), then a CRC-32C (big-endian) of all of it; a
// claim an append names twice is recorded once, with the last
// fingerprint it was named with. It is put in the same
// transaction as the blob, so the two are durable together or not at all.
//
// # Postings written behind
//
// Posting keys sort by what they index (an account, then a time or a log
// index), so a commit of entries of many accounts would dirty a leaf page
// of every account's range in each index. Schema 4 appends a commit's
// postings to postlog instead (keys that only grow: one or two pages a
// commit), in the commit's transaction; when postlog holds 1,024 postings
// or more, the commit moves them all, sorted, into their index buckets
// and empties it. The log is also held in memory, sorted per index name;
// lookups, scans, the committer's duplicate check, Check and the copy to
// PostgreSQL read both. A read transaction takes the in-memory log whose
// last key is its own postlog's last key (the committer publishes the next
// one just before bbolt's commit, and takes it back if the commit fails;
// the one before stays reachable for reads still on it); when none
// matches, it decodes its own postlog. Open loads postlog (at most ~1,000
// records) and refuses the file if a record does not parse. Measured with
// BenchmarkSettleAccounts (50 accounts, 64 callers, GOGC=400) side by side
// with schema 3: 1.5 instead of 3.4 pages written per record,
// 12.5–13.2 k instead of 10.4–11.2 k settlements/s, the committer's serial
// time 26 instead of 32–34 µs per record.
//
// # The key index
//
// Schema 2 kept the IDs and claims in randomly keyed B-trees (ids, and a
// claims key per claim, usually two per record): once the file is large,
// every such insert dirtied a leaf page of its own and the branch pages
// above it, so the pages a record cost grew with the file, and the
// committer sought them. Schema 3 writes them sequentially (the keys
// record, next to the blob: both buckets only grow by index) and finds them
// through an index in memory, one per Ledger (no package state): 64-bit
// hashes (hash/maphash, a seed per Ledger; the seed changes nothing that is
// written) of (kind, space, key) → log index, in one pointer-free
// open-addressing table ([]uint64: the top 32 bits of the hash ‖ index+1,
// linear probing, at most three quarters full; the collector does not scan
// it). A lookup is exact: every hit is confirmed by reading the keys record
// of its index (or, below v3from, the B-tree key) in the same read
// transaction and comparing bytes; a colliding hash probes on. Open builds
// it from the legacy B-trees (the entries below v3from) and the keys
// records in index order (a missing or damaged record refuses the file);
// the committer adds a batch's keys after its commit and before any
// append of the batch is answered, and records up to which index the
// table is complete. Readers run alongside under an RWMutex (a table that
// grows is copied outside the lock and swapped in); a reader whose
// snapshot is newer than the table (a commit between its bbolt commit and
// the table update) reads those few keys records after the table's end,
// and a hit beyond the reader's snapshot is not in its snapshot's keys,
// so no read sees an entry it would not see in the B-trees: uncommitted
// entries never, an acknowledged one always. The committer's lookups
// (claims and IDs of a batch: the batch's own are in its maps) cost no
// B-tree read unless a key is held. The index holds log indexes below
// 2^32 − 1: a log that reaches 4,294,967,295 entries refuses to append.
//
// Measured on the 2-CPU development VM (BenchmarkOpenKeys, bare entries of
// one ID and two claims of 40-byte keys; warm; medians of three opens):
// Open takes 37–38 ms at 100 k entries and 0.46–0.47 s at 1 M (21–23 ms
// and 0.23 s with schema 2, the page walk alone), the index 4 MB and 32 MB
// of heap. Filling those files by commits of 1,000 took 1.2 s instead of
// 3.1–3.3 s at 100 k. Inserting 3 M keys in index
// order missed the cache on every one (0.95 s at 1 M); Open collects 256 k
// keys at a time, radix-sorts them by home slot and inserts them in one
// forward sweep. The legacy B-trees of an upgraded file are loaded into the
// table at Open too (a walk of the ids and claims buckets, at the rate of
// the keys records' walk), rather than asked after every miss: the common
// lookup, a key nobody holds, then reads no B-tree in an upgraded file
// either. (That choice was reasoned, not measured against the other.)
//
// A blob is 0x03, the dictionary id (uvarint, 0 for none), the length of
// the leaf's part, then the leaf and the documents compressed together as
// one S2 block (github.com/klauspost/compress/s2) with that dictionary, a
// CRC-32C of the uncompressed bytes, and a list of splices with a CRC-32C
// of its own (codec.go gives the grammar). A leaf that is a compact JWS
// (RFC 7515 §7.1) with canonical unpadded base64url parts is stored with
// the parts decoded, so that its JSON payload compresses with the record it
// describes; it is encoded again when read, and a read verifies the result
// against the stored record hash, so the encoding can fail a read but never
// change a leaf. Dictionaries are the raw bodies of the newest four entries
// (at most 64 KB) when the log reaches 16, 256, 4096 and then every 65,536
// entries; entries name the one they were compressed with, so a file reads
// with the dictionaries it holds. Every read of a blob decodes it whole and
// verifies its checksums, Check's included: a damaged document fails its
// read and Check reports its entry. Blobs of form 0x02 (the leaf and the
// documents as two zstd frames, RFC 8878, with the same stored dictionaries
// used as zstd raw-content dictionaries and zstd's frame checksums), which
// versions up to commit 0b24f0f wrote, are still read beside 0x03; a file
// can hold both (testdata/blob02 is such a file).
//
// Why S2 rather than zstd, measured on the 2-CPU development VM in thread
// CPU time: encoding a realistic entry (BenchmarkEncode: leaf body,
// documents body, compression) took 39 µs with two zstd frames and takes
// 10.6 µs with an S2 block. The compression alone took 28 µs (43 µs for
// entries Engine.Settle wrote): a third of it resetting the encoder to the
// dictionary (a 256 KB hash table and the history copied for each of a
// blob's two frames), most of the rest building entropy tables. One zstd
// frame per blob took 23 µs (30 µs), one without entropy coding 18 µs (23
// µs); the S2 block takes 7 µs (9 µs), and decoding a whole body 0.7 µs,
// where zstd took 1.3 µs for the leaf alone. The price is the entropy
// coding S2 does not do: the random parts of an entry (signature, salts,
// commitments, hashes in hex) stay as they are, so a Settle entry's blob is
// 1,045 B where two zstd frames took 832 B; the realistic entries here,
// with fewer random bytes, shrink from 486 to 422 B, since the documents
// now match the leaf's payload. Allocations per encode: 1 and 491 B (the
// exact-size blob; the raw body is made in a pooled buffer, and a
// dictionary cut, rare, takes the newest bodies back from their blobs),
// from 3 and 10.5 KB when the body was kept with every entry, which also
// took the encode's thread CPU from 9.6 to 5.9 µs (BenchmarkEncode,
// medians of three alternating runs on the loaded 2-CPU VM).
//
// The block is made by one of the codec's compressor goroutines, not the
// caller's (codec.compress): S2's dictionary encoder is pure Go and keeps
// a 64 KB hash table on its stack, so at 64 callers nearly every
// settlement grew its caller's stack to 128 KB and the collector shrank it
// back; the handoff took ~40 µs of process CPU off a settlement there, at
// the price of waking a parked compressor when entries come one at a time.
// Measured on the entries Engine.Settle writes (10.7 KB raw, thread CPU
// per block on the loaded VM) against the dictionary encoder's 11–12 µs and
// 1,063 B: S2 without a dictionary (assembly) 17 µs and 5,376 B; "better"
// 45 µs and 1,056 B, 36 µs and 5,102 B without a dictionary; the newest 12
// to 43 KB of the dictionary prefixed to the body and compressed with the
// assembly encoder 23–36 µs for 1,141–945 B (the prefix's own output
// subtracted). None pays for its bytes or time, so the form stays 0x03.
//
// Where the bytes go, measured with realistic entries (the receipt JWS,
// record JSON and UBL invoice fiscal402 writes, ~2.7 + 2.8 + 3.8–5.2 KB,
// two claims, two postings and two side writes each; 64 callers;
// BenchmarkScale): schema 1 took 14.3 KB per record at 100 k records, 12.4
// KB of it for the leaf and documents (each stored as its own value: bbolt
// puts at least two elements on a page, so two values of 2.7–5 KB take
// three or four 4 KB pages, most of them half empty), the rest in indexes
// of half-full pages (bbolt splits at 50 %, which leaves append-only
// buckets half empty). Schema 2 with 0x03 blobs takes 1,967 B per record at
// 100 k records (file size / records; 1,892 B in the buckets): the blob
// 494 B (550 B as 0x02; about 3.1 KB with zstd alone, without a
// dictionary), the stored hashes 115 B, the entry ID twice (entries, ids)
// 155 B, the two claims 315 B, the two postings 375 B, the two side writes
// 429 B, checkpoints 8 B, free pages 15 B (per bucket: BenchmarkScale's
// report). With 0x02 blobs it took 1,969 B at 100 k and 1,967 B at 1 M (the
// blob 558 B). Through Engine.Settle (fiscal's BenchmarkSettleScale, 64
// callers) a file of 102 k records takes 2,662 B per record, 2,326 B with
// 0x02 blobs (bbolt grows a file this size in 16 MB steps, 164 B per record
// here).
//
// What the committer's serial section is made of (BenchmarkCommitSerial,
// instructions of the committer's thread under callgrind, 4 k realistic
// records, 32 per commit): almost all of it is bbolt turning the pages a
// batch dirties into nodes (every element of a page is read into a node,
// the node's element slice grows on the first insert, every element is
// written out again at the commit) and the allocations that takes, 80 %
// of it in the puts and the commit's spill; planning is the rest (its
// bbolt lookups of claims, IDs and postings 7 %, the frontier's hashes
// 3 %, the hook and the batch's maps). Allocations per record there went
// from 99 to 75 (and per Engine.Settle at 64 callers from ~360 to ~305 at
// the same batch size), bbolt's own now two thirds of the committer's: its
// Put copies the key and grows a new cursor stack, which nothing outside
// bbolt can reuse. Planning opens each bucket once per commit and seeks one
// reused cursor per bucket; it writes an append's postings and side writes
// straight into the batch's lists, found again by a hash of name and key
// (checked against the item), with small copies cut from one arena and one
// Hook for the batch; ClaimHolder reads in a bare read transaction. The
// cost is therefore about the number of pages a record dirties, and how
// full they are. Appends to index-keyed buckets (blobs, entries, hashes,
// checkpoints, outbox events) share a page among many records; every
// randomly keyed write (the entry ID in ids, each claim, a side key such as
// a record ID) dirties its own leaf page once the file is large, and its
// branch pages above it; keys appended per account (postings) dirty one
// page per account a batch touches: BenchmarkAppendFloor, a realistic entry
// appended by 64 callers with the engine's claims, two postings and outbox
// event, ran at 23.0 k appends/s over one account and 18.5 k over 50 at Go's
// defaults (a facilitator's books; 13.6 against 23.4 serial µs per record;
// bench/table-6366104.txt), and in an experiment build at GOGC=400 at 28-29
// k over 50 with the postings left out against 18.0-18.3 k with them (issue
// 22, stop 41): writing postings behind the commit, many commits' at once,
// is what would give that back. A batch also rewrites the root, the meta and
// freelist pages and the root-to-leaf path of every bucket it writes, about
// 14 pages for the ledger's own buckets and twice that with
// the engine's claims, postings and side buckets: small batches pay that
// per record. fiscal402's engine therefore writes no "heads" side key for
// a record's first revision (it finds the record by its entry ID), which
// took 1.6 of the 11.1 pages per record it dirtied at 30 k records and 12
// records per commit. Longer random keys also cost pages: bbolt branch
// pages hold each child's full first key, so 78-byte payment claim keys
// need three times the branch pages of 16-byte ones (hashing the claim
// keys would save about 0.4 pages per record at 30 k records; not done:
// CopyToPostgres and Check read the keys back). Without the first-revision
// head, with the checkpoint signed alongside the writes and with the array
// freelist, the committer's thread runs 162 k instead of 205 k instructions
// per record at 4 k records and 32 records per commit (52 k instead of 63 k
// for the ledger's own writes alone), and 226 k instead of 305 k at 12 k
// records and 12 records per commit (244 k when every CPU is busy and the
// committer signs the checkpoint itself).
//
// Schema 3 took the random writes of IDs and claims off that list (# The
// key index). Measured side by side with e05ab90 (schema 2) in one window
// on the loaded 2-CPU VM: BenchmarkCommitSerial at 8 k realistic records,
// 32 per commit, writes 3.29 pages per record instead of 6.13 (0.93
// instead of 1.77 without the engine's claims, postings and side writes:
// the ids key was the ledger's own random write), its thread runs 72
// instead of 120 µs of CPU per record (medians of three alternating runs;
// bare 25.5 instead of 40.6) and its serial section 48.7 instead of 87.0
// µs. Through Engine.Settle (fiscal's BenchmarkSettle, 2,000 settlements):
// 1.8–1.9 instead of 3.4–3.5 pages per record at 64 callers, 6.3 instead
// of 9.2 at 8, 21.0 instead of 26.3 at 1; the committer's thread 51–66
// instead of 73–93 µs of CPU per record at 64 callers; 234 instead of 260
// allocations per settlement. BenchmarkSettleScale (64 callers, the 2,000
// settlements after each size; two runs of each, alternating): at 1 k
// records 2.4–2.6 pages per record instead of 4.2, at 100 k 3.3–3.5
// instead of 6.9–7.3, so pages per record no longer double as the file
// grows; 2,152–2,325 instead of 2,319–2,493 file bytes per record at 100 k.
// Records per second on that VM moved with the disk another process
// shared (raw bbolt group commit, the disk's ceiling, 6.8–7.0 k/s at 64
// writers in the same window): at 100 k 2.6–6.1 k/s (four runs, median
// 4.1 k) instead of 1.6–2.7 k/s (median 2.0 k); at 1 k 2.6–7.0 k/s
// (median 2.8 k) instead of 1.9–4.4 k/s (median 3.1 k), so a 100 k log now
// appends about as fast as a 1 k one, where schema 2 lost a third or more.
// One run each to 1 M records (FISCAL402_BENCH_SCALE=1M): 4.1 instead of
// 8.9 pages per record at 1 M (2.2 and 3.7 at 1 k and 100 k, instead of
// 3.6 and 6.9; what still grows is the engine's postings and side keys,
// randomly keyed by account and record), 6.2 k instead of 2.6 k records/s
// at 1 M, 2,177 instead of 2,335 file bytes per record, and the whole
// scenario (1,006,000 settlements) in 325 s instead of 440 s.
// Filling a file with 1 M bare entries of two claims each by commits of
// 1,000 (BenchmarkOpenKeys) took 14–26 s instead of 69 s.
//
// Schema 1, 2 and 3 files keep working: opened read-only they are read as
// they are; opened for writing they are upgraded in place in one
// transaction that adds the new buckets (postlog empty), records v2from
// (schema 1: the size at the upgrade) and v3from (schemas 1 and 2: the
// size at the upgrade) and sets the schema; entries below v2from stay in leaves and docs, entries below
// v3from keep their keys in entries, ids and claims, and are read from
// there; new ones are blobs with keys records. A version before schema 3
// refuses an upgraded file by its schema instead of misreading it
// (verified with e05ab90: "has schema "fiscal402.ledger/3", this version
// reads …", for a writable and a read-only Open, and its Check); a schema-3
// version refuses a schema-4 file alike (it would miss the postings still
// in postlog), verified with 2e5c431.
// testdata/v2 is a schema-2 file that version wrote. A crash during the
// upgrade leaves the file as it was (one transaction).
//
// Caller-named buckets (postings indexes, claim spaces, side buckets) are
// nested under their own top-level bucket, so no caller name can collide
// with the ledger's buckets. A future incompatible layout gets a new schema
// string; Open refuses schemas it does not know, and refuses a file
// recorded with another origin ([ErrOriginMismatch]) or whose latest
// checkpoint was not signed by the configured key ([ErrLogKeyMismatch]).
//
// # Storage backends
//
// The bbolt file ([Open]) and a PostgreSQL schema ([OpenPostgres], pgx)
// sit behind an internal, batch-shaped store interface (store.go). Shared,
// whatever the store: batching and group commit, claim semantics, Hook,
// the right frontier and RFC 6962 hashing, checkpoint signing, the entry
// codec and its dictionaries, proofs (tlog over the store's stored
// hashes), verified reads and the log part of Check. Per store: one
// durable commit of a batch, reads of a consistent snapshot, side data,
// and the walk of Check. The tests that do not look at the file run on
// both through one table (eachBackend, pgtest.EachBackend).
//
// A commit is store.commit(keys, plan): the store opens a transaction, takes
// the log's sequencer lock, reads what the batch names (keys: its claims,
// entry IDs, posting keys, declared side reads and sequences), calls plan
// with a view of the committed data, and writes what plan returns: the
// blobs, stored hashes, claims, postings, side writes, sequence values, a
// dictionary, the new checkpoint and the new head (size and right
// frontier). plan does no I/O of its own. On PostgreSQL that is one
// transaction of two round trips, each a pgx pipeline: (1) BEGIN; SELECT …
// FROM log_head FOR UPDATE (the single sequencer: size, right frontier,
// newest checkpoint and dictionary, read under the row lock that every
// writer of the log queues on); the claims, IDs, postings (an AppendIndex
// posting as the range of its prefix from the size on), side keys and
// sequences of the batch (one SELECT … = ANY / IN unnest(…) each); then (2)
// INSERT … SELECT FROM unnest(…) of entries, hashes, claims and postings,
// upserts of side data and sequences, the dictionary and the checkpoint,
// UPDATE log_head, COMMIT. Stats.RoundTrips counts them. Only the Build
// form (whose IDs and postings are known after Build) and a dictionary cut
// read outside the loaded keys, one more round trip each. A COMMIT whose
// answer is lost is settled by reading the checkpoint of the batch's size
// at once: it is stored byte for byte exactly when the batch committed (a
// COMMIT the server is still working on then counts as failed: the appends
// are answered ErrUnavailable, and a retry under the same claims answers
// Existing). Connections
// use synchronous_commit=on: an acknowledged append survives the loss of
// the database server as its WAL does. A transaction that holds the
// sequencer (a commit, an update) may wait idle for its writer's next
// statement at most 5 s (SET LOCAL idle_in_transaction_session_timeout):
// a writer cut off from the database while it holds the lock (its host
// partitioned or powered down) would otherwise block every other writer
// until TCP keepalive gives up; the database ends its session and rolls
// the transaction back, which nobody was answered for. Every round trip
// (a connection's acquisition, a pipelined batch, a statement, waiting for
// the sequencer included) is bounded at 10 s, a read or update
// transaction at 1 minute in all: a database that stops answering is
// ErrUnavailable while a server can still answer its request.
//
// Several processes (server replicas) append to one PostgreSQL log at once.
// Each keeps its group commit; each commit continues from the head read
// under the lock and signs the checkpoint of the size it reaches, so the
// log stays one RFC 6962 log. What a process caches is refreshed: Size and
// Checkpoint read the head, a blob compressed with a dictionary another
// process cut loads that dictionary. Update transactions take the same row
// lock, so side-data read-modify-writes of all processes are serialized as
// bbolt's single writer serializes them. [Ledger.Lease] hands background
// work to one process at a time (a leases row, database time). At the
// first open the log records its origin, the log key's name and hash and
// Options.Keys; a process with other keys is refused (ErrLogKeyMismatch).
// Tables (ledger/pgschema, applied at open and recorded in
// schema_migrations): ledger_meta, log_head, entries (idx, unique id,
// blob), hashes, checkpoints, claims, postings, side, sequences, dicts,
// leases; every key bbolt keeps as bytes is bytea, so that key order is byte
// order. [CopyToPostgres] copies a bbolt file into an empty log and proves
// the copy; [Check] takes a postgres:// URL too.
//
// # Invariants
//
// [Check] (on a file) and [Ledger.Check] (on an open ledger, in one read
// transaction) re-verify the file and return a *[CheckError] for the first
// inconsistency. Check streams: one pass over the entries in index order
// with every bucket read front to back by one cursor (below v3from the ids
// index is looked up once per entry), decoding and hashing on GOMAXPROCS
// workers in chunks of 512 entries, so memory stays bounded whatever the
// size; the keys' uniqueness and the postings are checked alongside, on
// another goroutine and snapshot, also in bounded memory (below). In
// order:
//
//  1. bbolt's page structure and freelist (file Check only, as in Open);
//  2. every bucket exists; schema; origin equals the log key's name; size;
//     v2from; v3from (between v2from and the size);
//  3. in index order 0…size−1: the leaf (schema 1) or blob is there and
//     decodes to a non-empty leaf; its record hash and the interior hashes
//     it completes (computed from the right frontier) equal the stored
//     ones; below v3from the entry has an ID that the ids index maps back
//     to its index, from v3from on exactly one keys record, whose CRC-32C
//     and structure are sound; before leaf s, the checkpoint of size s if
//     one is stored: signed by
//     the log key, origin and size as stored, root equal to the frontier's
//     (so every checkpoint is consistent with every other one);
//  4. no leaf, blob, entry, keys record or stored hash beyond the size, no
//     keys record below v3from and no entries key at or above it;
//     checkpoints beyond the size are reported; the latest checkpoint has
//     the log size;
//  5. the ids index holds only the IDs of the entries below v3from; claims
//     (B-tree) point at indexes below v3from; schema-1 documents belong to
//     schema-1 entries; dictionaries and sequences parse;
//  6. entry IDs are unique and claim keys unique per space across the
//     legacy B-trees and the keys records; postings name existing entries;
//     every postlog record parses and names the entry at its index by that
//     entry's ID, beyond v3from and below the size, and is neither given
//     twice nor also in its index bucket; a schema-3 file has no postlog.
//
// Item 6 on a schema-3 file does not hold all keys in memory: their 64-bit
// hashes (maphash, a seed per Check) are split by hash into partitions of
// at most 512 Ki keys (4 MB); each pass walks the keys
// (the legacy B-trees and the keys records, without their CRC, which the
// stream verified) and keeps one partition, sorts it and looks for equal
// neighbours, which another walk confirms by comparing the keys
// themselves (two keys with one hash are otherwise a collision, not an
// error); the postings whose entry ID falls in the partition are looked
// up among its ID hashes by binary search (a posting naming a missing
// entry could pass only if that ID's 64-bit hash equalled another
// entry's). A 1 M-entry log of three keys per entry takes six passes:
// BenchmarkOpenKeys (bare entries, one ID and two claims each) checks 100 k
// entries at 1.0–1.4 M records/s with a peak heap of 7.5 MB (schema 2:
// 0.7–0.8 M/s, 4.3 MB; the stream no longer looks each ID up) and 1 M at
// 0.4–0.5 M records/s with 12 MB (schema 2, one run: 0.6 M/s, 4.6 MB), and
// BenchmarkCheckRate, realistic entries at 100 k,
// takes 8.7–8.9 µs of CPU per record for Ledger.Check and 10.1–10.7 µs
// for the file's Check (schema 2 in the same window: 9.9–10.5 and
// 10.7–13.3 µs), 205 k records/s at best on the loaded VM (wall time there
// moved by a factor of three between runs). On
// files before schema 3, postings are looked up in the ids index in
// batches of 4 Ki sorted by ID, which one cursor meets walking forward.
//
// Check decodes each entry's whole blob, so a document damaged on disk fails
// it by the blob's CRC-32C (0x03; zstd's frame checksum for 0x02) although
// the log does not cover documents. It verifies
// every checkpoint signature, one per commit: a log appended one entry per
// commit checks at the Ed25519 rate. Measured with realistic entries (64
// callers, about 31 entries per commit), warm, on the 2-CPU development VM:
// 220 k records/s at 100 k records and 153 k/s at 1 M (10–12 µs of CPU per
// record: SHA-256 of the leaf, its base64 re-encoding, decompression, the ID lookup,
// the amortized signature check), with at most 12 MB of heap. Looking the
// postings up in sorted batches took allocations from 9.4 to 0.4 per
// record and CPU per record down by 5–10 % (BenchmarkCheckRate at 100 k on
// a loaded VM: Ledger.Check 8.7 µs, file Check 10.7 µs; heap still at most
// 12 MB).
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
// its pages and would panic or fault on such a file. The walk reads the
// file through a read-only memory map with one bit of memory per page, and
// reads a leaf page that holds no nested bucket only as far as its element
// bounds (not the order of its keys, nor its values: bbolt meets those only
// when it reads the page, and every read and write recovers that into a
// *CorruptError); Check and FullCheck read every page. Then Open checks
// schema, origin and size, the latest checkpoint (signature by the
// configured key, size, root equal to the root of the stored right
// frontier) and the newest [OpenCheckLeaves] leaves with the hashes they
// completed: a few hundred values. Measured warm on the 2-CPU development
// VM with realistic entries: 46 ms at 100 k records (a 250 MB file) and
// 0.5 s at 1 M (2.0 GB), almost all of it the walk; schema 1 took 1.0 s at
// 100 k (1.36 GB). [Options].FullCheck runs [Check] instead: 0.6 s at
// 100 k, 6.4 s at 1 M. An empty existing file is refused too: bbolt would
// make a new log of it, which would contradict every checkpoint handed out;
// Open never leaves one.
//
// A file older than its journal's checkpoint is refused with a
// *[JournalMismatchError] (errors.Is [ErrJournalMismatch]), not as damage:
// another file was put in its place with the journal left beside it (a
// restored backup; a copy made by bbolt compact, which numbers its
// transactions anew). Its message says both remedies: move the journal
// files away to serve this file, or put back the file they belong to.
// Replaying that journal onto it would point its meta page at pages it
// lacks, so Open writes nothing.
//
// Once open, every read recovers a panic or memory fault inside bbolt (a
// page damaged after Open, a file truncated under the memory map) into a
// *CorruptError; a write that meets one fails its batch with it and stops
// all further writes of this Ledger. No panic of bbolt reaches a caller; a
// panic in caller code (a View or Update function) is re-raised, and one in
// Build or Hook fails its own append.
//
// Reads verify what the log covers: [Ledger.Entry] and [Ledger.EntryAt]
// check the leaf against its stored record hash SHA-256(0x00‖leaf) (one
// SHA-256) and stored checkpoints are served only with a valid signature
// (when the ledger has a verifier); a mismatch, or an entry that does not
// decode, is an *[IntegrityError] (errors.Is [ErrIntegrity]) naming the
// index, is counted in [Stats].IntegrityFailures, and the bytes are not
// returned. Documents are not covered by the log: the caller anchors them
// through its leaf (fiscal402's receipt carries the SHA-256 of the record
// and of the invoice) and reads them with [Ledger.DocVerified], which checks
// them against that digest. A leaf edited together with every hash above it
// is caught only by the signed checkpoints, which [Check] verifies.
//
// # Errors
//
// Callers branch with errors.Is / errors.As, never on message text:
// [ErrNotFound] (404), [ErrClosed], [ErrReadOnly], [ErrInvalid] (a malformed
// argument; a caller bug or a 400), [ErrDuplicate] (an entry ID or posting
// key already used), [ErrUnavailable] (locked file, failed write, fsync or
// signature: retry later; 503 DB_UNAVAILABLE; a *[HaltedError] among them
// when a failed sync stopped the ledger until an operator acts: see
// Durability), *[ClaimConflictError]
// (409 IDEMPOTENCY_CONFLICT when the claim is an Idempotency-Key),
// *[IntegrityError] and *[CorruptError] (500 LEDGER_INTEGRITY on a read;
// refuse to start on Open), *[JournalMismatchError] (refuse to start),
// [ErrOriginMismatch], [ErrLogKeyMismatch],
// [ErrBadCheckpoint] and *[CheckError]; a Build or Hook error is returned
// wrapped. An unavailable store is never reported as a claim conflict or as
// "not found".
//
// # Determinism
//
// The ledger reads no clock and no randomness: indexes come from the order of
// commits, checkpoints are deterministic Ed25519 signatures over text that
// depends only on the leaves, documents are written in sorted name order.
// Appending the same entries in the same batches with the same key yields a
// byte-identical log (leaves, hashes, checkpoints), whichever form appended
// them; the stored blobs may differ, since a caller compresses with the
// dictionary current when it prepares its entry. [GenerateLogKey] takes its
// randomness as an io.Reader.
//
// # Concurrency and processes
//
// All methods are safe for concurrent use. Reads run in bbolt read
// transactions (MVCC snapshots) alongside commits; they wait only while a
// commit grows the file's memory map, and, with the journal, until the
// state they see is durable (at most the journal's fdatasync in progress
// and the one after it: # Durability). One process owns a file: bbolt
// locks it, and Open waits at most [Options].OpenTimeout (default 2 s) before
// answering [ErrUnavailable]; bbolt would wait forever. Side-data [Ledger.Update]
// transactions share bbolt's single writer with the committer. On
// PostgreSQL reads are REPEATABLE READ snapshots and every writer of the
// log, in any process, queues on the log_head row lock (# Storage backends).
package ledger
