package ledger

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Schema versions, stored under meta/schema. A backwards-incompatible
// change of the bucket layout or of a value encoding gets a new version;
// Open refuses a file whose version it does not know rather than misreading
// it. Schema 1 stored leaves and documents in buckets of their own; schema 2
// stores both in one compressed blob per entry (# Storage layout). Opening a
// schema-1 file for writing upgrades it in place in one transaction: the new
// buckets are created and meta/v2from records the size at the upgrade;
// entries below it stay where schema 1 put them and are read from there.
// Schema 3 keeps an entry's ID and claims in one sequential keys record
// instead of the randomly keyed ids and claims B-trees; upgrading a schema-2
// (or schema-1) file creates the keys bucket and records meta/v3from, and
// the entries below it keep their B-tree keys. schemaPostgres is what a
// PostgreSQL log records: its tables did not change with schema 3.
// Schema 4 adds the posting log (postlog.go): postings not yet moved into
// their index buckets. A schema-3 reader would miss them, so the version
// changes; upgrading a schema-3 (or older) file for writing creates the
// bucket, and nothing else moves.
const (
	schemaV1       = "fiscal402.ledger/1"
	schemaV2       = "fiscal402.ledger/2"
	schemaV3       = "fiscal402.ledger/3"
	schemaVersion  = "fiscal402.ledger/4"
	schemaPostgres = schemaV2
)

// hasKeysRecords reports whether a schema keeps IDs and claims in keys
// records (schema 3 on).
func hasKeysRecords(schema string) bool { return schema == schemaV3 || schema == schemaVersion }

// schemaBuckets returns the buckets a file of schema has; false for a
// schema this version does not read.
func schemaBuckets(schema string) ([][]byte, bool) {
	switch schema {
	case schemaV1:
		return schema1Buckets, true
	case schemaV2:
		return schema2Buckets, true
	case schemaV3:
		return schema3Buckets, true
	case schemaVersion:
		return ownBuckets, true
	}
	return nil, false
}

// Top-level buckets. The layout is documented in doc.go (# Storage layout);
// every numeric key is 8-byte big-endian so that byte order is numeric order.
var (
	bucketMeta        = []byte("meta")        // schema, origin, size, v2from
	bucketLeaves      = []byte("leaves")      // schema 1: index → leaf bytes
	bucketHashes      = []byte("hashes")      // tlog stored-hash index → 32-byte hash
	bucketCheckpoints = []byte("checkpoints") // tree size → signed note
	bucketEntries     = []byte("entries")     // index → entry ID
	bucketIDs         = []byte("ids")         // entry ID → index
	bucketDocs        = []byte("docs")        // schema 1: index ‖ doc name → document
	bucketClaims      = []byte("claims")      // sub-bucket per space: key → index ‖ fingerprint
	bucketPostings    = []byte("postings")    // sub-bucket per index name: key → entry ID
	bucketSide        = []byte("side")        // sub-bucket per caller bucket: key → value
	bucketBlobs       = []byte("blobs")       // schema 2: index → entry blob
	bucketDicts       = []byte("dicts")       // schema 2: dictionary id → cut size ‖ content
	bucketSequences   = []byte("sequences")   // schema 2: sequence name → last number
	bucketKeys        = []byte("keys")        // schema 3: index → keys record (ID, claims)
	bucketPostLog     = []byte("postlog")     // schema 4: index ‖ ordinal → posting not yet in its index bucket
)

// schema1Buckets are the buckets of schema 1; schema 2 adds v2Buckets,
// schema 3 v3Buckets, schema 4 v4Buckets.
var (
	schema1Buckets = [][]byte{
		bucketMeta, bucketLeaves, bucketHashes, bucketCheckpoints, bucketEntries,
		bucketIDs, bucketDocs, bucketClaims, bucketPostings, bucketSide,
	}
	v2Buckets      = [][]byte{bucketBlobs, bucketDicts, bucketSequences}
	v3Buckets      = [][]byte{bucketKeys}
	v4Buckets      = [][]byte{bucketPostLog}
	schema2Buckets = append(append([][]byte{}, schema1Buckets...), v2Buckets...)
	schema3Buckets = append(append([][]byte{}, schema2Buckets...), v3Buckets...)
	ownBuckets     = append(append([][]byte{}, schema3Buckets...), v4Buckets...)
)

// Keys of the meta bucket.
var (
	metaSchema = []byte("schema")
	metaOrigin = []byte("origin")
	metaSize   = []byte("size")
	metaV2From = []byte("v2from") // first index stored as a blob
	metaV3From = []byte("v3from") // first index whose ID and claims are a keys record
)

// Size limits that bbolt enforces on Put; checked before anything of an
// append is written so that a write inside the batch transaction cannot fail
// on input (go.etcd.io/bbolt MaxKeySize, MaxValueSize).
const (
	maxKeySize   = bolt.MaxKeySize
	maxValueSize = bolt.MaxValueSize
	docKeyPrefix = 8 // schema-1 docs keys are index ‖ name
)

// u64 encodes n as an 8-byte big-endian key.
func u64(n int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	return b[:]
}

// parseU64 decodes an 8-byte big-endian key or value; it fails on any other
// length and on values that do not fit an int64.
func parseU64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("want 8 bytes, have %d", len(b))
	}
	n := binary.BigEndian.Uint64(b)
	if n > 1<<63-1 {
		return 0, fmt.Errorf("value %d overflows int64", n)
	}
	return int64(n), nil
}

// docKey is the schema-1 docs key of document name of the entry at index.
func docKey(index int64, name string) []byte {
	k := make([]byte, 0, docKeyPrefix+len(name))
	k = append(k, u64(index)...)
	return append(k, name...)
}

// claimValue encodes a claim holder: its index, then the fingerprint.
func claimValue(index int64, fingerprint []byte) []byte {
	return appendClaimValue(make([]byte, 0, 8+len(fingerprint)), index, fingerprint)
}

// appendClaimValue appends claimValue(index, fingerprint) to b.
func appendClaimValue(b []byte, index int64, fingerprint []byte) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(index)), fingerprint...)
}

// parseClaimValue is the inverse of claimValue.
func parseClaimValue(v []byte) (index int64, fingerprint []byte, err error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("claim value of %d bytes, want at least 8", len(v))
	}
	index, err = parseU64(v[:8])
	return index, v[8:], err
}

// dictValue encodes a stored dictionary: the log size it was cut at, then
// its content.
func dictValue(cutAt int64, content []byte) []byte {
	return append(u64(cutAt), content...)
}

// clone copies b, keeping nil as nil: bbolt's slices are only valid while
// their transaction is open.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
