package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/mod/sumdb/tlog"
)

// Entry encoding (schema 2). An entry's leaf and documents are stored as
// one value, its blob:
//
//	blob     = 0x02 ‖ uvarint dict ‖ frame(leafBody) ‖ frame(docsBody) ‖ patches
//	frame(b) = uvarint len ‖ zstd frame of b (len 0: b is empty)
//	leafBody = 0x00 ‖ leaf                                  (any leaf)
//	         | 0x01 ‖ part(header) ‖ part(payload) ‖ signature (a compact JWS)
//	part(b)  = uvarint len(b) ‖ b
//	docsBody = uvarint n ‖ n × (part(name) ‖ part(document)), names sorted
//	patches  = uvarint n ‖ n × (uvarint doc ‖ uvarint offset ‖ part(bytes))
//
// dict names the zstd raw-content dictionary both frames were compressed
// with (RFC 8878 §5; 0: none), stored in the dicts bucket. A leaf that is a
// compact JWS (RFC 7515 §7.1: three canonical unpadded base64url parts) is
// stored with its parts decoded, so that the JSON payload compresses with the
// record it describes; it is re-encoded on reading, and only when encoding
// it again gives the same bytes is the form used at all. Every read verifies
// the re-built leaf against its stored record hash, so a codec fault can only
// fail a read, never change a leaf. Patches are byte splices made in the
// committer (Hook.Splice) after the documents were compressed in the
// caller's goroutine: doc is the document's position in name order.
const blobFormat = 0x02

// maxEntryBytes bounds an entry's leaf and documents together (uncompressed)
// and so what a decoder allocates for one.
const maxEntryBytes = 64 << 20

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
	mu    sync.Mutex // serializes addDict
	dicts map[uint32][]byte
	enc   atomic.Pointer[encoder]
	dec   atomic.Pointer[zstd.Decoder]
	// load, set for a shared store, reads a stored dictionary this codec
	// does not know yet (another writer of the log cut it).
	load func(id uint32) ([]byte, error)
}

type encoder struct {
	dict uint32
	zw   *zstd.Encoder
}

// zstd settings: the fastest level (the dictionary does most of the work:
// see # Storage layout in the package doc for the measured sizes), a 128 KB
// window (entries are far smaller; it bounds the encoders' memory), frame
// checksums on (a damaged document is detected when read, although the log
// does not cover it).
func newZstdEncoder(dict uint32, content []byte) (*zstd.Encoder, error) {
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(1 << 17),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
	}
	if dict != 0 {
		opts = append(opts, zstd.WithEncoderDictRaw(dict, content))
	}
	return zstd.NewWriter(nil, opts...)
}

// newCodec builds a codec from the stored dictionaries (id → cut size and
// content).
func newCodec(dicts map[uint32]storedDict) (*codec, error) {
	c := &codec{dicts: map[uint32][]byte{}}
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

// publish makes a new decoder knowing every dictionary, then an encoder
// using dictionary id: a blob made with a dictionary can always be read.
func (c *codec) publish(id uint32) error {
	dopts := []zstd.DOption{
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(maxEntryBytes + 1<<20),
	}
	for did, content := range c.dicts {
		dopts = append(dopts, zstd.WithDecoderDictRaw(did, content))
	}
	dec, err := zstd.NewReader(nil, dopts...)
	if err != nil {
		return err
	}
	zw, err := newZstdEncoder(id, c.dicts[id])
	if err != nil {
		dec.Close()
		return err
	}
	if old := c.dec.Swap(dec); old != nil {
		old.Close() // DecodeAll calls in flight keep their own state
	}
	c.enc.Store(&encoder{dict: id, zw: zw})
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
		d.Close()
	}
	if e := c.enc.Load(); e != nil {
		e.zw.Close()
	}
}

// encodedEntry is an entry's blob and the raw bodies it was made of (kept
// for dictionaries).
type encodedEntry struct {
	blob               []byte
	leafBody, docsBody []byte
	names              []string // document names, sorted: the doc numbers of patches
}

// encode builds the blob of a leaf and its documents with the newest
// dictionary.
func (c *codec) encode(leaf []byte, docs map[string][]byte) encodedEntry {
	e := c.enc.Load()
	var x encodedEntry
	x.leafBody = leafBody(leaf)
	x.names = make([]string, 0, len(docs))
	for name := range docs {
		x.names = append(x.names, name)
	}
	slices.Sort(x.names)
	if len(docs) > 0 {
		n := binary.MaxVarintLen64
		for name, doc := range docs {
			n += 2*binary.MaxVarintLen64 + len(name) + len(doc)
		}
		x.docsBody = binary.AppendUvarint(make([]byte, 0, n), uint64(len(docs)))
		for _, name := range x.names {
			x.docsBody = appendPart(x.docsBody, []byte(name))
			x.docsBody = appendPart(x.docsBody, docs[name])
		}
	}
	b := make([]byte, 0, 64+len(x.leafBody)/2+len(x.docsBody)/2)
	b = append(b, blobFormat)
	b = binary.AppendUvarint(b, uint64(e.dict))
	b = appendFrame(b, e.zw, x.leafBody)
	b = appendFrame(b, e.zw, x.docsBody)
	b = append(b, 0) // no patches
	x.blob = b
	return x
}

