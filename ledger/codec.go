package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/mod/sumdb/tlog"
)

// Entry encoding (schema 2). An entry's leaf and documents are stored as
// one value, its blob. Blobs are written in form 0x03; form 0x02, which
// earlier versions wrote, is still read:
//
//	blob     = 0x03 ‖ uvarint dict ‖ uvarint len(leafBody) ‖ part(block) ‖ crc(body) ‖ patches
//	         | 0x02 ‖ uvarint dict ‖ frame(leafBody) ‖ frame(docsBody) ‖ patchList
//	body     = leafBody ‖ docsBody
//	block    = S2 block of body (github.com/klauspost/compress/s2)
//	crc(b)   = CRC-32C (Castagnoli) of b, 4 bytes big-endian
//	frame(b) = uvarint len ‖ zstd frame of b (len 0: b is empty)
//	leafBody = 0x00 ‖ leaf                                  (any leaf)
//	         | 0x01 ‖ part(header) ‖ part(payload) ‖ signature (a compact JWS)
//	part(b)  = uvarint len(b) ‖ b
//	docsBody = ε (no documents) | uvarint n ‖ n × (part(name) ‖ part(document)), names sorted
//	patches  = 0x00 | patchList ‖ crc(patchList)            (n > 0)
//	patchList = uvarint n ‖ n × (uvarint doc ‖ uvarint offset ‖ part(bytes))
//
// dict names the dictionary the body was compressed with (0: none), stored
// in the dicts bucket: for 0x03 an S2 dictionary of its content with repeat
// offset 0 (s2.MakeDict(content, nil)), for 0x02 a zstd raw-content
// dictionary (RFC 8878 §5) whose id the frames' headers carry. A leaf that
// is a compact JWS (RFC 7515 §7.1: three canonical unpadded base64url parts)
// is stored with its parts decoded, so that the JSON payload compresses with
// the record it describes; it is re-encoded on reading, and only when
// encoding it again gives the same bytes is the form used at all. Every read
// verifies the re-built leaf against its stored record hash, so a codec
// fault can only fail a read, never change a leaf; the checksums (0x03's
// CRC-32C, 0x02's zstd frame checksums) make a damaged document fail its
// read, although the log does not cover it. A 0x03 blob decodes whole (one
// block: the documents match the leaf's payload, and S2 decodes ~10 KB in
// under a microsecond) and its body's checksum is verified by every read,
// Check's included. Patches are byte splices made in the committer
// (Hook.Splice) after the documents were compressed in the caller's
// goroutine: doc is the document's position in name order.
//
// 0x03 replaced 0x02 because zstd cost each caller 39 µs of CPU per
// realistic entry (BenchmarkEncode; 10.6 µs now), a third of its
// compression time in resetting the encoder to the dictionary (a 256 KB
// hash table and the history copied for every frame, two frames per blob)
// and most of the rest in entropy tables; S2 has neither, at the price of
// larger blobs for random bytes (doc.go gives the numbers).
const (
	blobFormat   = 0x03
	blobFormatV2 = 0x02
)

// maxEntryBytes bounds an entry's leaf and documents together (uncompressed)
// and so what a decoder allocates for one.
const maxEntryBytes = 64 << 20

// MaxEntryBytes is the most an entry's leaf and documents take together
// (uncompressed): no document read from the ledger is larger.
const MaxEntryBytes = maxEntryBytes

const (
	leafRaw = 0x00
	leafJWS = 0x01
)

// Dictionaries: a dictionary is the raw bodies (leaf and documents) of the
// dictEntries newest entries when it is cut, at most dictMaxBytes. A new
// dictionary is cut when the log reaches the next of dictCuts (then every
// dictEvery entries), so that compression follows the shape of the entries
// a log holds as it changes.
const (
	dictEntries  = 4
	dictMaxBytes = 64 << 10
	dictEvery    = 1 << 16
)

var dictCuts = []int64{16, 256, 4096, 1 << 16}

// nextDictCut is the log size at which the dictionary after one cut at
// size last (0: none yet) is due.
func nextDictCut(last int64) int64 {
	for _, c := range dictCuts {
		if c > last {
			return c
		}
	}
	return (last/dictEvery + 1) * dictEvery
}

