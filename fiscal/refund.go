package fiscal

// Refunds and corrections (issue 20).
//
// # The shape of a refund in the ledger
//
// A refund is never a change of the settlement's record: it is a ledger
// entry of its own, appended after the settlement's, whose stored document
// is a Refund (object "refund", version "fiscal402.refund/1"):
//
//   - Entry id and refund id: "<settlement id>-refund-<n>", n = 1, 2, …
//     the refund's number among the settlement's refunds (Refund.Sequence).
//     The receipt id is "rcpt_" + refund id (GET /v1/receipts/{id} serves
//     it like any receipt). The record id of a refund id, for every helper
//     that strips "-r…", is its settlement's id.
//   - Refund.SettlementID names the original record, Refund.SupersedesReceipt
//     the receipt of the settlement's state the refund corrects (its
//     receipt's "supersedes"), Refund.OriginalInvoiceID the invoice the
//     credit note refers to (UBL BillingReference).
//   - Refund.AmountUSDC is the refunded USDC (positive, ≤ 6 decimals);
//     RefundedUSDC and RemainingUSDC the settlement's totals after it.
//   - Refund.FX is the correction in EUR: the refunded USDC converted at
//     the ORIGINAL record's ECB rate (FX.USDPerEUR is the original rate
//     object, unchanged) and split at the ORIGINAL VAT rate
//     (Classification is the original determination, unchanged). Its
//     amounts are NEGATIVE (gross, net, VAT, exact and to the cent): the
//     correction adds to the supply's figures. The refund that brings the
//     remaining amount to zero takes, for its exact figures, exactly what
//     remains of the original exact figures, so that a settlement refunded
//     in full (in one refund or several) nets to exactly zero EUR.
//     FX.National is the correction in the invoicing state's currency at
//     the original national rate, when the original had one.
//   - Refund.RefundDate is the local day of the refund in the time zone
//     the original supply was dated in (Classification.TimeZone, the
//     taxing state's): the day a return's correction is dated by.
//     Classification.SupplyDate stays the original supply's day: the
//     period the correction belongs to (Art. 61 Implementing Regulation
//     (EU) No 282/2011 lists corrections per original period).
//   - Refund.CreditNote is the UBL 2.1 credit note (type code 381): its
//     number from the account's credit-note series (the invoice prefix,
//     "CN-", the year of issue, six digits: "F402-CN-2026-000001"), drawn
//     in the committer from a gap-free sequence like invoice numbers, its
//     SHA-256 and where it is served (GET
//     /settlements/{id}/refunds/{rid}/ubl).
//   - Refund.Receipt is the refund's service.receipt/3.0.0: its settlement
//     is the refund transfer (amount_usdc the refunded USDC, tx_hash the
//     refund transaction's, or the original's when none was given, both
//     committed), fx the negative correction at the original rate,
//     classification the original's, invoice the credit note's number,
//     supersedes the receipt of the corrected state.
//
// # Reading refunds
//
// Books.Refunds(ctx, settlementID) lists one settlement's refunds, oldest
// first. Books.RefundsByDate(ctx, from, to, fn) streams the account's
// refunds whose RefundDate is within [from, to] (YYYY-MM-DD, inclusive),
// ordered by RefundDate then recording time, without loading them all
// (ledger index "account-refunds"). GET /settlements/{id} adds the
// settlement's refunds to the record it serves (member "refunds"). Each
// refund is also an outbox event, settlement.refunded, whose data is the
// Refund document.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// ObjectRefund is the Object of a refund document.
const ObjectRefund = "refund"

// EventSettlementRefunded is the event of each refund.
const EventSettlementRefunded = "settlement.refunded"

// refundVersion is the in-band version of the refund document format.
const refundVersion = "fiscal402.refund/1"

// refundIDSeparator joins a settlement id and a refund's number.
const refundIDSeparator = "-refund-"

// Ledger names of refunds.
const (
	// bucketRefundState: settlement id → refundState JSON, checked and
	// advanced in the committer (no refund exceeds what remains).
	bucketRefundState = "refund-state"
	// indexAccountRefunds: account \x00 refund date (YYYY-MM-DD) \x00
	// createdAt (8-byte big-endian unix nanos) refund id → refund id.
	indexAccountRefunds = "account-refunds"
)

// RefundRequest is the body of POST /settlements/{id}/refunds.
type RefundRequest struct {
	// AmountUSDC is the USDC refunded (decimal string, at most 6
	// decimals, > 0, at most what remains). Absent: everything that
	// remains (a full refund).
	AmountUSDC string `json:"amountUsdc,omitempty"`
	// Reason is free text kept on the refund and stated on the credit
	// note.
	Reason string `json:"reason,omitempty"`
	// Transaction is the refund transfer on chain, when there is one. On a
	// network whose chain mode is "required" it is verified: a USDC
	// Transfer from the settlement's receiver back to its payer of exactly
	// AmountUSDC.
	Transaction *RefundTransaction `json:"transaction,omitempty"`
}

// RefundTransaction is a refund's transfer on chain.
type RefundTransaction struct {
	Network string `json:"network"`
	TxHash  string `json:"txHash"`
}

