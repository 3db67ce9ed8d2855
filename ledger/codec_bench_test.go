package ledger

import (
	"testing"
)

// BenchmarkEncode measures what encoding an entry costs its caller
// (codec.encode: leaf body, documents body, compression) with realistic
// entries and a dictionary cut from four of them, as a log of them uses
// after its first cuts; B/blob is the stored blob's size, cpu-µs/op the
// process's CPU time (the block is compressed on the codec's compressor
// goroutines: codec.compress), which includes the collector's.
func BenchmarkEncode(b *testing.B) {
	r := loadRealistic(b)
	plain, err := newCodec(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.close()
	var bodies [][]byte
	for i := int64(96); i < 100; i++ {
		e := r.entry(i)
		body, err := plain.rawBody(plain.encode(e.leaf, map[string][]byte{"record": e.record, "ubl": e.ubl}).blob)
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	c, err := newCodec(map[uint32]storedDict{1: {cutAt: 100, content: makeDict(bodies)}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.close()
	const k = 64
	var leaves [k][]byte
	var docs [k]map[string][]byte
	for i := range k {
		e := r.entry(int64(1000 + i))
		leaves[i], docs[i] = e.leaf, map[string][]byte{"record": e.record, "ubl": e.ubl}
	}
	b.ReportAllocs()
	total := 0
	cpu := processCPU()
	for i := 0; b.Loop(); i++ {
		total += len(c.encode(leaves[i%k], docs[i%k]).blob)
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
	b.ReportMetric(float64(total)/float64(b.N), "B/blob")
}