// appendFrame appends the length-prefixed zstd frame of body. The frame is
// compressed into b itself, after room for the longest length prefix, and
// moved up to the prefix's true length (no buffer per frame).
func appendFrame(b []byte, zw *zstd.Encoder, body []byte) []byte {
	if len(body) == 0 {
		return append(b, 0)
	}
	const room = binary.MaxVarintLen64
	at := len(b)
	b = zw.EncodeAll(body, append(b, make([]byte, room)...))
	n := len(b) - at - room
	var prefix [room]byte
	k := binary.PutUvarint(prefix[:], uint64(n))
	copy(b[at+k:], b[at+room:])
	copy(b[at:], prefix[:k])
	return b[:at+k+n]
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
	out = binary.AppendUvarint(out, uint64(len(ps)))
	for _, p := range ps {
		out = binary.AppendUvarint(out, uint64(p.doc))
		out = binary.AppendUvarint(out, uint64(p.offset))
		out = appendPart(out, p.data)
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

// leafBody encodes a leaf, decoding a canonical compact JWS: the parts
// are decoded into the body itself, and each is encoded again, in the
// room behind it, to check it gives its part of the leaf back.
func leafBody(leaf []byte) []byte {
	b := make([]byte, 0, 2*len(leaf)+2*binary.MaxVarintLen64+1)
	raw := func() []byte { return append(append(b, leafRaw), leaf...) }
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
		m, err := strictB64.Decode(rest[at:at+n], seg)
		if err != nil || m != n || !bytes.Equal(strictB64.AppendEncode(rest[at+n:at+n], rest[at:at+n]), seg) {
			return raw() // not canonical unpadded base64url
		}
		rest = rest[:at+n]
	}
	return rest
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
	dict                 uint32
	leafFrame, docsFrame []byte
	patches              []byte
}

var errBlob = errors.New("malformed entry blob")

func parseBlob(blob []byte) (parsedBlob, error) {
	var p parsedBlob
	if len(blob) < 1 || blob[0] != blobFormat {
		return p, fmt.Errorf("%w: format byte", errBlob)
	}
	r := blob[1:]
	d, n := binary.Uvarint(r)
	if n <= 0 || d > 1<<32-1 {
		return p, fmt.Errorf("%w: dictionary", errBlob)
	}
	p.dict, r = uint32(d), r[n:]
	var ok bool
	if p.leafFrame, r, ok = cutPart(r); !ok {
		return p, fmt.Errorf("%w: leaf frame", errBlob)
	}
	if p.docsFrame, r, ok = cutPart(r); !ok {
		return p, fmt.Errorf("%w: documents frame", errBlob)
	}
	p.patches = r
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

// frame decompresses a frame.
func (c *codec) frame(f []byte, dict uint32) ([]byte, error) {
	if len(f) == 0 {
		return nil, nil
	}
	if dict != 0 {
		// zstd names the dictionary in the frame header; check it is the
		// one the blob names, which the decoder must know.
		var h zstd.Header
		if err := h.Decode(f); err != nil || h.DictionaryID != dict {
			return nil, fmt.Errorf("%w: frame dictionary %d, blob says %d", errBlob, h.DictionaryID, dict)
		}
	}
	out, err := c.dec.Load().DecodeAll(f, nil)
	if err != nil && dict != 0 && c.load != nil {
		if lerr := c.ensure(dict); lerr != nil {
			return nil, lerr
		}
		return c.dec.Load().DecodeAll(f, nil)
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

// decodeLeaf returns the leaf stored in a blob.
func (c *codec) decodeLeaf(blob []byte) ([]byte, error) {
	p, err := parseBlob(blob)
	if err != nil {
		return nil, err
	}
	body, err := c.frame(p.leafFrame, p.dict)
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
// in a blob.
func (c *codec) recordHash(h *leafHasher, blob []byte) (tlog.Hash, error) {
	p, err := parseBlob(blob)
	if err != nil {
		return tlog.Hash{}, err
	}
	if p.dict != 0 {
		var hd zstd.Header
		if err := hd.Decode(p.leafFrame); err != nil || hd.DictionaryID != p.dict {
			return tlog.Hash{}, fmt.Errorf("%w: frame dictionary %d, blob says %d", errBlob, hd.DictionaryID, p.dict)
		}
	}
	if len(p.leafFrame) == 0 {
		return tlog.Hash{}, fmt.Errorf("%w: empty leaf body", errBlob)
	}
	if h.frame, err = c.dec.Load().DecodeAll(p.leafFrame, h.frame[:0]); err != nil {
		return tlog.Hash{}, err
	}
	body := h.frame
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
	body, err := c.frame(p.docsFrame, p.dict)
	if err != nil {
		return nil, err
	}
	docs, err := parseDocsBody(body)
	if err != nil {
		return nil, err
	}
	return docs, applyPatches(docs, p.patches)
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

// applyPatches splices the patches into docs (whose bytes the caller owns).
func applyPatches(docs []namedDoc, b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return fmt.Errorf("%w: patch count", errBlob)
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
	lb, err := c.frame(p.leafFrame, p.dict)
	if err != nil {
		return nil, err
	}
	db, err := c.frame(p.docsFrame, p.dict)
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
