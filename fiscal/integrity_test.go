package fiscal_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestAlteredRecordIsNeverServed: an entry whose stored record differs
// from what its receipt commits to (the record's SHA-256, opened with the
// stored salt) is answered LEDGER_INTEGRITY, and its bytes are not served;
// the untouched record is served as before.
func TestAlteredRecordIsNeverServed(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		res, err := b.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		ent, err := e.Ledger().Entry(res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Someone with write access to the file stores another record under a
		// valid receipt: the amount changed, the receipt and salts copied.
		forged := bytes.Replace(ent.Docs["record"], []byte(`"amountUsdc":"11.90"`), []byte(`"amountUsdc":"1.19"`), 1)
		const id = "x402-ffffffffffffffffffffffffffffffff"
		if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: id, Leaf: ent.Leaf,
			Docs: map[string][]byte{"record": forged, "ubl": ent.Docs["ubl"], fiscal.DocOpenings: ent.Docs[fiscal.DocOpenings]},
			Puts: []ledger.Put{{Bucket: "heads", Key: []byte(id), Value: []byte(id)}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Document(id); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
			t.Fatalf("the altered record: %v, want LEDGER_INTEGRITY", err)
		}
		if fiscal.CodeLedgerIntegrity.HTTPStatus() != 500 || fiscal.CodeLedgerIntegrity.Retryable() {
			t.Errorf("LEDGER_INTEGRITY is %d, retryable %v", fiscal.CodeLedgerIntegrity.HTTPStatus(), fiscal.CodeLedgerIntegrity.Retryable())
		}
		if e.Ledger().Stats().IntegrityFailures == 0 {
			t.Errorf("the failure is not counted")
		}
		if _, _, err := b.Record(ctx, res.Record.ID); err != nil {
			t.Fatalf("the genuine record: %v", err)
		}
		if _, _, err := b.Invoice(ctx, res.Record.ID); err != nil {
			t.Fatalf("the genuine invoice: %v", err)
		}
	})
}
