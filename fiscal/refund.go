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
//     Refund.Payment is the refund payment as the receipt states it (the
//     refunded USDC from the settlement's receiver to its payer, at the
//     refund's time); Refund.OriginalSettlement the settlement's payment.
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
// # What a refund does not do
//
//   - It does not lower the account's Art. 59c running total
//     (totals.go). Whether a price reduction after the supply (Art. 90
//     Directive 2006/112/EC) takes a year's total back under EUR 10,000
//     once it "exceeded" it is not settled by the text of Art. 59c(1)(c);
//     the engine does not guess, and the total keeps counting the supply.
//   - Only settlement records are refunded: a fiscal event (package
//     fiscalevent) is another object and answers NOT_FOUND here.
//   - A refund is never revised: a wrong refund is corrected by the
//     merchant's next document, not by rewriting this one.
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
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
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
	// Payment is the refund's payment as its receipt states it: the
	// refunded USDC from the settlement's receiver back to its payer, at
	// the refund's time (the transfer's block time when verified), on the
	// refund transaction (the settlement's own network and tx hash when
	// none was given). An auditor compares it with the receipt's
	// settlement.
	Payment RecordPayment `json:"payment"`
	// OriginalSettlement is the settlement's payment as recorded.
	OriginalSettlement RecordPayment `json:"originalSettlement"`
	Seller             RecordSeller  `json:"seller"`
	Supply             RecordSupply  `json:"supply"`
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

// Refund error codes (Code.HTTPStatus: 409, 409, 422).
const (
	// CodeRefundExceedsRemaining: the refund is more than what remains of the
	// settled amount after the refunds already recorded.
	CodeRefundExceedsRemaining Code = "REFUND_EXCEEDS_REMAINING"
	// CodeRecordPendingReview: a settlement PENDING_MANUAL_REVIEW has no invoice
	// and no determined tax: there is nothing to correct yet.
	CodeRecordPendingReview Code = "RECORD_PENDING_REVIEW"
	// CodeCreditNoteRefused: the credit note would break a rule of EN
	// 16931, Peppol or the invoicing law (the account's profile changed
	// since the invoice); the detail names the rules.
	CodeCreditNoteRefused Code = "CREDIT_NOTE_REFUSED"
)

// Claim spaces of refunds: one entry per (settlement, refund number), so
// that two refunds of one settlement are never both number n; one refund
// per refund transfer.
const (
	claimRefund   = "refund"
	claimRefundTx = "refund-tx"
)

// errStaleRefund: the settlement's refunds changed between reading them
// and committing; the refund is computed again on the new state.
var errStaleRefund = errors.New("fiscal: the settlement's refunds changed; compute the refund again")

// refundInput is a validated RefundRequest.
type refundInput struct {
	amount decimal.Decimal // zero: everything that remains
	reason string
	tx     *RefundTransaction
}

func (req RefundRequest) input() (refundInput, error) {
	var in refundInput
	var err error
	if req.AmountUSDC != "" {
		if in.amount, _, err = parseUSDCAmount("/amountUsdc", req.AmountUSDC); err != nil {
			return in, err
		}
	}
	if in.reason, err = parseText("/reason", req.Reason); err != nil {
		return in, err
	}
	if t := req.Transaction; t != nil {
		network, err := parseNetwork("/transaction/network", t.Network)
		if err != nil {
			return in, err
		}
		switch {
		case t.TxHash == "":
			return in, badRequest("/transaction/txHash", "is required")
		case !wire.IsTxHash(t.TxHash):
			return in, badRequest("/transaction/txHash", "must be 0x followed by 64 hexadecimal digits")
		}
		in.tx = &RefundTransaction{Network: network, TxHash: strings.ToLower(t.TxHash)}
	}
	return in, nil
}