// Refund is the stored document of a refund entry (see the comment at the
// top of refund.go for its meaning, field by field). It is served as is.
type Refund struct {
	ID           string `json:"id"`     // "<settlement id>-refund-<n>"
	Object       string `json:"object"` // "refund"
	Version      string `json:"version"`
	Custody      string `json:"custody"`
	Environment  string `json:"environment"`
	Account      string `json:"account"`
	SettlementID string `json:"settlementId"`
	Sequence     int    `json:"sequence"`  // n: 1 for the settlement's first refund
	CreatedAt    string `json:"createdAt"` // when the service recorded it (RFC 3339 UTC)
	// RefundDate is the local day of the refund in Classification.TimeZone.
	RefundDate    string `json:"refundDate"`
	AmountUSDC    string `json:"amountUsdc"`    // refunded by this refund
	RefundedUSDC  string `json:"refundedUsdc"`  // refunded in all, this one included
	RemainingUSDC string `json:"remainingUsdc"` // of the settled amount, after this refund
	Full          bool   `json:"full"`          // nothing remains after it
	Reason        string `json:"reason,omitempty"`
	// Transaction is the refund transfer, when given; Verification says
	// whether it was checked on chain (with the facts).
	Transaction  *RefundTransaction `json:"transaction,omitempty"`
	Verification Verification       `json:"verification"`
	// Settlement is the original payment as recorded.
	Settlement RecordPayment `json:"settlement"`
	Seller     RecordSeller  `json:"seller"`
	Supply     RecordSupply  `json:"supply"`
	// Classification is the original determination (rate, taxing
	// country, regime, scheme, supply date, time zone).
	Classification vat.Determination `json:"classification"`
	// FX is the correction: negative amounts at the original rates.
	FX                RecordFX    `json:"fx"`
	OriginalInvoiceID string      `json:"originalInvoiceId"`
	CreditNote        *InvoiceRef `json:"creditNote"`
	SupersedesReceipt string      `json:"supersedesReceipt"`
	Receipt           ReceiptRef  `json:"receipt"`
	Ledger            LedgerRef   `json:"ledger"`
}

// RefundResult is the answer of Books.Refund.
type RefundResult struct {
	Outcome Outcome // Created, or Replayed for the same Idempotency-Key and body
	Refund  *Refund
	JSON    []byte // the refund document exactly as stored
}

// refundState is what the committer knows of a settlement's refunds.
// Exact figures are the sums of the refunds' (negative) exact EUR figures.
type refundState struct {
	Count        int    `json:"count"`
	RefundedUSDC string `json:"refundedUsdc"`
	GrossExact   string `json:"grossEurExact,omitempty"`
	NetExact     string `json:"netEurExact,omitempty"`
	VATExact     string `json:"vatEurExact,omitempty"`
}

func refundID(settlementID string, n int) string {
	return settlementID + refundIDSeparator + strconv.Itoa(n)
}

// Refunds returns the refunds of one of the account's settlements, oldest
// first (an empty slice when there are none).
func (b *Books) Refunds(ctx context.Context, settlementID string) ([]Refund, error) {
	if _, _, err := b.Record(ctx, settlementID); err != nil {
		return nil, err
	}
	st, err := b.e.refundState(settlementID)
	if err != nil {
		return nil, err
	}
	out := make([]Refund, 0, st.Count)
	for n := 1; n <= st.Count; n++ {
		r, _, err := b.e.loadRefund(refundID(settlementID, n))
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// RefundsByDate calls fn with each of the account's refunds whose
// RefundDate is within [from, to] (YYYY-MM-DD, inclusive; "" leaves that
// side open), ordered by RefundDate then recording time, with the document
// as stored. It reads the index in batches and never holds more than one
// batch: a quarter of any size streams. An error of fn stops the scan and
// is returned.
func (b *Books) RefundsByDate(ctx context.Context, from, to string, fn func(r *Refund, raw []byte) error) error {
	prefix := []byte(b.acc.ID + "\x00")
	var after []byte
	if from != "" {
		after = append(append([]byte(nil), prefix...), from...) // every key of from sorts after it
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hits, err := b.e.ledger.Scan(indexAccountRefunds, prefix, after, false, listBatch)
		if err != nil {
			return storeError(err)
		}
		for _, h := range hits {
			day := string(h.Key[len(prefix):min(len(h.Key), len(prefix)+10)])
			if to != "" && day > to {
				return nil
			}
			r, raw, err := b.e.loadRefund(h.ID)
			if err != nil {
				return err
			}
			if err := fn(r, raw); err != nil {
				return err
			}
		}
		if len(hits) < listBatch {
			return nil
		}
		after = hits[len(hits)-1].Key
	}
}

// refundState reads a settlement's refund state (zero when it has none).
func (e *Engine) refundState(settlementID string) (refundState, error) {
	var st refundState
	raw, err := e.ledger.Get(bucketRefundState, []byte(settlementID))
	if errors.Is(err, ledger.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, storeError(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, &Error{Code: CodeInternal, Detail: "stored refund state is unreadable", Err: err}
	}
	return st, nil
}

// loadRefund reads a refund document, checked against its receipt.
func (e *Engine) loadRefund(id string) (*Refund, []byte, error) {
	raw, err := e.verifiedDoc(id, docRecord)
	var fe *Error
	if errors.As(err, &fe) {
		return nil, nil, fe
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil, notFound("refund " + id)
	}
	if err != nil {
		return nil, nil, storeError(err)
	}
	var r Refund
	if err := json.Unmarshal(raw, &r); err != nil || r.Object != ObjectRefund {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored refund is unreadable", Err: err}
	}
	return &r, raw, nil
}
