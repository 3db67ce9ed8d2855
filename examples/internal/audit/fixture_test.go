package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
)

// world is what the tests audit: a real engine's data directory after
// four commits (two processed settlements, one pending review, one fiscal
// event without a receipt), one 3.0.0 receipt appended to the same log the
// way the engine will issue them, and the files an auditor keeps.
type world struct {
	dir     string // the engine's data directory (ledger.db, keys/)
	files   string // the auditor's files
	logKey  string
	origin  string
	jwks    string // file paths under files
	logFile string

	receiptDE, receiptFR, receiptPending, receiptV3 string // receipt files
	openingsV3                                      string
	checkpoint1, checkpointLast                     string // checkpoint files of sizes 1 and the latest
	proof                                           string // consistency proof 1 → latest
	size                                            int64

	frLeaf, frUBL, frRecord []byte // the FR entry, to find in the ledger file
	v3JWS                   string
	frOpenings              []byte // the openings of the French sale's receipt
	v3Index                 int64
	cfg                     fiscal.Config
}

var (
	worldOnce sync.Once
	theWorld  *world
	worldErr  string
)

// now is the engine's clock: after the payments, before any key rotation.
var now = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// getWorld builds the world once per test binary (it takes a few hundred
// milliseconds) in a directory the first caller's test removes at the end
// of the run (TestMain).
func getWorld(t *testing.T) *world {
	t.Helper()
	worldOnce.Do(func() {
		w, err := buildWorld()
		if err != "" {
			worldErr = err
			return
		}
		theWorld = w
	})
	if worldErr != "" {
		t.Fatal(worldErr)
	}
	return theWorld
}

func TestMain(m *testing.M) {
	code := m.Run()
	if theWorld != nil {
		os.RemoveAll(filepath.Dir(theWorld.dir))
	}
	os.Exit(code)
}

func buildWorld() (*world, string) {
	root, err := os.MkdirTemp("", "audit-test-")
	if err != nil {
		return nil, err.Error()
	}
	w := &world{dir: filepath.Join(root, "data"), files: filepath.Join(root, "files")}
	if err := os.MkdirAll(w.files, 0o755); err != nil {
		return nil, err.Error()
	}
	if msg := w.build(); msg != "" {
		os.RemoveAll(root)
		return nil, msg
	}
	return w, ""
}

func (w *world) write(name string, data []byte) string {
	p := filepath.Join(w.files, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		panic(err)
	}
	return p
}

