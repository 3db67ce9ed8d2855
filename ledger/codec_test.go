package ledger

import (
	"bytes"
	"encoding/binary"
	"maps"
	"runtime"
	"slices"
	"testing"
)

// leafBody encodes a leaf (see appendLeafBody).
func leafBody(leaf []byte) []byte {
	b, _ := appendLeafBody(nil, leaf, nil)
	return b
}

func TestCodecRoundTrip(t *testing.T) {
	r := loadRealistic(t)
	jws := r.entry(1).leaf
	plain, err := newCodec(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.close()
	dict := append(leafBody(r.entry(2).leaf), r.entry(2).record...)
	withDict, err := newCodec(map[uint32]storedDict{7: {cutAt: 16, content: dict}})
	if err != nil {
		t.Fatal(err)
	}
	defer withDict.close()
	for _, tc := range []struct {
		name    string
		leaf    []byte
		docs    map[string][]byte
		jwsForm bool
	}{
		{"receipt JWS", jws, map[string][]byte{"record": r.entry(1).record, "ubl": r.entry(1).ubl}, true},
		{"plain leaf, no documents", []byte("leaf 0"), nil, false},
		{"empty document", []byte("x"), map[string][]byte{"a": {}, "b": nil}, false},
		{"JWS with padding", []byte("eyJ9.e30=.AAAA"), nil, false},
		{"JWS with a newline", []byte("eyJ9.e3\n0.AAAA"), nil, false},
		{"JWS with non-canonical trailing bits", []byte("eyJ9.e31.AAAA"), nil, false},
		{"four parts", []byte("a.b.c.d"), nil, false},
		{"two parts", []byte("a.b"), nil, false},
		{"empty parts", []byte(".."), nil, true},
		{"binary", []byte{0, 1, 2, 0xff, '.', '.'}, map[string][]byte{"bin": {0, 0, 0}}, false},
		// Beyond the 64 KB an S2 dictionary reaches back from.
		{"large documents", jws, map[string][]byte{"record": bytes.Repeat(r.entry(1).record, 40), "ubl": bytes.Repeat(r.entry(3).ubl, 60)}, true},
	} {
		for name, c := range map[string]*codec{"no dictionary": plain, "dictionary": withDict} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				x := c.encode(tc.leaf, tc.docs)
				if p, err := parseBlob(x.blob); err != nil || p.format != blobFormat || p.dict != c.enc.Load().dict {
					t.Fatalf("blob %+v, %v", p, err)
				}
				want, _ := appendRawBody(nil, tc.leaf, slices.Sorted(maps.Keys(tc.docs)), tc.docs, new([]byte))
				if got := want[0] == leafJWS; got != tc.jwsForm {
					t.Errorf("JWS form used: %v, want %v", got, tc.jwsForm)
				}
				leaf, err := c.decodeLeaf(x.blob)
				if err != nil || !bytes.Equal(leaf, tc.leaf) {
					t.Fatalf("decodeLeaf = %q, %v; want %q", leaf, err, tc.leaf)
				}
				docs, err := c.decodeDocs(x.blob)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string][]byte{}
				for _, d := range docs {
					got[d.name] = d.doc
				}
				if !maps.EqualFunc(got, tc.docs, bytes.Equal) {
					t.Fatalf("decodeDocs = %q, want %q", got, tc.docs)
				}
				body, err := c.rawBody(x.blob)
				if err != nil || !bytes.Equal(body, want) {
					t.Fatalf("rawBody = %v", err)
				}
			})
		}
	}
	// A blob made with a dictionary the reader does not know fails to
	// decode; it never decodes to other bytes.
	x := withDict.encode(jws, nil)
	if _, err := plain.decodeLeaf(x.blob); err == nil {
		t.Error("a blob of an unknown dictionary decoded")
	}
}

func TestPatches(t *testing.T) {
	c, _ := newCodec(nil)
	defer c.close()
	x := c.encode([]byte("leaf"), map[string][]byte{"a": []byte("INV-000000"), "b": []byte("hello")})
	blob, err := withPatches(x.blob, []patch{{doc: 0, offset: 4, data: []byte("004217")}, {doc: 1, offset: 0, data: []byte("J")}})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := c.decodeDocs(blob)
	if err != nil {
		t.Fatal(err)
	}
	if string(docs[0].doc) != "INV-004217" || string(docs[1].doc) != "Jello" {
		t.Fatalf("patched documents %q %q", docs[0].doc, docs[1].doc)
	}
	for _, bad := range []patch{{doc: 2}, {doc: 0, offset: 8, data: []byte("123")}} {
		blob, err := withPatches(x.blob, []patch{bad})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.decodeDocs(blob); err == nil {
			t.Errorf("patch %+v outside its document was applied", bad)
		}
	}
}

func TestNextDictCut(t *testing.T) {
	for _, tc := range []struct{ last, want int64 }{
		{0, 16}, {16, 256}, {100, 256}, {256, 4096}, {4096, 65536}, {65536, 131072}, {100_000, 131072}, {131072, 196608},
	} {
		if got := nextDictCut(tc.last); got != tc.want {
			t.Errorf("nextDictCut(%d) = %d, want %d", tc.last, got, tc.want)
		}
	}
}

