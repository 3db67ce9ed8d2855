package refunds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/refunds"
)

var refundNow = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// verifyRefundReceipt fetches and verifies a refund's receipt offline and
// checks what it says of the refund.
func verifyRefundReceipt(t *testing.T, e *fiscal.Engine, b *fiscal.Books, orig *fiscal.Record, r *refunds.Refund) {
	t.Helper()
	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.Receipt(context.Background(), r.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	c, err := receipt.Verify(rc, jwks, e.LogVerifierKey())
	if err != nil {
		t.Fatalf("refund receipt does not verify: %v", err)
	}
	if c.Spec != receipt.SpecV4 || c.ReceiptID != r.Receipt.ID || c.Supersedes != orig.Receipt.ID || c.Log.Index != r.Ledger.Index ||
		c.Settlement.AmountUSDC != r.AmountUSDC || c.FX == nil || c.FX.GrossEUR != r.FX.GrossEUR || c.FX.VATEURExact != r.FX.VATEURExact ||
		c.FX.USDPerEUR.Raw != orig.FX.USDPerEUR.Raw || c.Invoice == nil || c.Invoice.ID != r.CreditNote.ID ||
		c.Classification == nil || c.Classification.Regime != orig.Classification.Regime ||
		orig.Classification.RatePercent != nil && c.Classification.RatePercent != orig.Classification.RatePercent.Decimal().String() {
		t.Errorf("refund receipt claims %+v\nfor refund %+v", c, r)
	}
	// The stored document and the credit note are the ones the receipt
	// commits to: the openings open to their hashes.
	openings, err := b.Openings(context.Background(), r.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := receipt.ParseOpenings(openings)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if err := receipt.VerifyOpening(c, o); err != nil {
			t.Errorf("opening %s: %v", o.Field, err)
		}
	}
}

// TestRefundPartialThenFull: a partial refund and then the rest; the
// corrections are at the original rates, negative, and together cancel
// the supply exactly; each has its receipt, credit note and event.
func TestRefundPartialThenFull(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	res, err := b.Settle(ctx, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	orig := res.Record

	first, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "5.00", Reason: "partly not delivered"}, "refund-1")
	if err != nil {
		t.Fatal(err)
	}
	r1 := first.Refund
	if first.Outcome != fiscal.Created || r1.ID != orig.ID+"-refund-1" || r1.Sequence != 1 || r1.Object != "refund" || r1.SettlementID != orig.ID ||
		r1.AmountUSDC != "5.000000" || r1.RefundedUSDC != "5.000000" || r1.RemainingUSDC != "6.900000" || r1.Full ||
		r1.OriginalInvoiceID != orig.Invoice.ID || r1.SupersedesReceipt != orig.Receipt.ID || r1.RefundDate != "2026-05-04" ||
		r1.CreditNote == nil || r1.CreditNote.ID != "F402-CN-2026-000001" || r1.Classification.SupplyDate != orig.Classification.SupplyDate {
		t.Fatalf("first refund %+v", r1)
	}
	// 5 USDC at the original rate, split at the original 19 %, negative.
	rate := orig.FX.USDPerEUR
	gross := fx.ConvertUSDCExact(dec("5"), *rate).GrossEURExact
	net, vatAmt := fx.SplitGross(gross, dec("19"))
	if !dec(r1.FX.GrossEURExact).Equal(gross.Neg()) || !dec(r1.FX.NetEURExact).Equal(net.Neg()) || !dec(r1.FX.VATEURExact).Equal(vatAmt.Neg()) ||
		r1.FX.GrossEUR != fx.RoundEUR(gross).Neg().StringFixed(2) || r1.FX.USDPerEUR.Raw != rate.Raw || r1.FX.USDPerEUR.RateDate != rate.RateDate {
		t.Errorf("first refund's figures %+v; want gross %s net %s vat %s at %s", r1.FX, gross.Neg(), net.Neg(), vatAmt.Neg(), rate.Raw)
	}

	// The same key and body: the same refund, byte for byte; another
	// body: a conflict that writes nothing.
	again, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "5", Reason: "partly not delivered"}, "refund-1")
	if err != nil || again.Outcome != fiscal.Replayed || !bytes.Equal(again.JSON, first.JSON) {
		t.Fatalf("replay: %v %v", again, err)
	}
	size := e.Ledger().Size()
	if _, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "4"}, "refund-1"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Fatalf("same key, other body: %v", err)
	}
	// A settlement's key used for a refund is a conflict too.
	if _, err := b.Settle(ctx, request(2, "1.00", "FR", "2026-04-10T14:30:00Z"), "shared-key"); err != nil {
		t.Fatal(err)
	}
	size = e.Ledger().Size()
	if _, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "1"}, "shared-key"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Fatalf("a settlement's key: %v", err)
	}
	if _, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "6.900001"}, ""); fiscaltest.Code(err) != "REFUND_EXCEEDS_REMAINING" {
		t.Fatalf("over-refund: %v", err)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("refused refunds wrote %d entries", e.Ledger().Size()-size)
	}

	// The rest: no amount means everything that remains.
	second, err := refunds.Create(ctx, b, orig.ID, refunds.Request{}, "")
	if err != nil {
		t.Fatal(err)
	}
	r2 := second.Refund
	if r2.Sequence != 2 || r2.AmountUSDC != "6.900000" || r2.RemainingUSDC != "0.000000" || !r2.Full || r2.CreditNote.ID != "F402-CN-2026-000002" {
		t.Fatalf("second refund %+v", r2)
	}
	for _, f := range []struct{ orig, a, b string }{
		{orig.FX.GrossEURExact, r1.FX.GrossEURExact, r2.FX.GrossEURExact},
		{orig.FX.NetEURExact, r1.FX.NetEURExact, r2.FX.NetEURExact},
		{orig.FX.VATEURExact, r1.FX.VATEURExact, r2.FX.VATEURExact},
	} {
		if sum := dec(f.orig).Add(dec(f.a)).Add(dec(f.b)); !sum.IsZero() {
			t.Errorf("supply %s + refunds %s, %s = %s, want exactly 0", f.orig, f.a, f.b, sum)
		}
	}
	if _, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: "0.000001"}, ""); fiscaltest.Code(err) != "REFUND_EXCEEDS_REMAINING" {
		t.Fatalf("refund of a settlement refunded in full: %v", err)
	}

	// Reading them back: per settlement, by date, in the record's view.
	list, err := refunds.List(ctx, b, orig.ID)
	if err != nil || len(list) != 2 || list[0].ID != r1.ID || list[1].ID != r2.ID {
		t.Fatalf("Refunds: %v %v", list, err)
	}
	var byDate []string
	err = refunds.ByDate(ctx, b, "2026-05-01", "2026-05-31", func(r *refunds.Refund, raw []byte) error {
		byDate = append(byDate, r.ID)
		return nil
	})
	if err != nil || fmt.Sprint(byDate) != fmt.Sprint([]string{r1.ID, r2.ID}) {
		t.Fatalf("RefundsByDate: %v %v", byDate, err)
	}
	byDate = nil
	if err := refunds.ByDate(ctx, b, "2026-04-01", "2026-05-03", func(r *refunds.Refund, raw []byte) error { byDate = append(byDate, r.ID); return nil }); err != nil || len(byDate) != 0 {
		t.Fatalf("RefundsByDate before the refunds: %v %v", byDate, err)
	}
	_, view, err := refunds.RecordView(ctx, b, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		ID      string `json:"id"`
		Refunds struct {
			RefundedUSDC, RemainingUSDC string
			Items                       []refunds.Refund
		} `json:"refunds"`
	}
	if err := json.Unmarshal(view, &v); err != nil || v.ID != orig.ID || v.Refunds.RefundedUSDC != "11.900000" || v.Refunds.RemainingUSDC != "0.000000" || len(v.Refunds.Items) != 2 {
		t.Fatalf("record view %s: %v", view, err)
	}

	// Receipts verify offline; credit notes pass the validators.
	dir := t.TempDir()
	var files []string
	for _, r := range []*refunds.Refund{r1, r2} {
		verifyRefundReceipt(t, e, b, orig, r)
		doc, sum, err := refunds.CreditNote(ctx, b, orig.ID, r.ID)
		if err != nil || sum != r.CreditNote.UBLSHA256 {
			t.Fatalf("credit note: %v", err)
		}
		for _, want := range []string{"<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>", "<cbc:ID>" + orig.Invoice.ID + "</cbc:ID>", "<cbc:Percent>19</cbc:Percent>", "1 EUR = " + rate.Raw + " USD"} {
			if !bytes.Contains(doc, []byte(want)) {
				t.Errorf("credit note %s lacks %s", r.CreditNote.ID, want)
			}
		}
		f := filepath.Join(dir, r.ID+".xml")
		if err := os.WriteFile(f, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	validateUBL(t, files, false)
	if _, _, err := refunds.CreditNote(ctx, b, "x402-00000000000000000000000000000000", r1.ID); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Errorf("credit note under another settlement: %v", err)
	}

	// One settlement.refunded event per refund, carrying the refund.
	var events []fiscal.Event
	err = e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(fiscal.OutboxEvents, nil, nil, false, func(_, v []byte) bool {
			var ev fiscal.Event
			if err := json.Unmarshal(v, &ev); err != nil {
				t.Errorf("unreadable outbox event: %v", err)
			}
			events = append(events, ev)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var refunded []string
	for _, ev := range events {
		if ev.Account == b.Account().ID && ev.Type == refunds.EventSettlementRefunded {
			doc, err := e.Ledger().Doc(ev.EntryID, fiscal.OutboxDocument)
			if err != nil || !bytes.Contains(doc, []byte(`"object":"refund"`)) {
				t.Errorf("event %s: %s %v", ev.ID, doc, err)
			}
			refunded = append(refunded, ev.EntryID)
		}
	}
	if fmt.Sprint(refunded) != fmt.Sprint([]string{r1.ID, r2.ID}) {
		t.Errorf("refund events %v", refunded)
	}
}

// TestRefundOfPendingRefused: a record waiting for review has no invoice
// to correct.
func TestRefundOfPendingRefused(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	res, err := b.Settle(context.Background(), request(1, "10.00", "", "2026-04-10T14:30:00Z"), "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatal(res, err)
	}
	size := e.Ledger().Size()
	_, err = refunds.Create(context.Background(), b, res.Record.ID, refunds.Request{AmountUSDC: "1"}, "k")
	if fiscaltest.Code(err) != "RECORD_PENDING_REVIEW" || !strings.Contains(err.Error(), "resolve") {
		t.Fatalf("refund of a pending record: %v", err)
	}
	if e.Ledger().Size() != size {
		t.Fatal("the refused refund wrote")
	}
	if _, err := refunds.Create(context.Background(), b, "x402-00000000000000000000000000000000", refunds.Request{}, ""); fiscaltest.Code(err) != fiscal.CodeNotFound {
		t.Fatalf("unknown settlement: %v", err)
	}
	for _, c := range []struct {
		req   refunds.Request
		field string
	}{
		{refunds.Request{AmountUSDC: "0"}, "/amountUsdc"},
		{refunds.Request{AmountUSDC: "-1"}, "/amountUsdc"},
		{refunds.Request{AmountUSDC: "1.0000001"}, "/amountUsdc"},
		{refunds.Request{Transaction: &refunds.Transaction{Network: "eip155:1", TxHash: "0x12"}}, "/transaction/txHash"},
		{refunds.Request{Transaction: &refunds.Transaction{Network: "eip155:999", TxHash: fiscaltest.TxHash(9)}}, "/transaction/network"},
	} {
		_, err := refunds.Create(context.Background(), b, res.Record.ID, c.req, "")
		var fe *fiscal.Error
		if !asError(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want an error at %s", c.req, err, c.field)
		}
	}
}

// TestRefundConcurrentRetries: many goroutines refund one settlement at
// once, some retrying one key, others with keys of their own; the refunds
// never exceed the settlement, the retried key is refunded once, and every
// refund committed is counted once.
func TestRefundConcurrentRetries(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	res, err := b.Settle(ctx, request(1, "10.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	id := res.Record.ID
	const sameKey, ownKeys = 16, 16
	type out struct {
		res *refunds.Result
		err error
		key string
	}
	outs := make(chan out, sameKey+ownKeys)
	var wg sync.WaitGroup
	for i := 0; i < sameKey+ownKeys; i++ {
		key := "retried"
		if i >= sameKey {
			key = fmt.Sprintf("own-%d", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := refunds.Create(ctx, b, id, refunds.Request{AmountUSDC: "1.00"}, key)
			outs <- out{r, err, key}
		}()
	}
	wg.Wait()
	close(outs)
	created := map[string]bool{}
	retriedIDs := map[string]bool{}
	refused := 0
	for o := range outs {
		switch {
		case o.err != nil && fiscaltest.Code(o.err) == "REFUND_EXCEEDS_REMAINING":
			refused++
		case o.err != nil:
			t.Fatalf("%s: %v", o.key, o.err)
		default:
			if o.res.Outcome == fiscal.Created {
				if created[o.res.Refund.ID] {
					t.Fatalf("refund %s created twice", o.res.Refund.ID)
				}
				created[o.res.Refund.ID] = true
			}
			if o.key == "retried" {
				retriedIDs[o.res.Refund.ID] = true
			}
		}
	}
	list, err := refunds.List(ctx, b, id)
	if err != nil {
		t.Fatal(err)
	}
	total := decimal.Zero
	for i, r := range list {
		total = total.Add(dec(r.AmountUSDC))
		if r.Sequence != i+1 || !created[r.ID] || dec(r.RefundedUSDC).Cmp(total) != 0 {
			t.Errorf("refund %d: %+v", i, r)
		}
	}
	if len(list) != len(created) || len(retriedIDs) > 1 || total.GreaterThan(dec("10")) || len(list) != 10 {
		t.Fatalf("%d refunds (%d created, retried key answered %v), total %s of 10.00; %d refused", len(list), len(created), retriedIDs, total, refused)
	}
	t.Logf("%d refunds of 1.00 committed, %d refused as exceeding, the retried key answered with %d refund(s)", len(list), refused, len(retriedIDs))
}

// TestCreditNotesPassValidators refunds sales of the invoicing-law table
// (consumers and businesses, euro and national currencies, sterling under
// UK law, Greek sellers, Peppol profiles) and runs every credit note through XSD, CEN EN 16931 and, for
// business buyers, Peppol BIS 3.0. The sellers include every member state
// outside the euro area (CZ, DK, HU, PL, RO, SE: the VAT also in the
// national currency, Art. 230 Directive 2006/112/EC) and Bulgaria, in the
// euro area since 1 January 2026.
func TestCreditNotesPassValidators(t *testing.T) {
	e := lawEngine(t)
	ctx := context.Background()
	buyers := map[string]fiscaltest.LawBuyer{}
	for _, b := range fiscaltest.LawBuyers() {
		buyers[b.Country] = b
	}
	dir := t.TempDir()
	var en16931, peppol []string
	national := map[string]int{} // credit notes per national currency
	n := 0
	sellers, buyerSet := "IE DE PL FR AT SE GB GR CZ DK HU RO BG", []string{"DE", "AT", "PL", "SE", "GB", "GR", "US"}
	if testing.Short() {
		sellers, buyerSet = "IE DE PL GB", []string{"DE", "PL", "GB", "US"}
	}
	for _, s := range fiscaltest.LawSellers() {
		if !s.Full || !strings.Contains(sellers, s.Country) {
			continue
		}
		books := lawBooks(t, e, s.ID)
		for _, bc := range append(buyerSet, s.Country) {
			for _, b2b := range []bool{false, true} {
				if b2b && buyers[bc].VATNumber == "" {
					continue
				}
				n++
				r := settleOK(t, books, fiscaltest.LawRequest(500+n, buyers[bc], b2b, true))
				if r.ReviewStatus != fiscal.StatusProcessed {
					continue
				}
				res, err := refunds.Create(ctx, books, r.ID, refunds.Request{AmountUSDC: "19.990001", Reason: "returned"}, "")
				if err != nil {
					t.Fatalf("%s → %s b2b=%v: %v", s.ID, bc, b2b, err)
				}
				ref := res.Refund
				verifyRefundReceipt(t, e, books, r, ref)
				if (r.FX.National == nil) != (ref.FX.National == nil) || ref.CreditNote.Profile != r.Invoice.Profile {
					t.Errorf("%s → %s: national %+v / %+v, profile %s / %s", s.ID, bc, r.FX.National, ref.FX.National, ref.CreditNote.Profile, r.Invoice.Profile)
				}
				doc, _, err := refunds.CreditNote(ctx, books, r.ID, ref.ID)
				if err != nil {
					t.Fatal(err)
				}
				if nat := ref.FX.National; nat != nil {
					national[nat.Currency]++
				}
				f := filepath.Join(dir, ref.ID+".xml")
				if err := os.WriteFile(f, doc, 0o644); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(ref.CreditNote.Profile, "peppol") {
					peppol = append(peppol, f)
				} else {
					en16931 = append(en16931, f)
				}
			}
		}
	}
	if len(peppol) == 0 || len(en16931) == 0 {
		t.Fatalf("%d Peppol and %d EN 16931 credit notes: the table should give both", len(peppol), len(en16931))
	}
	want := []string{"CZK", "DKK", "GBP", "HUF", "PLN", "RON", "SEK"}
	if testing.Short() {
		want = []string{"GBP", "PLN"}
	}
	for _, c := range want {
		if national[c] == 0 {
			t.Errorf("no credit note states its VAT in %s (Art. 230); the table's sales should give some: %v", c, national)
		}
	}
	t.Logf("%d credit notes (%d Peppol), in national currencies %v", len(en16931)+len(peppol), len(peppol), national)
	validateUBL(t, en16931, false)
	validateUBL(t, peppol, true)
}

// TestMicroRefund: a refund of one millionth of a USDC (0.00 EUR to the
// cent) still gets a valid credit note, and its exact figures keep the
// correction for a return.
func TestMicroRefund(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	res, err := b.Settle(ctx, request(1, "0.05", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "0.000001"}, "")
	if err != nil {
		t.Fatal(err)
	}
	r := ref.Refund
	if r.FX.GrossEUR != "0.00" || !dec(r.FX.GrossEURExact).IsNegative() || !dec(r.FX.VATEURExact).IsNegative() {
		t.Errorf("micro refund figures %+v", r.FX)
	}
	doc, _, err := refunds.CreditNote(ctx, b, res.Record.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "micro.xml")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	validateUBL(t, []string{f}, false)
}

// TestByDateListsOnlyTheAccountsOwn: the refunds index is not covered by
// the log. An entry posted in account 0's refunds index that holds account
// 1's refund (receipt-less, so it verifies, and naming itself) is
// LEDGER_INTEGRITY for account 0's refunds by date, never account 1's
// refund in account 0's list; account 1 still reads its own.
func TestByDateListsOnlyTheAccountsOwn(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller, irishSeller)
	own, other := fiscaltest.Books(t, e, 0), fiscaltest.Books(t, e, 1)
	ctx := context.Background()
	res, err := other.Settle(ctx, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := refunds.Create(ctx, other, res.Record.ID, refunds.Request{AmountUSDC: "5.00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	const forged = "x402-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-refund-1"
	doc := bytes.Replace(theirs.JSON, []byte(`"id":"`+theirs.Refund.ID+`"`), []byte(`"id":"`+forged+`"`), 1)
	if _, err := e.Ledger().Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: forged, Leaf: doc, Docs: map[string][]byte{"record": doc},
		Postings: []ledger.Posting{{Index: "account-refunds", Key: []byte("acct_0\x00" + theirs.Refund.RefundDate + "\x00" + forged)}},
		Puts:     []ledger.Put{{Bucket: "heads", Key: []byte(forged), Value: []byte(forged)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Document(forged); err != nil {
		t.Fatalf("the listed document itself verifies and names itself: %v", err)
	}
	var listed []string
	collect := func(r *refunds.Refund, _ []byte) error { listed = append(listed, r.ID+" of "+r.Account); return nil }
	if err := refunds.ByDate(ctx, own, "", "", collect); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
		t.Errorf("account 0's refunds by date: listed %v, %v; want LEDGER_INTEGRITY", listed, err)
	}
	listed = nil
	if err := refunds.ByDate(ctx, other, "", "", collect); err != nil || len(listed) != 1 || listed[0] != theirs.Refund.ID+" of acct_1" {
		t.Errorf("account 1's own refunds: %v %v", listed, err)
	}
}