// fingerprint identifies the refund request for its Idempotency-Key: the
// settlement and the normalised body ("5" and "5.00" are one amount).
func (in refundInput) fingerprint(settlementID string) []byte {
	var network, tx, amount string
	if in.tx != nil {
		network, tx = in.tx.Network, in.tx.TxHash
	}
	if !in.amount.IsZero() {
		amount = in.amount.String()
	}
	return fingerprintOf(struct{ K, S, A, R, N, T string }{"refund", settlementID, amount, in.reason, network, tx})
}

// Refund records a refund of one of the account's settlements, full (no
// amountUsdc: everything that remains) or partial: a new ledger entry with
// its own receipt, a UBL credit note (381) correcting the settlement's
// invoice at its original VAT rate and ECB rate, and the event
// settlement.refunded. The idempotency key is optional ("" for none); the
// same key with the same body answers the original refund (Outcome
// Replayed), with another body IDEMPOTENCY_CONFLICT.
//
// A refund never exceeds what remains: the committer checks the
// settlement's refund state in the append's own transaction, so concurrent
// refunds are decided one after the other (REFUND_EXCEEDS_REMAINING for
// the one that no longer fits). A settlement PENDING_MANUAL_REVIEW is
// refused (RECORD_PENDING_REVIEW). A refund transaction on a network whose
// chain mode is "required" is verified: a USDC Transfer of exactly the
// amount from the settlement's receiver to its payer (CHAIN_VERIFY_FAILED
// otherwise). A nil error means the refund is committed and fsynced.
//
// Engine.Refund(ctx, account, …) of issue 20 is this method on the
// account's Books: the Engine keeps its 25 methods.
func (b *Books) Refund(ctx context.Context, settlementID string, req RefundRequest, idempotencyKey string) (*RefundResult, error) {
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	in, err := req.input()
	if err != nil {
		return nil, err
	}
	e := b.e
	var idem *ledger.Claim
	if idempotencyKey != "" {
		c := IdempotencyClaim(b.acc.ID, idempotencyKey, in.fingerprint(settlementID))
		idem = &c
		if _, _, err := b.boundKey(c); err != nil {
			return nil, err
		}
		if res, err := b.heldRefund(c, Replayed); res != nil || err != nil {
			return res, err
		}
	}
	orig, _, err := b.Record(ctx, settlementID)
	if err != nil {
		return nil, err
	}
	if res, err := b.refundOfTransfer(orig, in); res != nil || err != nil {
		return res, err
	}
	if orig.ReviewStatus != StatusProcessed || orig.Invoice == nil || orig.FX.USDPerEUR == nil {
		return nil, &Error{Code: CodeRecordPendingReview, Detail: fmt.Sprintf(
			"settlement %s is %s: without a tax determination it has no invoice a credit note could correct; resolve the review first (POST /settlements/%s/resolve), then refund", orig.ID, orig.ReviewStatus, orig.ID)}
	}
	if t := in.tx; t != nil && t.Network == orig.Settlement.Network && t.TxHash == orig.Settlement.TxHash {
		return nil, badRequest("/transaction/txHash", "is the settlement's own payment; name the transfer that paid the refund back")
	}
	st, err := e.refundState(orig.ID)
	if err != nil {
		return nil, err
	}
	amount := in.amount
	if amount.IsZero() {
		amount = remainingUSDC(orig, st)
	}
	if err := refundFits(orig, st, amount); err != nil {
		return nil, err
	}
	verification, err := e.verifyRefund(ctx, orig, in.tx, amount)
	if err != nil {
		return nil, err
	}
	now := e.Now().UTC()
	for attempt := 0; ; attempt++ {
		d, err := b.refundDraft(orig, st, in, amount, verification, now, idem)
		if err != nil {
			return nil, err
		}
		res, err := b.commitRefund(ctx, d, idem)
		if !errors.Is(err, errStaleRefund) {
			return res, err
		}
		if attempt >= maxStaleRetries {
			return nil, &Error{Code: CodeDBUnavailable, Detail: "the settlement's refunds changed too often while this one was made; retry", RetryAfter: time.Second, Err: err}
		}
		if st, err = e.refundState(orig.ID); err != nil {
			return nil, err
		}
	}
}

