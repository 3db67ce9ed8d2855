package fiscal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/listing"
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
			Docs:     map[string][]byte{"record": forged, "ubl": ent.Docs["ubl"], fiscal.DocOpenings: ent.Docs[fiscal.DocOpenings]},
			Postings: []ledger.Posting{{Index: "account-time", Key: append([]byte("acct_0\x00\xff\xff\xff\xff\xff\xff\xff\xff"), id...)}},
			Puts:     []ledger.Put{{Bucket: "heads", Key: []byte(id), Value: []byte(id)}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Document(id); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
			t.Fatalf("the altered record: %v, want LEDGER_INTEGRITY", err)
		}
		// The account's list reads it as a read by id does.
		if page, err := listing.List(ctx, b, listing.Query{}); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
			t.Errorf("the list: %v, want LEDGER_INTEGRITY (listed %v)", err, page)
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

// TestRecordUnderAnotherNameIsNeverServed: the way from an id to its entry
// (the heads side bucket, the ledger's keys records) is not covered by the
// signed log as the document's bytes are. When it leads to another
// record's entry, whose bytes and receipt are genuine, the read is
// LEDGER_INTEGRITY: never the other record served under this name.
func TestRecordUnderAnotherNameIsNeverServed(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		var ids [2]string
		for i := range ids {
			res, err := b.Settle(ctx, fiscaltest.Request(i+1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = res.Record.ID
		}
		// A damaged heads bucket: record 0's current state points at record 1's entry.
		if err := e.Ledger().Update(func(tx ledger.Tx) error { return tx.Put("heads", []byte(ids[0]), []byte(ids[1])) }); err != nil {
			t.Fatal(err)
		}
		// A renamed entry: record 1's leaf and documents, unchanged (they
		// verify), stored under a name that is not the record's.
		ent, err := e.Ledger().Entry(ids[1])
		if err != nil {
			t.Fatal(err)
		}
		const renamed = "x402-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
		if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: renamed, Leaf: ent.Leaf, Docs: ent.Docs}}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{ids[0], renamed} {
			if r, _, err := b.Record(ctx, id); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
				served := ""
				if r != nil {
					served = r.ID
				}
				t.Errorf("record %s: %v (served record %q), want LEDGER_INTEGRITY", id, err, served)
			}
			// Every reader of documents by id (refunds, fiscal events,
			// summary invoices, the sandbox) goes through Document.
			if _, err := e.Document(id); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
				t.Errorf("document %s: %v, want LEDGER_INTEGRITY", id, err)
			}
		}
		if r, _, err := b.Record(ctx, ids[1]); err != nil || r.ID != ids[1] {
			t.Fatalf("the genuine record: %v", err)
		}
	})
}