// codec compresses and decompresses entry blobs with the log's
// dictionaries. It is safe for concurrent use: callers encode in their own
// goroutines with the newest dictionary, and a new dictionary is added only
// after the commit that stored it.
type codec struct {
	mu    sync.Mutex        // serializes addDict and ensure
	dicts map[uint32][]byte // guarded by mu
	enc   atomic.Pointer[encoder]
	dec   atomic.Pointer[decoders]
	// load, set for a shared store, reads a stored dictionary this codec
	// does not know yet (another writer of the log cut it).
	load func(id uint32) ([]byte, error)

	// The compressor goroutines (compress) take jobs until stop closes.
	startOnce, stopOnce sync.Once
	jobs                chan *compressJob
	stop                chan struct{}
	// jobPool reuses jobs and their channels. It is the codec's, not
	// the package's: a channel belongs to the goroutines of the Ledger
	// that made it (a package pool handed a channel made inside one
	// testing/synctest bubble to a compressor outside it, a fatal error).
	jobPool sync.Pool
}

// encoder is the dictionary new blobs are compressed with.
type encoder struct {
	dict uint32
	s2   *s2.Dict // nil: none (dict 0)
}

// decoders know every dictionary of the codec (immutable once published).
type decoders struct {
	s2   map[uint32]*s2.Dict
	zstd *zstd.Decoder // for 0x02 blobs
}

// s2Dict is the S2 dictionary of a stored dictionary's content, nil for a
// content S2 cannot use (under 16 bytes: a log of tiny entries).
func s2Dict(content []byte) *s2.Dict {
	if len(content) < s2.MinDictSize || len(content) > s2.MaxDictSize {
		return nil
	}
	return s2.MakeDict(content, nil)
}

// newCodec builds a codec from the stored dictionaries (id → cut size and
// content).
func newCodec(dicts map[uint32]storedDict) (*codec, error) {
	c := &codec{dicts: map[uint32][]byte{}, jobs: make(chan *compressJob), stop: make(chan struct{})}
	var newest uint32
	for id, d := range dicts {
		c.dicts[id] = d.content
		if id > newest {
			newest = id
		}
	}
	if err := c.publish(newest); err != nil {
		return nil, err
	}
	return c, nil
}

// storedDict is a dictionary as stored: the log size it was cut at and
// its content.
type storedDict struct {
	cutAt   int64
	content []byte
}

// publish makes new decoders knowing every dictionary, then an encoder
// using dictionary id: a blob made with a dictionary can always be read.
// The zstd decoder reads blobs of form 0x02 (zstd raw-content
// dictionaries, RFC 8878 §5).
func (c *codec) publish(id uint32) error {
	dopts := []zstd.DOption{
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(maxEntryBytes + 1<<20),
	}
	d := &decoders{s2: make(map[uint32]*s2.Dict, len(c.dicts))}
	var old *decoders
	if old = c.dec.Load(); old != nil {
		for did, sd := range old.s2 {
			d.s2[did] = sd
		}
	}
	for did, content := range c.dicts {
		dopts = append(dopts, zstd.WithDecoderDictRaw(did, content))
		if _, ok := d.s2[did]; !ok {
			if sd := s2Dict(content); sd != nil {
				d.s2[did] = sd
			}
		}
	}
	var err error
	if d.zstd, err = zstd.NewReader(nil, dopts...); err != nil {
		return err
	}
	c.dec.Store(d)
	if old != nil {
		old.zstd.Close() // DecodeAll calls in flight keep their own state
	}
	e := &encoder{}
	if sd := d.s2[id]; sd != nil {
		e.dict, e.s2 = id, sd
	}
	c.enc.Store(e)
	return nil
}

// addDict adds a dictionary stored by a committed batch and makes it the
// one new entries are compressed with.
func (c *codec) addDict(id uint32, content []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dicts[id] = content
	return c.publish(id)
}

func (c *codec) close() {
	if d := c.dec.Load(); d != nil {
		d.zstd.Close()
	}
	c.stopOnce.Do(func() { close(c.stop) })
}