func (w *world) build() string {
	ctx := context.Background()
	w.cfg = fiscal.Config{Dir: w.dir, Accounts: fiscaltest.Accounts(fiscaltest.IrishSeller),
		Clock: func() time.Time { return now }, Rand: &fiscaltest.Rand{}, Logger: fiscaltest.Logger()}
	// The log key is made from the fixed random stream too, so that the
	// checkpoints, and with them the golden outputs, are the same on every
	// run (the engine would make one with crypto/rand).
	skey, _, err := ledger.GenerateLogKey("fiscal402.localhost/log", &fiscaltest.Rand{})
	if err != nil {
		return err.Error()
	}
	if err := os.MkdirAll(filepath.Join(w.dir, "keys"), 0o700); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(filepath.Join(w.dir, "keys", "log.key"), []byte(skey+"\n"), 0o600); err != nil {
		return err.Error()
	}
	e, err := fiscal.New(w.cfg)
	if err != nil {
		return err.Error()
	}
	books, err := e.Books(fiscaltest.AccountID(0))
	if err != nil {
		return err.Error()
	}
	var ids []string
	for i, req := range []fiscal.SettlementRequest{
		fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"),
		fiscaltest.Request(2, "5.00", "FR", "2026-04-10T15:00:00Z"),
		fiscaltest.Request(3, "7.00", "", "2026-04-10T16:00:00Z"), // no buyer country: pending review
	} {
		res, err := books.Settle(ctx, req, "")
		if err != nil {
			return "settle " + string(rune('0'+i)) + ": " + err.Error()
		}
		ids = append(ids, res.Record.Receipt.ID)
		if i == 1 {
			if w.frOpenings, err = books.Openings(ctx, res.Record.Receipt.ID); err != nil {
				return err.Error()
			}
		}
	}
	// A fiscal event outside the EU VAT production invariants (a buyer in
	// Japan) has no receipt: its leaf is its document.
	fe := fiscalevent.New(e)
	if _, err := fe.Record(ctx, fiscaltest.AccountID(0), fiscalevent.Request{
		Payment: fiscalevent.Payment{AmountUSDC: "3.00", TxHash: fiscaltest.TxHash(4), Timestamp: "2026-04-10T17:00:00Z",
			PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", Network: "eip155:8453"},
		Seller: parties.Seller{LegalName: fiscaltest.IrishSeller.LegalName, Country: "IE", VATNumber: fiscaltest.IrishSeller.VATNumber},
		Buyer:  parties.Buyer{Country: "JP", BusinessStatus: "B2C"},
		Supply: parties.Supply{Kind: "digital_service"},
	}, ""); err != nil {
		return "fiscal event: " + err.Error()
	}
	jwks, err := e.JWKS()
	if err != nil {
		return err.Error()
	}
	w.logKey, w.origin = e.LogVerifierKey(), e.Ledger().Origin()
	w.jwks = w.write("jwks.json", jwks)
	w.logFile = w.write("log-key.txt", []byte(w.logKey+"\n"))
	for i, name := range []string{"receipt-de.json", "receipt-fr.json", "receipt-pending.json"} {
		rc, err := e.Receipt(ctx, ids[i])
		if err != nil {
			return err.Error()
		}
		p := w.write(name, rc)
		switch i {
		case 0:
			w.receiptDE = p
		case 1:
			w.receiptFR = p
		case 2:
			w.receiptPending = p
		}
	}
	fr, err := e.Ledger().Entry(strings.TrimPrefix(ids[1], "rcpt_"))
	if err != nil {
		return err.Error()
	}
	w.frLeaf, w.frUBL, w.frRecord = fr.Leaf, fr.Docs[docUBL], fr.Docs[docRecord]
	cp1, err := e.Ledger().CheckpointAt(1)
	if err != nil {
		return err.Error()
	}
	w.checkpoint1 = w.write("checkpoint-1.txt", cp1.Note)
	if err := e.Close(); err != nil {
		return err.Error()
	}
	if msg := w.appendV3(); msg != "" {
		return msg
	}

	// The latest checkpoint and a consistency proof from size 1, in the
	// form GET /v1/log/proof/consistency serves.
	signer, _, err := ledger.LoadOrCreateLogKey(filepath.Join(w.dir, "keys", "log.key"), w.origin)
	if err != nil {
		return err.Error()
	}
	l, err := ledger.Open(filepath.Join(w.dir, "ledger.db"), ledger.Options{Origin: w.origin, Signer: signer})
	if err != nil {
		return err.Error()
	}
	defer l.Close()
	last, _ := l.Checkpoint()
	w.size = last.Size
	w.checkpointLast = w.write("checkpoint-last.txt", last.Note)
	p, err := l.ConsistencyProof(1, last.Size)
	if err != nil {
		return err.Error()
	}
	fromRoot, _ := l.TreeHash(1)
	proof, _ := json.Marshal(httpserver.ConsistencyProof{From: 1, To: last.Size, FromRoot: fromRoot, ToRoot: last.Root, Hashes: p})
	w.proof = w.write("proof-1-last.json", proof)
	return ""
}

// appendV3 appends a service.receipt/3.0.0 receipt to the engine's log, as
// the engine issued them before 4.0.0 (receipt/doc.go "# Migration"), so
// that the log holds both versions, as an upgraded service's does: claims in
// clear, Conceal, Keyring.Sign before the index is known, the committer
// appends the JWS, Assemble with the index it got. The claims are those of
// the French sale under a new event id, with two items of location
// evidence and a buyer name, all of which end up committed.
func (w *world) appendV3() string {
	doc, _ := os.ReadFile(w.receiptFR)
	jwks, _ := os.ReadFile(w.jwks)
	openings, err := receipt.ParseOpenings(w.frOpenings)
	if err != nil {
		return err.Error()
	}
	v, err := receipt.NewVerifier(jwks, w.logKey)
	if err != nil {
		return err.Error()
	}
	c, err := v.Verify(doc, openings...) // the claims in clear
	if err != nil {
		return err.Error()
	}
	c.Commitments, c.RecordSHA256 = nil, ""
	sum := sha256.Sum256([]byte("audit v3"))
	event := "x402-" + hex.EncodeToString(sum[:16])
	clear := *c
	clear.Spec, clear.EventID, clear.ReceiptID = receipt.SpecV3, event, "rcpt_"+event
	clear.Log = receipt.LogRef{Origin: c.Log.Origin}
	clear.Buyer.Name = "Jeanne Martin"
	clear.Buyer.LocationEvidence = []receipt.LocationEvidence{
		{Kind: receipt.EvidenceBillingAddress, Country: "FR", Value: "12 rue de la Paix, 75002 Paris"},
		{Kind: receipt.EvidenceIPAddress, Country: "FR", Value: "192.0.2.7"},
	}

	signer, _, err := ledger.LoadOrCreateLogKey(filepath.Join(w.dir, "keys", "log.key"), w.origin)
	if err != nil {
		return err.Error()
	}
	l, err := ledger.Open(filepath.Join(w.dir, "ledger.db"), ledger.Options{Origin: w.origin, Signer: signer})
	if err != nil {
		return err.Error()
	}
	defer l.Close()
	index := l.Size() // nobody else appends: the record can state its index
	var rec map[string]any
	if err := json.Unmarshal(w.frRecord, &rec); err != nil {
		return err.Error()
	}
	rec["id"] = event
	rec["receipt"] = map[string]any{"id": clear.ReceiptID, "spec": receipt.SpecV3, "url": "/v1/receipts/" + clear.ReceiptID}
	rec["ledger"] = map[string]any{"origin": w.origin, "index": index}
	record, _ := json.Marshal(rec)
	rs := sha256.Sum256(record)
	clear.RecordSHA256 = hex.EncodeToString(rs[:])

	public, openings3, err := receipt.Conceal(clear, &fiscaltest.Rand{})
	if err != nil {
		return err.Error()
	}
	keys, err := receipt.OpenKeyring(filepath.Join(w.dir, "keys"), receipt.EnvProduction, now, &fiscaltest.Rand{})
	if err != nil {
		return err.Error()
	}
	jws, err := keys.Sign(public)
	if err != nil {
		return err.Error()
	}
	res, err := l.Append(context.Background(), ledger.Append{Build: func(i int64) (ledger.Entry, error) {
		return ledger.Entry{ID: event, Leaf: []byte(jws), Docs: map[string][]byte{docRecord: record, docUBL: w.frUBL}}, nil
	}})
	if err != nil {
		return err.Error()
	}
	if res.Index != index {
		return "v3 entry appended at an unexpected index"
	}
	cp, _ := l.Checkpoint()
	proof, err := l.InclusionProof(index, cp.Size)
	if err != nil {
		return err.Error()
	}
	rc, err := receipt.Assemble(jws, index, proof, cp.Note)
	if err != nil {
		return err.Error()
	}
	ob, _ := json.MarshalIndent(openings3, "", "  ")
	w.receiptV3, w.openingsV3 = w.write("receipt-v3.json", rc), w.write("openings-v3.json", ob)
	w.v3JWS, w.v3Index = jws, index
	return ""
}

// server serves a fresh engine on a copy of the data directory, for the
// --server cases.
func (w *world) server(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(w.dir)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "keys", "log.key"), 0o600)
	os.Chmod(filepath.Join(dir, "keys", "production.key"), 0o600)
	os.Chmod(filepath.Join(dir, "keys", "record-id.key"), 0o600)
	cfg := w.cfg
	cfg.Dir = dir
	e := fiscaltest.Engine(t, cfg)
	keys := &httpserver.Keys{}
	h, err := httpserver.New(httpserver.Services{Engine: e, Keys: keys}, httpserver.Options{Logger: fiscaltest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