// TestIndexListsOnlyTheAccountsOwn: an account's time index is not covered
// by the log; a posting in it that leads to a document of another account,
// or of another kind, is LEDGER_INTEGRITY for the whole listing (a
// document that verifies: receipt-less, the leaf is the document), never
// another account's record served in the list.
func TestIndexListsOnlyTheAccountsOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forge  func(doc []byte) []byte // from account 1's record, the listed document
		listed string                  // the kind the damaged index lists
	}{
		{"another account's record", func(doc []byte) []byte { return doc }, fiscal.ObjectSettlement},
		{"a fiscal event in the settlements index", func(doc []byte) []byte {
			doc = bytes.Replace(doc, []byte(`"account":"acct_1"`), []byte(`"account":"acct_0"`), 1)
			return bytes.Replace(doc, []byte(`"object":"settlement"`), []byte(`"object":"fiscal_event"`), 1)
		}, fiscal.ObjectSettlement},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T) {
				e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller, fiscaltest.IrishSeller))
				own, other := fiscaltest.Books(t, e, 0), fiscaltest.Books(t, e, 1)
				ctx := context.Background()
				var ids [2]string
				for i, b := range []*fiscal.Books{own, other} {
					res, err := b.Settle(ctx, fiscaltest.Request(i+1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
					if err != nil {
						t.Fatal(err)
					}
					ids[i] = res.Record.ID
				}
				list := func() ([]string, error) {
					page, err := listing.List(ctx, own, listing.Query{Object: tc.listed})
					if err != nil {
						return nil, err
					}
					var got []string
					for _, doc := range page.Data {
						var r struct{ ID string }
						if err := json.Unmarshal(doc, &r); err != nil {
							return nil, err
						}
						got = append(got, r.ID)
					}
					return got, nil
				}
				if got, err := list(); err != nil || len(got) != 1 || got[0] != ids[0] {
					t.Fatalf("before: %v %v, want [%s]", got, err, ids[0])
				}
				raw, err := e.Document(ids[1])
				if err != nil {
					t.Fatal(err)
				}
				const forgedID = "x402-dddddddddddddddddddddddddddddddd"
				doc := bytes.Replace(tc.forge(raw), []byte(`"id":"`+ids[1]+`"`), []byte(`"id":"`+forgedID+`"`), 1)
				key := append([]byte("acct_0\x00\xff\xff\xff\xff\xff\xff\xff\xff"), forgedID...) // the newest of account 0
				if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: forgedID, Leaf: doc,
					Docs:     map[string][]byte{"record": doc},
					Postings: []ledger.Posting{{Index: "account-time", Key: key}},
					Puts:     []ledger.Put{{Bucket: "heads", Key: []byte(forgedID), Value: []byte(forgedID)}}}}); err != nil {
					t.Fatal(err)
				}
				if _, err := e.Document(forgedID); err != nil {
					t.Fatalf("the listed document itself verifies and names itself: %v", err)
				}
				if got, err := list(); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
					t.Errorf("after: listed %v, %v; want LEDGER_INTEGRITY", got, err)
				}
				if _, err := own.Indexed(forgedID, tc.listed); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
					t.Errorf("Indexed: %v, want LEDGER_INTEGRITY", err)
				}
				if _, err := other.Indexed(ids[1], fiscal.ObjectSettlement); err != nil {
					t.Errorf("the genuine record, indexed by its own account: %v", err)
				}
			})
		})
	}
}

// TestEventDocumentIsTheEventsOwn: a webhook's body is the document stored
// in its event's entry, read as a listed one is: the outbox is not covered
// by the log, so an event that leads to another record's entry, or to
// another account's, or that is read through another account's books, is
// LEDGER_INTEGRITY, never a body sent.
func TestEventDocumentIsTheEventsOwn(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller, fiscaltest.IrishSeller))
		own, other := fiscaltest.Books(t, e, 0), fiscaltest.Books(t, e, 1)
		ctx := context.Background()
		var ids [3]string // two of account 0's records, one of account 1's
		for i, b := range []*fiscal.Books{own, own, other} {
			res, err := b.Settle(ctx, fiscaltest.Request(i+1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = res.Record.ID
		}
		event := func(account, record, entry string) fiscal.Event {
			return fiscal.Event{ID: "evt_" + entry, Account: account, RecordID: record, EntryID: entry}
		}
		want, err := e.Document(ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if got, err := own.EventDocument(event("acct_0", ids[0], ids[0])); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("the genuine event: %v", err)
		}
		for name, c := range map[string]struct {
			books *fiscal.Books
			ev    fiscal.Event
		}{
			"another record's entry":                 {own, event("acct_0", ids[0], ids[1])},
			"another account's record":               {own, event("acct_0", ids[2], ids[2])},
			"another account's event, through these": {own, event("acct_1", ids[2], ids[2])},
		} {
			if got, err := c.books.EventDocument(c.ev); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
				t.Errorf("%s: %v (%.60s), want LEDGER_INTEGRITY", name, err, got)
			}
		}
		if _, err := own.EventDocument(event("acct_0", ids[0], "x402-cccccccccccccccccccccccccccccccc")); fiscaltest.Code(err) == "" {
			t.Errorf("an event of no entry: served")
		}
	})
}