// compress returns the S2 block of body, made with sd (nil: none) in dst
// (used if large enough). A block with a dictionary is made by one of the
// codec's compressor goroutines (one per GOMAXPROCS, started at the first
// such block, stopped by close; once stopped, by the caller).
//
// Why: S2's dictionary encoder (pure Go: the package's assembly covers
// only blocks without one) keeps a 64 KB hash table on its stack, so each
// caller's stack grew to 128 KB for it and the collector shrank it back
// between two of the caller's settlements: through Engine.Settle at 64
// callers nearly every settlement paid for both stack copies (15 µs of
// CPU in the profile, and the table cleared on a cold stack). Handing the
// block to a compressor, whose stack grows once and whose table stays in
// its cache, took ~40 µs of process CPU off each settlement at 64 callers
// (fiscal's BenchmarkSettle, medians of three alternated runs). The
// price is the wake-up of a parked compressor when blocks come one at a
// time: BenchmarkEncode, one caller encoding in a loop, takes 27 µs of
// CPU per entry where it took 13.5; at one Engine.Settle caller (2.3 ms
// of CPU per settlement, most of it the commit's) the difference is
// below the noise. S2 without a dictionary takes its table from a pool
// and runs in the caller.
func (c *codec) compress(sd *s2.Dict, dst, body []byte) []byte {
	if sd == nil {
		return s2.Encode(dst, body)
	}
	c.startOnce.Do(c.startCompressors)
	j, _ := c.jobPool.Get().(*compressJob)
	if j == nil {
		j = &compressJob{done: make(chan struct{}, 1)}
	}
	j.sd, j.dst, j.body = sd, dst, body
	select {
	case c.jobs <- j:
		<-j.done
	case <-c.stop:
		j.dst = sd.Encode(dst, body)
	}
	block := j.dst
	j.sd, j.dst, j.body = nil, nil, nil
	c.jobPool.Put(j)
	return block
}

// compressJob is a block for a compressor to make; done says it is made
// (a job and its channel are reused: codec.jobPool).
type compressJob struct {
	sd        *s2.Dict
	dst, body []byte
	done      chan struct{}
}

func (c *codec) startCompressors() {
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for {
				select {
				case j := <-c.jobs:
					j.dst = j.sd.Encode(j.dst, j.body)
					j.done <- struct{}{}
				case <-c.stop:
					return
				}
			}
		}()
	}
}

// encodedEntry is an entry's blob. The raw body it was made of is not
// kept: a dictionary cut, rare, takes it back from the blob (rawBody).
type encodedEntry struct {
	blob []byte
}

// scratch buffers for the compressed block (and the JWS check), which do
// not outlive encode: the blob is made at its exact size. Buffers above
// maxScratch (large entries) are left to the collector.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 256 << 10

// crc32c is the checksum of 0x03 blobs (hardware-accelerated on amd64 and
// arm64).
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// encode builds the blob of a leaf and its documents with the newest
// dictionary. Its allocation: the blob (the raw body and the compressed
// block are made in pooled scratch buffers; the sorted document names, the
// doc numbers of patches, are not kept).
func (c *codec) encode(leaf []byte, docs map[string][]byte) encodedEntry {
	e := c.enc.Load()
	var x encodedEntry
	var small [8]string // the sorted names, on the stack for a few documents
	names := small[:0]
	n := 1 + 2*binary.MaxVarintLen64 + len(leaf) // either leaf body form
	if len(docs) > 0 {
		n += binary.MaxVarintLen64
	}
	for name, doc := range docs {
		names = append(names, name)
		n += 2*binary.MaxVarintLen64 + len(name) + len(doc)
	}
	slices.Sort(names)
	sp, bp := scratchPool.Get().(*[]byte), scratchPool.Get().(*[]byte)
	body, k := appendRawBody(slices.Grow((*bp)[:0], n), leaf, names, docs, sp)
	block := c.compress(e.s2, (*sp)[:cap(*sp)], body)
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(block)+4+1)
	b = append(b, blobFormat)
	b = binary.AppendUvarint(b, uint64(e.dict))
	b = binary.AppendUvarint(b, uint64(k))
	b = appendPart(b, block)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(body, crc32c))
	x.blob = append(b, 0) // no patches
	if cap(block) <= maxScratch {
		*sp = block[:0]
		scratchPool.Put(sp)
	}
	if cap(body) <= maxScratch {
		*bp = body[:0]
		scratchPool.Put(bp)
	}
	return x
}

