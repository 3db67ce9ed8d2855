package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// realistic entries for benchmarks and size measurements. The templates in
// testdata/bench are real fiscal402 output (see testdata/bench/README.md):
// the receipt JWS (the leaf), the record JSON and the UBL invoice of three
// settlements. Each generated entry gets a fresh record ID, transaction
// hash, timestamp and signature, so that no two entries share those bytes,
// as in production; the rest of the text repeats, as it does in production.
//
// testdata/bench/v4 holds the same three settlements as the engine writes
// them today (TestBenchTemplatesV4 keeps them so): a 4.0.0 receipt payload
// as the leaf, with no signature, and the openings of its commitments as a
// third document. loadRealisticV4 reads those.
type realistic struct {
	tmpl [3]realTemplate
}

type realTemplate struct {
	header   string // JWS protected header, base64url; "": a 4.0.0 leaf
	payload  []byte // JWS payload, decoded JSON; the 4.0.0 leaf itself
	record   []byte
	ubl      []byte
	openings []byte // 4.0.0 only
	id, tx   string // the record ID and tx hash the template uses
	created  string
}

// realSet is a set of templates, read once per test binary.
type realSet struct {
	once sync.Once
	data *realistic
	err  error
}

var realJWS, realV4 realSet

func (s *realSet) load(tb testing.TB, read func() (*realistic, error)) *realistic {
	tb.Helper()
	s.once.Do(func() { s.data, s.err = read() })
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.data
}

func loadRealistic(tb testing.TB) *realistic { tb.Helper(); return realJWS.load(tb, readRealistic) }

// loadRealisticV4 is loadRealistic with the templates of 4.0.0 receipts.
func loadRealisticV4(tb testing.TB) *realistic { tb.Helper(); return realV4.load(tb, readRealisticV4) }