// FuzzDecodeBlob: decoding arbitrary bytes as a blob fails or succeeds,
// never panics, and a blob that decodes is re-encodable.
func FuzzDecodeBlob(f *testing.F) {
	c, _ := newCodec(nil)
	defer c.close()
	f.Add(c.encode([]byte("eyJ9.e30.AAAA"), map[string][]byte{"r": []byte("{}")}).blob)
	f.Add(c.encode([]byte("leaf"), nil).blob)
	f.Add(c.encode([]byte("eyJ9.e30.AAAA"), map[string][]byte{"r": []byte("{}"), "s": []byte("{}")}).blob)
	f.Add([]byte{3, 0, 1, 3, 2, 4, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 1, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, blob []byte) {
		leaf, lerr := c.decodeLeaf(blob)
		docs, derr := c.decodeDocs(blob)
		if lerr == nil && derr == nil {
			m := map[string][]byte{}
			for _, d := range docs {
				m[d.name] = d.doc
			}
			if len(m) != len(docs) {
				return // duplicate names: never written, but decodable
			}
			x := c.encode(leaf, m)
			l2, err := c.decodeLeaf(x.blob)
			if err != nil || !bytes.Equal(l2, leaf) {
				t.Fatalf("re-encoded leaf %q, %v; want %q", l2, err, leaf)
			}
		}
	})
}

func TestLeafBodyJWSStrict(t *testing.T) {
	// A canonical JWS is stored decoded and gives itself back; anything
	// else (padding, a line break, a fourth part, a non-canonical last
	// character) is stored as it is.
	for s, jws := range map[string]bool{
		"a.b.c": false, "eyJhbGciOiJFZERTQSJ9.eyJ4IjoxfQ.c2ln": true, "..": true, "QQ.QQ.QQ": true,
		"QQ==.QQ.QQ": false, "QR.QQ.QQ": false, "Q\nQ.QQ.QQ": false, "QQ.QQ.QQ.QQ": false, "QQ": false,
	} {
		body := leafBody([]byte(s))
		if got := body[0] == leafJWS; got != jws {
			t.Errorf("%q: stored as JWS %v, want %v", s, got, jws)
		}
		back, err := decodeLeafBody(body)
		if err != nil || string(back) != s {
			t.Errorf("%q: decoded as %q, %v", s, back, err)
		}
	}
}

// TestBlobDamage: a 0x03 blob with any byte of its block, its body's
// checksum or its patches changed does not decode (documents included,
// which the log does not cover), and a block announcing more than
// maxEntryBytes is refused before anything is allocated for it.
func TestBlobDamage(t *testing.T) {
	r := loadRealistic(t)
	e := r.entry(1)
	c, err := newCodec(map[uint32]storedDict{1: {cutAt: 16, content: append(leafBody(r.entry(4).leaf), r.entry(4).record...)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	x := c.encode(e.leaf, map[string][]byte{"record": e.record, "ubl": e.ubl})
	blob, err := withPatches(x.blob, []patch{{doc: 1, offset: 10, data: []byte("PATCH")}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := parseBlob(blob)
	if p.dict != 1 {
		t.Fatalf("compressed with dictionary %d, want 1", p.dict)
	}
	if docs, err := c.decodeDocs(blob); err != nil || string(docs[1].doc[10:15]) != "PATCH" {
		t.Fatalf("decodeDocs = %v", err)
	}
	var h leafHasher
	blockAt := len(blob) - len(p.patches) - 4 - len(p.block)
	for i := blockAt; i < len(blob); i++ {
		bad := bytes.Clone(blob)
		bad[i] ^= 0x04
		_, derr := c.decodeDocs(bad)
		leaf, lerr := c.decodeLeaf(bad)
		_, herr := c.recordHash(&h, bad)
		if derr == nil || lerr == nil && i < len(blob)-len(p.patches) || herr == nil && i < len(blob)-len(p.patches) {
			t.Fatalf("byte %d of %d changed: decodeDocs %v, decodeLeaf %q %v, recordHash %v", i, len(blob), derr, leaf, lerr, herr)
		}
	}
	// A block announcing 1 GiB.
	huge := []byte{blobFormat, 0, 1}
	block := binary.AppendUvarint(nil, 1<<30)
	block = append(block, 0, 0, 0, 0)
	huge = append(binary.AppendUvarint(huge, uint64(len(block))), block...)
	huge = append(huge, 0, 0, 0, 0, 0)
	if _, err := c.decodeDocs(huge); err == nil {
		t.Fatal("a block of 1 GiB decoded")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.recordHash(&h, huge)
	runtime.ReadMemStats(&after)
	if err == nil || after.TotalAlloc-before.TotalAlloc > 1<<20 {
		t.Fatalf("recordHash of a 1 GiB block: %v, %d bytes allocated", err, after.TotalAlloc-before.TotalAlloc)
	}
}

// TestTinyDictionary: a dictionary too small for S2 (a log of tiny
// entries) is not used; blobs say dictionary 0 and decode.
func TestTinyDictionary(t *testing.T) {
	c, err := newCodec(map[uint32]storedDict{3: {cutAt: 16, content: []byte("\x00a\x00b")}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	x := c.encode([]byte("leaf"), map[string][]byte{"d": []byte("doc")})
	if p, _ := parseBlob(x.blob); p.dict != 0 {
		t.Fatalf("dictionary %d used", p.dict)
	}
	if leaf, err := c.decodeLeaf(x.blob); err != nil || string(leaf) != "leaf" {
		t.Fatalf("decodeLeaf = %q, %v", leaf, err)
	}
}