// appendRawBody appends the raw body of a leaf and its documents (names
// sorted) to dst and returns it with the length of its leaf part; sp is a
// scratch buffer for the leaf form.
func appendRawBody(dst, leaf []byte, names []string, docs map[string][]byte, sp *[]byte) ([]byte, int) {
	body := dst
	body, *sp = appendLeafBody(body, leaf, *sp)
	k := len(body) - len(dst)
	if len(docs) > 0 {
		body = binary.AppendUvarint(body, uint64(len(docs)))
		for _, name := range names {
			body = appendPart(body, []byte(name))
			body = appendPart(body, docs[name])
		}
	}
	return body, k
}

func appendPart(b, part []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(part)))
	return append(b, part...)
}

// withPatches returns blob with its patch list replaced by ps.
func withPatches(blob []byte, ps []patch) ([]byte, error) {
	pb, err := parseBlob(blob)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, blob[:len(blob)-len(pb.patches)]...)
	at := len(out)
	out = binary.AppendUvarint(out, uint64(len(ps)))
	for _, p := range ps {
		out = binary.AppendUvarint(out, uint64(p.doc))
		out = binary.AppendUvarint(out, uint64(p.offset))
		out = appendPart(out, p.data)
	}
	if pb.format == blobFormat && len(ps) > 0 {
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(out[at:], crc32c))
	}
	return out, nil
}

// patch is a byte splice into a document: data replaces
// doc[offset:offset+len(data)].
type patch struct {
	doc    int
	offset int
	data   []byte
}

// appendLeafBody appends the leaf body of a leaf, decoding a canonical
// compact JWS: each part is decoded into b and encoded again, into scratch
// (returned for reuse), to check it gives its part of the leaf back.
func appendLeafBody(b, leaf, scratch []byte) (_, _ []byte) {
	start := len(b)
	raw := func() ([]byte, []byte) { return append(append(b[:start], leafRaw), leaf...), scratch }
	rest, jws := append(b, leafJWS), leaf
	for i := range 3 {
		seg := jws
		if i < 2 {
			j := bytes.IndexByte(jws, '.')
			if j < 0 {
				return raw()
			}
			seg, jws = jws[:j], jws[j+1:]
		} else if bytes.IndexByte(jws, '.') >= 0 {
			return raw()
		}
		n := strictB64.DecodedLen(len(seg))
		if i < 2 {
			rest = binary.AppendUvarint(rest, uint64(n))
		}
		at := len(rest)
		rest = slices.Grow(rest, n)[:at+n]
		m, err := strictB64.Decode(rest[at:], seg)
		if err != nil || m != n {
			return raw() // not unpadded base64url
		}
		if scratch = strictB64.AppendEncode(scratch[:0], rest[at:]); !bytes.Equal(scratch, seg) {
			return raw() // not canonical (line breaks, which decoding skips)
		}
	}
	return rest, scratch
}

// strictB64 is unpadded base64url that rejects non-zero trailing bits, so
// that decoding and encoding again give the same text.
var strictB64 = base64.RawURLEncoding.Strict()

// leafJWSBytes is the compact serialization of decoded JWS parts.
func leafJWSBytes(parts [3][]byte) []byte {
	n := strictB64.EncodedLen(len(parts[0])) + strictB64.EncodedLen(len(parts[1])) + strictB64.EncodedLen(len(parts[2])) + 2
	b := make([]byte, 0, n)
	b = strictB64.AppendEncode(b, parts[0])
	b = append(b, '.')
	b = strictB64.AppendEncode(b, parts[1])
	b = append(b, '.')
	return strictB64.AppendEncode(b, parts[2])
}

// parsedBlob is a blob split into its parts (slices of the blob).
type parsedBlob struct {
	format byte
	dict   uint32
	// 0x03
	leafLen int
	block   []byte
	sum     uint32
	// 0x02
	leafFrame, docsFrame []byte
	// the patch list (0x03: with its checksum if it is not empty)
	patches []byte
}