// refundOfTransfer answers a refund whose transfer already backs a
// refund: that refund (Existing) when it is the same refund (settlement,
// and amount when one is given), else the claim's conflict. nil: the
// transfer backs no refund yet (the commit checks again atomically).
func (b *Books) refundOfTransfer(orig *Record, in refundInput) (*RefundResult, error) {
	if in.tx == nil {
		return nil, nil
	}
	c := refundTxClaim(b.acc.ID, orig.ID, in.tx, in.amount)
	holder, _, err := b.e.ledger.ClaimHolder(c.Space, c.Key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	r, raw, err := b.e.loadRefund(holder)
	if err != nil {
		return nil, err
	}
	if r.Account != b.acc.ID || r.SettlementID != orig.ID || !in.amount.IsZero() && !decimalOr0(r.AmountUSDC).Equal(in.amount) {
		return nil, claimConflict(c)
	}
	return &RefundResult{Outcome: Existing, Refund: r, JSON: raw}, nil
}

// heldRefund answers from the refund that holds claim c (an
// Idempotency-Key, a refund transfer): nil when the claim is free, the
// claim's conflict when it is held with another fingerprint.
func (b *Books) heldRefund(c ledger.Claim, o Outcome) (*RefundResult, error) {
	holder, fp, err := b.e.ledger.ClaimHolder(c.Space, c.Key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	if string(fp) != string(c.Fingerprint) {
		return nil, claimConflict(c)
	}
	return b.storedRefund(holder, o)
}

func (b *Books) storedRefund(id string, o Outcome) (*RefundResult, error) {
	r, raw, err := b.e.loadRefund(id)
	if err != nil {
		return nil, err
	}
	if r.Account != b.acc.ID {
		return nil, notFound("refund " + id)
	}
	return &RefundResult{Outcome: o, Refund: r, JSON: raw}, nil
}

func decimalOr0(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

// remainingUSDC is what remains of the settled amount after the refunds st
// counts.
func remainingUSDC(orig *Record, st refundState) decimal.Decimal {
	return decimalOr0(orig.Settlement.AmountUSDC).Sub(decimalOr0(st.RefundedUSDC))
}

// refundFits refuses a refund larger than what remains.
func refundFits(orig *Record, st refundState, amount decimal.Decimal) error {
	remaining := remainingUSDC(orig, st)
	if amount.IsPositive() && !amount.GreaterThan(remaining) {
		return nil
	}
	if !remaining.IsPositive() {
		return &Error{Code: CodeRefundExceedsRemaining, Field: "/amountUsdc", Detail: fmt.Sprintf(
			"settlement %s is refunded in full (%s USDC in %d refunds); nothing remains to refund", orig.ID, orig.Settlement.AmountUSDC, st.Count)}
	}
	return &Error{Code: CodeRefundExceedsRemaining, Field: "/amountUsdc", Detail: fmt.Sprintf(
		"%s USDC is more than the %s USDC that remain of settlement %s (%s USDC settled, %s refunded)",
		amount.String(), remaining.String(), orig.ID, orig.Settlement.AmountUSDC, decimalOr0(st.RefundedUSDC).String())}
}

// verifyRefund checks the refund transfer on chain when its network's mode
// is "required": a USDC Transfer of exactly amount from the settlement's
// receiver back to its payer.
func (e *Engine) verifyRefund(ctx context.Context, orig *Record, tx *RefundTransaction, amount decimal.Decimal) (Verification, error) {
	if tx == nil || e.cfg.Chain == nil || e.cfg.Chain.Mode(tx.Network) != evmverify.ModeRequired {
		return Verification{Chain: "not_performed"}, nil
	}
	units, err := atomicUSDC(amount)
	if err != nil {
		return Verification{}, err
	}
	facts, err := e.cfg.Chain.Verify(ctx, evmverify.Claim{
		Network:  tx.Network,
		TxHash:   tx.TxHash,
		Asset:    usdcContracts[tx.Network],
		Payer:    orig.Settlement.ReceiverWallet,
		Receiver: orig.Settlement.PayerWallet,
		Amount:   units,
	})
	if err != nil {
		err = chainError(err)
		var fe *Error
		if errors.As(err, &fe) && fe.Field != "" {
			cp := *fe
			cp.Field = map[string]string{"/amountUsdc": "/amountUsdc"}[fe.Field]
			if cp.Field == "" {
				cp.Field = "/transaction/txHash"
			}
			if cp.Code == CodeChainVerifyFailed {
				cp.Detail = "the refund transfer (from the settlement's receiver " + orig.Settlement.ReceiverWallet + " to its payer " +
					orig.Settlement.PayerWallet + ", " + amount.String() + " USDC) is not what the chain holds: " + fe.Detail
			}
			return Verification{}, &cp
		}
		return Verification{}, err
	}
	return Verification{Chain: "verified", Facts: &facts}, nil
}

// refundAmounts are the refund's EUR figures (positive, as the credit note
// states them) at the original rate and VAT rate. The refund that empties
// the settlement takes exactly what remains of the original exact figures.
func refundAmounts(orig *Record, st refundState, amount decimal.Decimal, full bool) amounts {
	if !full {
		conv := fx.ConvertUSDCExact(amount, *orig.FX.USDPerEUR)
		return split(conv.GrossEURExact, orig.Classification)
	}
	exact := func(exact, cents string) decimal.Decimal {
		if exact != "" {
			return decimalOr0(exact)
		}
		return decimalOr0(cents) // a record from before exact figures
	}
	g := exact(orig.FX.GrossEURExact, orig.FX.GrossEUR).Add(decimalOr0(st.GrossExact))
	n := exact(orig.FX.NetEURExact, orig.FX.NetEUR).Add(decimalOr0(st.NetExact))
	v := exact(orig.FX.VATEURExact, orig.FX.VATEUR).Add(decimalOr0(st.VATExact))
	a := amounts{grossExact: g, netExact: n, vatExact: v, gross: fx.RoundEUR(g), vat: fx.RoundEUR(v)}
	a.net = a.gross.Sub(a.vat)
	return a
}

func neg2(d decimal.Decimal) string { return d.Neg().StringFixed(2) }
func negX(d decimal.Decimal) string { return d.Neg().StringFixed(fx.ExactScale) }

// creditNoteSeries is the ledger sequence of the account's credit notes
// issued at issued, and the text before the number: the invoice prefix,
// "CN-", the year (F402-CN-2026-000001), a series of its own (Art. 226(2)
// allows one or more series).
func creditNoteSeries(accountID string, seller Seller, issued time.Time) (series, prefix string) {
	p := seller.InvoicePrefix
	if p == "" {
		p = DefaultInvoicePrefix
	}
	prefix = fmt.Sprintf("%sCN-%d-", p, issued.UTC().Year())
	return "credit-note\x00" + accountID + "\x00" + prefix, prefix
}

// creditNoteURL is where a refund's credit note is served.
func (e *Engine) creditNoteURL(settlementID, refundID string) string {
	return e.urlPrefix() + "/settlements/" + settlementID + "/refunds/" + refundID + "/ubl"
}

// refundDraft makes the refund's entry: the Refund document, its credit
// note (numbered in the committer), its receipt, its claims and the
// committer's check of what remains.
func (b *Books) refundDraft(orig *Record, st refundState, in refundInput, amount decimal.Decimal, v Verification, now time.Time, idem *ledger.Claim) (*Draft, error) {
	e := b.e
	if err := refundFits(orig, st, amount); err != nil {
		return nil, err
	}
	settled := decimalOr0(orig.Settlement.AmountUSDC)
	refunded := decimalOr0(st.RefundedUSDC).Add(amount)
	full := refunded.Equal(settled)
	a := refundAmounts(orig, st, amount, full)
	n := st.Count + 1
	id := refundID(orig.ID, n)
	at := now
	if v.Facts != nil {
		at = v.Facts.BlockTime.UTC()
	}
	det := orig.Classification
	day, ok := vat.LocalDate(det.TimeZone, at)
	if !ok {
		day = at.UTC().Format(time.DateOnly)
	}
	amountStr := amount.StringFixed(usdcDecimals)
	rfx := RecordFX{
		Pair: orig.FX.Pair, AmountUSDC: amountStr, USDCUSD: orig.FX.USDCUSD, USDPerEUR: orig.FX.USDPerEUR,
		GrossEUR: neg2(a.gross), NetEUR: neg2(a.net), VATEUR: neg2(a.vat),
		GrossEURExact: negX(a.grossExact), NetEURExact: negX(a.netExact), VATEURExact: negX(a.vatExact),
		Rounding: orig.FX.Rounding,
		Note: fmt.Sprintf("correction of settlement %s: the refunded USDC at the settlement's own ECB rate (%s USD per EUR of %s) and VAT rate; negative, it adds to the supply's figures",
			orig.ID, orig.FX.USDPerEUR.Raw, orig.FX.USDPerEUR.RateDate),
	}
	var tc *ubl.TaxCurrency
	if nat := orig.FX.National; nat != nil && nat.Rate != nil {
		r := nat.Rate.Value
		cp := *nat
		cp.NetExact, cp.VATExact = a.netExact.Mul(r).Neg().String(), a.vatExact.Mul(r).Neg().String()
		cp.Net, cp.VAT = a.net.Mul(r).Round(2).Neg().StringFixed(2), a.vat.Mul(r).Round(2).Neg().StringFixed(2)
		rfx.National = &cp
		tc = &ubl.TaxCurrency{Code: nat.Currency, Rate: r, RateDate: nat.Rate.RateDate, RateSource: invoicelaw.RateSource(*nat.Rate, nat.Rule)}
	}
	seller := b.acc.Seller
	if e.cfg.Environment == receipt.EnvSandbox {
		seller.InvoicePrefix = "SANDBOX-"
	}
	cn, err := creditNoteFor(orig, seller, a, tc, now, ubl.Refund{
		RefundedOn: day, Amount: amountStr, Asset: orig.Settlement.Asset,
		Invoice: orig.Invoice.ID, Rate: orig.FX.USDPerEUR.Raw, RateCurrency: orig.FX.USDPerEUR.Quote, RateDate: orig.FX.USDPerEUR.RateDate,
		Reason: in.reason, Sandbox: orig.Environment == receipt.EnvSandbox,
	}, in.tx)
	if err != nil {
		return nil, err
	}
	cnDraft, err := ubl.DraftCreditNote(cn)
	var ve *ubl.ValidationError
	if errors.As(err, &ve) {
		return nil, &Error{Code: CodeCreditNoteRefused, Detail: "the credit note would break these rules (check the account's seller profile): " + ve.Error(), Err: err}
	}
	if err != nil {
		return nil, &Error{Code: CodeInternal, Detail: "the credit note could not be rendered", Err: err}
	}
	series, prefix := creditNoteSeries(b.acc.ID, seller, now)

	ref := Refund{
		ID: id, Object: ObjectRefund, Version: refundVersion, Custody: CustodyNone, Environment: orig.Environment,
		Account: b.acc.ID, SettlementID: orig.ID, Sequence: n, CreatedAt: now.Format(time.RFC3339Nano),
		RefundDate: day, AmountUSDC: amountStr, RefundedUSDC: refunded.StringFixed(usdcDecimals),
		RemainingUSDC: settled.Sub(refunded).StringFixed(usdcDecimals), Full: full, Reason: in.reason,
		Transaction: in.tx, Verification: v,
		OriginalSettlement: orig.Settlement, Seller: orig.Seller, Supply: orig.Supply, Classification: det, FX: rfx,
		OriginalInvoiceID: orig.Invoice.ID, SupersedesReceipt: orig.Receipt.ID,
		Receipt: ReceiptRef{ID: ReceiptID(id), Spec: ReceiptSpec(det.Jurisdiction), URL: e.urlPrefix() + "/v1/receipts/" + ReceiptID(id)},
	}
	// The receipt speaks of the refund transfer: the refunded amount from
	// the settlement's receiver to its payer, at the refund's time, with
	// the correction's figures and the credit note.
	rec := *orig
	rec.ID, rec.Object, rec.ReviewStatus, rec.ReviewReasons = id, ObjectRefund, StatusProcessed, nil
	rec.Receipt, rec.Verification, rec.FX, rec.Fee, rec.History, rec.Revision = ref.Receipt, v, rfx, nil, nil, 0
	rec.Settlement.AmountUSDC = amountStr
	rec.Settlement.PayerWallet, rec.Settlement.ReceiverWallet = orig.Settlement.ReceiverWallet, orig.Settlement.PayerWallet
	rec.Settlement.Timestamp = at.Format(time.RFC3339Nano)
	rec.Settlement.LogIndex = nil
	if t := in.tx; t != nil {
		rec.Settlement.Network, rec.Settlement.TxHash, rec.Settlement.AssetContract = t.Network, t.TxHash, usdcContracts[t.Network]
	}
	if v.Facts != nil {
		li := int64(v.Facts.LogIndex)
		rec.Settlement.LogIndex = &li
	}
	rec.Invoice = &InvoiceRef{
		Format: "UBL 2.1 CreditNote", Profile: string(cn.Profile), URL: e.creditNoteURL(orig.ID, id),
		TaxCountry: orig.Invoice.TaxCountry, TaxBasis: orig.Invoice.TaxBasis, IssueDate: cn.IssueDate,
	}
	ref.Payment = rec.Settlement
	claims := receiptClaims(&rec, now)
	claims.Supersedes = orig.Receipt.ID

	d := &Draft{
		Record: rec, EventType: EventSettlementRefunded,
		Postings: []ledger.Posting{{Index: indexAccountRefunds, Key: refundIndexKey(b.acc.ID, day, now, id)}},
		id:       id, createdAt: now, ublDraft: cnDraft, series: series, seriesPrefix: prefix, claims: &claims,
	}
	if idem != nil {
		d.Claims = append(d.Claims, *idem)
	}
	if t := in.tx; t != nil {
		d.Claims = append(d.Claims, refundTxClaim(b.acc.ID, orig.ID, t, amount))
	}
	d.Claims = append(d.Claims, ledger.Claim{Space: claimRefund, Key: orig.ID + ":" + strconv.Itoa(n), Fingerprint: []byte(id)})
	d.Document = func(sealed *Record) ([]byte, error) {
		r := ref
		r.Ledger = sealed.Ledger
		cn := *sealed.Invoice
		r.CreditNote = &cn
		return json.Marshal(r)
	}
	key := []byte(orig.ID)
	d.OnCommit([]ledger.SideKey{{Bucket: bucketRefundState, Key: key}}, func(h *ledger.Hook) error {
		raw, err := h.Get(bucketRefundState, key)
		if err != nil {
			return err
		}
		var cur refundState
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &cur); err != nil {
				return fmt.Errorf("fiscal: stored refund state of %s: %w", orig.ID, err)
			}
		}
		if cur.Count != st.Count || cur.RefundedUSDC != st.RefundedUSDC {
			return errStaleRefund
		}
		if err := refundFits(orig, cur, amount); err != nil {
			return err // cannot happen when the state is the one read; kept as the committer's guarantee
		}
		next, err := json.Marshal(refundState{
			Count: n, RefundedUSDC: refunded.String(),
			GrossExact: decimalOr0(cur.GrossExact).Sub(a.grossExact).String(),
			NetExact:   decimalOr0(cur.NetExact).Sub(a.netExact).String(),
			VATExact:   decimalOr0(cur.VATExact).Sub(a.vatExact).String(),
		})
		if err != nil {
			return err
		}
		return h.Put(bucketRefundState, key, next)
	})
	return d, nil
}

func refundTxClaim(accountID, settlementID string, t *RefundTransaction, amount decimal.Decimal) ledger.Claim {
	return ledger.Claim{Space: claimRefundTx, Key: t.Network + ":" + t.TxHash, Fingerprint: []byte(accountID + "\x00" + settlementID + "\x00" + amount.String())}
}

// refundIndexKey is a refund's key in the account's refund index:
// account \x00 refund date \x00 createdAt (8-byte big-endian unix nanos) id.
func refundIndexKey(accountID, day string, t time.Time, id string) []byte {
	k := make([]byte, 0, len(accountID)+len(day)+10+len(id))
	k = append(append(append(k, accountID...), 0), day...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(t.UnixNano()))
	return append(k, id...)
}

// commitRefund appends the refund; a claim held by a concurrent request
// answers as a replay (the Idempotency-Key) or as the refund of the same
// transfer (Existing); a concurrent refund of the same settlement that took
// its number makes this one stale (errStaleRefund: compute it again).
func (b *Books) commitRefund(ctx context.Context, d *Draft, idem *ledger.Claim) (*RefundResult, error) {
	stored, res, err := b.e.Commit(ctx, d)
	if err != nil {
		return nil, err
	}
	if res.Existing {
		for _, c := range d.Claims {
			if c.Space != claimIdempotency && c.Space != claimRefundTx {
				continue
			}
			if holder, _, err := b.e.ledger.ClaimHolder(c.Space, c.Key); err == nil && holder == res.ID {
				if c.Space == claimIdempotency {
					return b.storedRefund(res.ID, Replayed)
				}
				return b.storedRefund(res.ID, Existing)
			}
		}
		return nil, errStaleRefund
	}
	var r Refund
	if err := json.Unmarshal(stored, &r); err != nil {
		return nil, &Error{Code: CodeInternal, Err: err}
	}
	return &RefundResult{Outcome: Created, Refund: &r, JSON: stored}, nil
}

// creditNoteFor builds the credit note of a refund of orig: the invoice
// the settlement got, under the same invoicing law and parties, with the
// refund's amounts (positive: the document type gives the sign), the
// original VAT rate and category, the original tax-currency rate, its own
// note, and BillingReference to the invoice corrected (BT-25, BT-26).
func creditNoteFor(orig *Record, s Seller, a amounts, tc *ubl.TaxCurrency, issued time.Time, note ubl.Refund, tx *RefundTransaction) (ubl.CreditNote, error) {
	law := invoicelaw.For(orig.Classification, s.ForInvoiceLaw())
	seller := invoicelaw.SellerParty(s.ForInvoiceLaw(), law)
	buyer, _ := invoicelaw.BuyerParty(orig.Classification, orig.Buyer.ForInvoiceLaw())
	inv, err := invoiceFor(orig, law, seller, buyer, a, tc, issued)
	if err != nil {
		return ubl.CreditNote{}, &Error{Code: CodeInternal, Detail: "the credit note could not be built", Err: err}
	}
	if tx != nil {
		note.Network, note.TxHash = tx.Network, tx.TxHash
	}
	text, err := ubl.RefundNote("EUR", note)
	if err != nil {
		return ubl.CreditNote{}, &Error{Code: CodeInternal, Detail: "the credit note's note could not be written", Err: err}
	}
	if det := orig.Classification; det.InvoiceNote != "" {
		text += " " + det.InvoiceNote // the VAT mention the supply required (reverse charge, Art. 226(11a))
	}
	if tc != nil && !strings.HasSuffix(text, ".") {
		text += "."
	}
	inv.ID = "" // numbered in the committer
	inv.Note = text
	// Paid back when a transfer says so; otherwise the amount is owed to
	// the buyer (payable).
	// The means is a USDC transfer back; its id is the refund transfer's
	// hash when known (a national rule may require the means, DE-R-001).
	inv.PaidInFull = tx != nil
	refundTx := ""
	if tx != nil {
		refundTx = tx.TxHash
	}
	inv.PaymentMeans = ubl.StablecoinPaymentMeans(seller.Country, buyer.Country, refundTx)
	return ubl.CreditNote{Invoice: inv, InvoiceRef: orig.Invoice.ID, InvoiceIssueDate: orig.Invoice.IssueDate}, nil
}

// CreditNote returns the UBL credit note of one of the settlement's
// refunds and its SHA-256 (hex), exactly as stored, checked against the
// hash the refund's receipt commits to.
func (b *Books) CreditNote(ctx context.Context, settlementID, refundID string) ([]byte, string, error) {
	r, _, err := b.refundOf(settlementID, refundID)
	if err != nil {
		return nil, "", err
	}
	raw, err := b.e.verifiedDoc(refundID, docUBL)
	var fe *Error
	if errors.As(err, &fe) {
		return nil, "", fe
	}
	if err != nil {
		return nil, "", storeError(err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != r.CreditNote.UBLSHA256 {
		return nil, "", &Error{Code: CodeInternal, Detail: "stored credit note does not match its recorded hash", Err: fmt.Errorf("sha256 %s, refund says %s", got, r.CreditNote.UBLSHA256)}
	}
	return raw, r.CreditNote.UBLSHA256, nil
}

// RefundDocument returns one of the settlement's refunds exactly as stored
// (GET /settlements/{id}/refunds/{rid}).
func (b *Books) RefundDocument(ctx context.Context, settlementID, refundID string) ([]byte, error) {
	_, raw, err := b.refundOf(settlementID, refundID)
	return raw, err
}

// refundOf reads a refund of one of the account's settlements; another
// account's, or another settlement's, is not found.
func (b *Books) refundOf(settlementID, refundID string) (*Refund, []byte, error) {
	if !strings.HasPrefix(refundID, settlementID+refundIDSeparator) {
		return nil, nil, notFound("refund " + refundID + " of settlement " + settlementID)
	}
	r, raw, err := b.e.loadRefund(refundID)
	var fe *Error
	if errors.As(err, &fe) && fe.Code == CodeNotFound || err == nil && (r.Account != b.acc.ID || r.SettlementID != settlementID) {
		return nil, nil, notFound("refund " + refundID + " of settlement " + settlementID)
	}
	if err != nil {
		return nil, nil, err
	}
	return r, raw, nil
}

// RecordRefunds is what GET /settlements/{id} adds to a refunded
// settlement's record (member "refunds"): the totals and every refund as
// stored, oldest first.
type RecordRefunds struct {
	RefundedUSDC  string            `json:"refundedUsdc"`
	RemainingUSDC string            `json:"remainingUsdc"`
	Items         []json.RawMessage `json:"items"`
}

// RecordView returns the record id and its bytes as GET /settlements/{id}
// serves them: the stored record, with a member "refunds" (RecordRefunds)
// appended when the settlement has refunds. A record without refunds is
// served byte for byte as stored. A record a summary invoice covers has
// a member "invoicedBy" (RecordInvoicedBy) appended too.
func (b *Books) RecordView(ctx context.Context, id string) (*Record, []byte, error) {
	r, raw, err := b.recordWithInvoicedBy(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	st, err := b.e.refundState(r.ID)
	if err != nil || st.Count == 0 {
		return r, raw, err
	}
	view := RecordRefunds{
		RefundedUSDC:  decimalOr0(st.RefundedUSDC).StringFixed(usdcDecimals),
		RemainingUSDC: remainingUSDC(r, st).StringFixed(usdcDecimals),
	}
	for n := 1; n <= st.Count; n++ {
		_, doc, err := b.e.loadRefund(refundID(r.ID, n))
		if err != nil {
			return nil, nil, err
		}
		view.Items = append(view.Items, doc)
	}
	add, err := json.Marshal(view)
	if err != nil {
		return nil, nil, &Error{Code: CodeInternal, Err: err}
	}
	if len(raw) < 2 || raw[len(raw)-1] != '}' {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored record is unreadable"}
	}
	out := make([]byte, 0, len(raw)+len(add)+12)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, `,"refunds":`...)
	out = append(out, add...)
	return r, append(out, '}'), nil
}