func readRealisticV4() (*realistic, error) {
	r := &realistic{}
	for i := range r.tmpl {
		read := func(name string) ([]byte, error) {
			return os.ReadFile(filepath.Join("testdata", "bench", "v4", fmt.Sprintf("s%d-%s", i, name)))
		}
		t := &r.tmpl[i]
		var err error
		for name, to := range map[string]*[]byte{"leaf.json": &t.payload, "record.json": &t.record, "ubl.xml": &t.ubl, "openings.json": &t.openings} {
			if *to, err = read(name); err != nil {
				return nil, err
			}
		}
		if err := t.names(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// names reads the record ID, tx hash and creation time the template's
// documents spell, which each generated entry replaces.
func (t *realTemplate) names() error {
	var rec struct {
		ID         string `json:"id"`
		CreatedAt  string `json:"createdAt"`
		Settlement struct {
			TxHash string `json:"txHash"`
		} `json:"settlement"`
	}
	if err := json.Unmarshal(t.record, &rec); err != nil {
		return err
	}
	t.id, t.tx, t.created = rec.ID, rec.Settlement.TxHash, rec.CreatedAt
	return nil
}

func readRealistic() (*realistic, error) {
	r := &realistic{}
	for i := range r.tmpl {
		read := func(name string) ([]byte, error) {
			return os.ReadFile(filepath.Join("testdata", "bench", name))
		}
		leaf, err := read(fmt.Sprintf("s%d-leaf.jws", i))
		if err != nil {
			return nil, err
		}
		t := &r.tmpl[i]
		parts := bytes.Split(bytes.TrimSpace(leaf), []byte("."))
		if len(parts) != 3 {
			return nil, fmt.Errorf("template %d: not a compact JWS", i)
		}
		t.header = string(parts[0])
		if t.payload, err = base64.RawURLEncoding.DecodeString(string(parts[1])); err != nil {
			return nil, err
		}
		if t.record, err = read(fmt.Sprintf("s%d-record.json", i)); err != nil {
			return nil, err
		}
		ublName := fmt.Sprintf("s%d-ubl.xml", i)
		if i == 2 {
			// A larger invoice (two VAT rates, ~5 KB), so that the mix
			// is nearer the ~5 KB invoices of B2B records.
			ublName = "s3-ubl.xml"
		}
		if t.ubl, err = read(ublName); err != nil {
			return nil, err
		}
		if err := t.names(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// realEntry is one generated entry.
type realEntry struct {
	id, account string
	leaf        []byte
	record, ubl []byte
	openings    []byte // a 4.0.0 receipt's; nil with a JWS
	txKey       string
	idemKey     string
	payload     []byte // the JWS signing input's payload (for the simulated seal)
	header      string
}

// entry returns generated entry n; the same n gives the same entry.
func (r *realistic) entry(n int64) realEntry {
	t := &r.tmpl[n%int64(len(r.tmpl))]
	seed := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("realistic"), uint64(n)))
	id := "x402-" + hex.EncodeToString(seed[:16])
	tx := "0x" + hex.EncodeToString(sha256.New().Sum(seed[:]))[:64]
	created := time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC).Add(time.Duration(n) * 1700 * time.Millisecond).Format(time.RFC3339)
	sub := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(t.id), []byte(id))
		b = bytes.ReplaceAll(b, []byte(t.tx), []byte(tx))
		return bytes.ReplaceAll(b, []byte(t.created), []byte(created))
	}
	payload := sub(t.payload)
	var leaf, openings []byte
	if t.header == "" { // a 4.0.0 receipt: the payload is the leaf
		leaf, openings = payload, sub(t.openings)
	} else {
		sig := sha256.Sum256(append(seed[:], 's'))
		sig2 := sha256.Sum256(sig[:])
		leaf = []byte(t.header + "." + base64.RawURLEncoding.EncodeToString(payload) + "." +
			base64.RawURLEncoding.EncodeToString(append(sig[:], sig2[:]...)))
	}
	return realEntry{
		id:       id,
		account:  fmt.Sprintf("acct_%03d", n%50),
		leaf:     leaf,
		record:   sub(t.record),
		ubl:      sub(t.ubl),
		openings: openings,
		txKey:    "eip155:8453:" + tx,
		idemKey:  fmt.Sprintf("acct_%03d\x00order-%d", n%50, n),
		payload:  payload,
		header:   t.header,
	}
}

// claims are the engine's two claims: the Idempotency-Key and the payment.
func (e realEntry) claims() []Claim {
	fp := sha256.Sum256([]byte(e.idemKey))
	return []Claim{
		{Space: "idem", Key: e.idemKey, Fingerprint: fp[:]},
		{Space: "payment", Key: e.txKey, Fingerprint: []byte(e.account)},
	}
}

// ledgerEntry is the entry as the engine builds it for index: leaf,
// record and invoice, the account's event and time postings and the outbox
// event (a first revision writes no head pointer: the engine finds the
// entry by the record id).
func (e realEntry) ledgerEntry(index int64) Entry {
	ev := fmt.Sprintf(`{"id":"evt_%s","type":"settlement.processed","created":"2026-04-10T15:00:00Z","sequence":%d,"account":"%s","recordId":"%s","entryId":"%s"}`,
		e.id, index, e.account, e.id, e.id)
	return Entry{
		ID:   e.id,
		Leaf: e.leaf,
		Docs: e.docs(),
		Postings: []Posting{
			{Index: "account-events", Key: binary.BigEndian.AppendUint64([]byte(e.account+"\x00"), uint64(index))},
			{Index: "account-time", Key: append(binary.BigEndian.AppendUint64([]byte(e.account+"\x00"), uint64(index)*1_700_000_000), e.id...)},
		},
		Puts: []Put{
			{Bucket: "events", Key: binary.BigEndian.AppendUint64(nil, uint64(index)), Value: []byte(ev)},
		},
	}
}

// docs are the entry's documents: the record and the invoice, and a 4.0.0
// receipt's openings.
func (e realEntry) docs() map[string][]byte {
	d := map[string][]byte{"record": e.record, "ubl": e.ubl}
	if e.openings != nil {
		d["openings"] = e.openings
	}
	return d
}

// prebuilt is the entry as the engine should build it for the prebuilt
// form: everything position-independent up front, the account-events
// posting keyed by index (AppendIndex), and a Hook that writes the outbox
// event, whose key and "sequence" are the index (a few hundred bytes put
// together in the committer).
func (e realEntry) prebuilt() (Entry, func(*Hook) error) {
	evHead := []byte(`{"id":"evt_` + e.id + `","type":"settlement.processed","created":"2026-04-10T15:00:00Z","sequence":`)
	evTail := []byte(`,"account":"` + e.account + `","recordId":"` + e.id + `","entryId":"` + e.id + `"}`)
	en := Entry{
		ID:   e.id,
		Leaf: e.leaf,
		Docs: e.docs(),
		Postings: []Posting{
			{Index: "account-events", Key: []byte(e.account + "\x00"), AppendIndex: true},
			{Index: "account-time", Key: append(binary.BigEndian.AppendUint64([]byte(e.account+"\x00"), uint64(time.Now().UnixNano())), e.id...)},
		},
	}
	hook := func(h *Hook) error {
		i := h.Index()
		ev := strconv.AppendInt(append(make([]byte, 0, len(evHead)+len(evTail)+20), evHead...), i, 10)
		return h.Put("events", binary.BigEndian.AppendUint64(nil, uint64(i)), append(ev, evTail...))
	}
	return en, hook
}

// sealKey signs in the simulated engine seal.
var sealKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))

// sealedEntry simulates what the engine's Build does inside the committer
// today (fiscal.Engine.seal): sign the receipt for the index (Ed25519 over
// the JWS signing input) and marshal the record, then build the entry.
func (e realEntry) sealedEntry(index int64) (Entry, error) {
	var rec map[string]any
	if err := json.Unmarshal(e.record, &rec); err != nil {
		return Entry{}, err
	}
	rec["ledger"] = map[string]any{"origin": testOrigin, "index": index}
	record, err := json.Marshal(rec)
	if err != nil {
		return Entry{}, err
	}
	input := e.header + "." + base64.RawURLEncoding.EncodeToString(e.payload)
	sig := ed25519.Sign(sealKey, []byte(input))
	en := e.ledgerEntry(index)
	en.Leaf = []byte(input + "." + base64.RawURLEncoding.EncodeToString(sig))
	en.Docs["record"] = record
	return en, nil
}