var errBlob = errors.New("malformed entry blob")

func parseBlob(blob []byte) (parsedBlob, error) {
	var p parsedBlob
	if len(blob) < 1 || blob[0] != blobFormat && blob[0] != blobFormatV2 {
		return p, fmt.Errorf("%w: format byte", errBlob)
	}
	p.format = blob[0]
	r := blob[1:]
	d, n := binary.Uvarint(r)
	if n <= 0 || d > 1<<32-1 {
		return p, fmt.Errorf("%w: dictionary", errBlob)
	}
	p.dict, r = uint32(d), r[n:]
	var ok bool
	if p.format == blobFormatV2 {
		if p.leafFrame, r, ok = cutPart(r); !ok {
			return p, fmt.Errorf("%w: leaf frame", errBlob)
		}
		if p.docsFrame, r, ok = cutPart(r); !ok {
			return p, fmt.Errorf("%w: documents frame", errBlob)
		}
		p.patches = r
		return p, nil
	}
	k, n := binary.Uvarint(r)
	if n <= 0 || k > maxEntryBytes {
		return p, fmt.Errorf("%w: leaf body length", errBlob)
	}
	p.leafLen, r = int(k), r[n:]
	if p.block, r, ok = cutPart(r); !ok || len(r) < 4 {
		return p, fmt.Errorf("%w: block", errBlob)
	}
	p.sum, p.patches = binary.BigEndian.Uint32(r), r[4:]
	return p, nil
}

// cutPart splits a length-prefixed part off b.
func cutPart(b []byte) (part, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// body decompresses the body of a 0x03 blob into dst (reused if large
// enough) and verifies its checksum: the whole body or an error.
func (c *codec) body(p parsedBlob, dst []byte) ([]byte, error) {
	n, err := s2.DecodedLen(p.block)
	if err != nil {
		return nil, fmt.Errorf("%w: block: %v", errBlob, err)
	}
	if n > maxEntryBytes || p.leafLen > n {
		return nil, fmt.Errorf("%w: body of %d bytes, leaf body of %d", errBlob, n, p.leafLen)
	}
	var sd *s2.Dict
	if p.dict != 0 {
		if sd = c.dec.Load().s2[p.dict]; sd == nil && c.load != nil {
			if err := c.ensure(p.dict); err != nil {
				return nil, err
			}
			sd = c.dec.Load().s2[p.dict]
		}
		if sd == nil {
			return nil, fmt.Errorf("%w: unknown dictionary %d", errBlob, p.dict)
		}
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	var body []byte
	if sd != nil {
		body, err = sd.Decode(dst[:n], p.block)
	} else {
		body, err = s2.Decode(dst[:n], p.block)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: block: %v", errBlob, err)
	}
	if crc32.Checksum(body, crc32c) != p.sum {
		return nil, fmt.Errorf("%w: body checksum", errBlob)
	}
	return body, nil
}

// frame decompresses a zstd frame of a 0x02 blob into dst.
func (c *codec) frame(f []byte, dict uint32, dst []byte) ([]byte, error) {
	if len(f) == 0 {
		return dst[:0], nil
	}
	if dict != 0 {
		// zstd names the dictionary in the frame header; check it is the
		// one the blob names, which the decoder must know.
		var h zstd.Header
		if err := h.Decode(f); err != nil || h.DictionaryID != dict {
			return nil, fmt.Errorf("%w: frame dictionary %d, blob says %d", errBlob, h.DictionaryID, dict)
		}
	}
	out, err := c.dec.Load().zstd.DecodeAll(f, dst[:0])
	if err != nil && dict != 0 && c.load != nil {
		if lerr := c.ensure(dict); lerr != nil {
			return nil, lerr
		}
		return c.dec.Load().zstd.DecodeAll(f, dst[:0])
	}
	return out, err
}

// ensure loads dictionary id from the store if this codec does not know
// it, and keeps compressing with the newest one it knows.
func (c *codec) ensure(id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.dicts[id]; ok {
		return nil
	}
	content, err := c.load(id)
	if err != nil {
		return err
	}
	c.dicts[id] = content
	return c.publish(max(id, c.enc.Load().dict))
}

// leafBodyOf returns the leaf body of a blob (dst is reused for it if
// large enough).
func (c *codec) leafBodyOf(blob, dst []byte) ([]byte, error) {
	p, err := parseBlob(blob)
	if err != nil {
		return nil, err
	}
	if p.format == blobFormatV2 {
		return c.frame(p.leafFrame, p.dict, dst)
	}
	body, err := c.body(p, dst)
	if err != nil {
		return nil, err
	}
	return body[:p.leafLen], nil
}

// decodeLeaf returns the leaf stored in a blob.
func (c *codec) decodeLeaf(blob []byte) ([]byte, error) {
	body, err := c.leafBodyOf(blob, nil)
	if err != nil {
		return nil, err
	}
	return decodeLeafBody(body)
}

// leafHasher computes the record hash of stored leaves with reused
// buffers (Check hashes every leaf of the log).
type leafHasher struct {
	frame, leaf []byte
}

// recordHash returns SHA-256(0x00‖leaf) (RFC 6962 §2.1) of the leaf stored
// in a blob. For a 0x03 blob it decodes and checksums the documents too.
func (c *codec) recordHash(h *leafHasher, blob []byte) (tlog.Hash, error) {
	body, err := c.leafBodyOf(blob, h.frame)
	if err != nil {
		return tlog.Hash{}, err
	}
	h.frame = body
	h.leaf = append(h.leaf[:0], 0x00)
	switch {
	case len(body) == 0:
		return tlog.Hash{}, fmt.Errorf("%w: empty leaf body", errBlob)
	case body[0] == leafRaw:
		h.leaf = append(h.leaf, body[1:]...)
	case body[0] == leafJWS:
		var parts [3][]byte
		var ok bool
		r := body[1:]
		if parts[0], r, ok = cutPart(r); !ok {
			return tlog.Hash{}, fmt.Errorf("%w: JWS header", errBlob)
		}
		if parts[1], r, ok = cutPart(r); !ok {
			return tlog.Hash{}, fmt.Errorf("%w: JWS payload", errBlob)
		}
		h.leaf = strictB64.AppendEncode(h.leaf, parts[0])
		h.leaf = append(h.leaf, '.')
		h.leaf = strictB64.AppendEncode(h.leaf, parts[1])
		h.leaf = append(h.leaf, '.')
		h.leaf = strictB64.AppendEncode(h.leaf, r)
	default:
		return tlog.Hash{}, fmt.Errorf("%w: leaf form %#x", errBlob, body[0])
	}
	if len(h.leaf) == 1 {
		return tlog.Hash{}, fmt.Errorf("%w: empty leaf", errBlob)
	}
	return sha256.Sum256(h.leaf), nil
}

// decodeLeafBody is the inverse of leafBody.
func decodeLeafBody(body []byte) ([]byte, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: empty leaf body", errBlob)
	}
	switch body[0] {
	case leafRaw:
		return body[1:], nil
	case leafJWS:
		var parts [3][]byte
		var ok bool
		r := body[1:]
		if parts[0], r, ok = cutPart(r); !ok {
			return nil, fmt.Errorf("%w: JWS header", errBlob)
		}
		if parts[1], r, ok = cutPart(r); !ok {
			return nil, fmt.Errorf("%w: JWS payload", errBlob)
		}
		parts[2] = r
		return leafJWSBytes(parts), nil
	}
	return nil, fmt.Errorf("%w: leaf form %#x", errBlob, body[0])
}

// decodeEntry is decodeLeaf and decodeDocs of one blob with its body
// decoded once (a 0x02 blob keeps the two in frames of their own, each
// decoded once anyway): leafErr is what decodeLeaf returns, docsErr what
// decodeDocs returns when the leaf decoded. The documents are slices of
// the body, which the caller owns.
func (c *codec) decodeEntry(blob []byte) (leaf []byte, docs []namedDoc, leafErr, docsErr error) {
	p, err := parseBlob(blob)
	if err != nil || p.format == blobFormatV2 {
		if leaf, leafErr = c.decodeLeaf(blob); leafErr == nil {
			docs, docsErr = c.decodeDocs(blob)
		}
		return leaf, docs, leafErr, docsErr
	}
	body, err := c.body(p, nil)
	if err != nil {
		return nil, nil, err, nil
	}
	if leaf, leafErr = decodeLeafBody(body[:p.leafLen]); leafErr != nil {
		return nil, nil, leafErr, nil
	}
	if docs, docsErr = parseDocsBody(body[p.leafLen:]); docsErr == nil {
		docsErr = applyPatches(docs, p)
	}
	return leaf, docs, nil, docsErr
}

// namedDoc is one decoded document.
type namedDoc struct {
	name string
	doc  []byte
}

// decodeDocs returns the documents stored in a blob, in name order, with
// its patches applied.
func (c *codec) decodeDocs(blob []byte) ([]namedDoc, error) {
	p, err := parseBlob(blob)
	if err != nil {
		return nil, err
	}
	var body []byte
	if p.format == blobFormatV2 {
		body, err = c.frame(p.docsFrame, p.dict, nil)
	} else if body, err = c.body(p, nil); err == nil {
		body = body[p.leafLen:]
	}
	if err != nil {
		return nil, err
	}
	docs, err := parseDocsBody(body)
	if err != nil {
		return nil, err
	}
	return docs, applyPatches(docs, p)
}

// parseDocsBody splits a documents body; the documents are slices of body.
func parseDocsBody(body []byte) ([]namedDoc, error) {
	if len(body) == 0 {
		return nil, nil
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)) {
		return nil, fmt.Errorf("%w: document count", errBlob)
	}
	r := body[k:]
	docs := make([]namedDoc, 0, n)
	for range n {
		name, rest, ok := cutPart(r)
		if !ok {
			return nil, fmt.Errorf("%w: document name", errBlob)
		}
		doc, rest, ok := cutPart(rest)
		if !ok {
			return nil, fmt.Errorf("%w: document %q", errBlob, name)
		}
		docs = append(docs, namedDoc{string(name), doc})
		r = rest
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the documents", errBlob, len(r))
	}
	return docs, nil
}

// applyPatches splices the patches of a blob into docs (whose bytes the
// caller owns).
func applyPatches(docs []namedDoc, p parsedBlob) error {
	b := p.patches
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return fmt.Errorf("%w: patch count", errBlob)
	}
	if p.format == blobFormat && n > 0 {
		if len(b) < k+4 || crc32.Checksum(b[:len(b)-4], crc32c) != binary.BigEndian.Uint32(b[len(b)-4:]) {
			return fmt.Errorf("%w: patch checksum", errBlob)
		}
		b = b[:len(b)-4]
	}
	b = b[k:]
	for range n {
		d, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return fmt.Errorf("%w: patch", errBlob)
		}
		off, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 {
			return fmt.Errorf("%w: patch", errBlob)
		}
		data, rest, ok := cutPart(b[k1+k2:])
		if !ok || d >= uint64(len(docs)) || off > uint64(len(docs[d].doc)) || uint64(len(data)) > uint64(len(docs[d].doc))-off {
			return fmt.Errorf("%w: patch outside its document", errBlob)
		}
		copy(docs[d].doc[off:], data)
		b = rest
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes after the patches", errBlob, len(b))
	}
	return nil
}

// rawBody is the uncompressed content of a blob (leaf body then documents
// body), the unit dictionaries are made of.
func (c *codec) rawBody(blob []byte) ([]byte, error) {
	p, err := parseBlob(blob)
	if err != nil {
		return nil, err
	}
	if p.format == blobFormat {
		return c.body(p, nil)
	}
	lb, err := c.frame(p.leafFrame, p.dict, nil)
	if err != nil {
		return nil, err
	}
	db, err := c.frame(p.docsFrame, p.dict, nil)
	if err != nil {
		return nil, err
	}
	return append(lb, db...), nil
}

// makeDict concatenates raw bodies, newest last, keeping the newest
// dictMaxBytes (zstd uses the end of a raw dictionary as the nearest history).
func makeDict(bodies [][]byte) []byte {
	var d []byte
	for _, b := range bodies {
		d = append(d, b...)
	}
	if len(d) > dictMaxBytes {
		d = d[len(d)-dictMaxBytes:]
	}
	return d
}
