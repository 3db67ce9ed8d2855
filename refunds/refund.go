package refunds

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// ObjectRefund is the Object of a refund document.
const ObjectRefund = "refund"

// EventSettlementRefunded is the event of each refund.
const EventSettlementRefunded = "settlement.refunded"

// version is the in-band version of the refund document format.
const version = "fiscal402.refund/1"

// idSeparator joins a settlement id and a refund's number.
const idSeparator = "-refund-"

// Ledger names of refunds.
const (
	// bucketState: settlement id → state JSON, checked and advanced in the
	// committer (no refund exceeds what remains).
	bucketState = "refund-state"
	// indexAccountRefunds: account \x00 refund date (YYYY-MM-DD) \x00
	// createdAt (8-byte big-endian unix nanos) refund id → refund id.
	indexAccountRefunds = "account-refunds"
)

// Claim spaces of refunds: one entry per (settlement, refund number), so
// that two refunds of one settlement are never both number n; one refund
// per refund transfer.
const (
	claimRefund   = "refund"
	claimRefundTx = "refund-tx"
)

// Refund error codes (fiscal.Code.HTTPStatus: 409, 409). A credit note that
// would break a rule is fiscal.CodeCreditNoteRefused (422).
const (
	// CodeRefundExceedsRemaining: the refund is more than what remains of the
	// settled amount after the refunds already recorded.
	CodeRefundExceedsRemaining fiscal.Code = "REFUND_EXCEEDS_REMAINING"
	// CodeRecordPendingReview: a settlement PENDING_MANUAL_REVIEW has no invoice
	// and no determined tax: there is nothing to correct yet.
	CodeRecordPendingReview fiscal.Code = "RECORD_PENDING_REVIEW"
)

// usdcDecimals are the decimals of a USDC amount.
const usdcDecimals = evmverify.USDCDecimals

// maxStaleRetries bounds how often a refund is computed again when the
// settlement's refunds changed under it.
const maxStaleRetries = 64

// Request is the body of POST /settlements/{id}/refunds.
type Request struct {
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
	Transaction *Transaction `json:"transaction,omitempty"`
}

// Transaction is a refund's transfer on chain.
type Transaction struct {
	Network string `json:"network"`
	TxHash  string `json:"txHash"`
}

// Refund is the stored document of a refund entry (see the package
// documentation for its meaning, field by field). It is served as is.
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
	Transaction  *Transaction        `json:"transaction,omitempty"`
	Verification fiscal.Verification `json:"verification"`
	// Payment is the refund's payment: the refunded USDC from the
	// settlement's receiver back to its payer, at the refund's time (the
	// transfer's block time when verified), on the refund transaction when
	// one was given (RefundPayment).
	Payment RefundPayment `json:"payment"`
	// OriginalSettlement is the settlement's payment as recorded.
	OriginalSettlement fiscal.RecordPayment `json:"originalSettlement"`
	Seller             fiscal.RecordSeller  `json:"seller"`
	Supply             fiscal.RecordSupply  `json:"supply"`
	// Classification is the original determination (rate, taxing
	// country, regime, scheme, supply date, time zone).
	Classification vat.Determination `json:"classification"`
	// FX is the correction: negative amounts at the original rates.
	FX                fiscal.RecordFX `json:"fx"`
	OriginalInvoiceID string          `json:"originalInvoiceId"`
	// CreditNote is the refund's credit note; null for a supply that has
	// no invoice, none being required (fiscal.RecordInvoicing.Uninvoiced),
	// whose refund has no invoice to amend.
	CreditNote        *fiscal.InvoiceRef `json:"creditNote"`
	SupersedesReceipt string             `json:"supersedesReceipt"`
	Receipt           fiscal.ReceiptRef  `json:"receipt"`
	Ledger            fiscal.LedgerRef   `json:"ledger"`
}

// RefundPayment is a refund's payment as its document states it: the
// members of fiscal.RecordPayment (the same type: it restates none of
// them), the refund transfer's. A refund recorded without its transfer (no
// Request.Transaction) states no txHash (nor logIndex): there is no refund
// transaction to name, and the settlement's own transfer, from the buyer
// to the seller (originalSettlement), is not the refund's (MarshalJSON).
// Its receipt (service.receipt/4.0.0, whose settlement must state a
// tx_hash, committed) then repeats the settlement's hash there: it names
// the payment refunded, not a transfer of the refund; Verification
// "not_performed" says nothing was proven on chain. A refund document
// recorded before this stated the settlement's hash as payment.txHash; it
// is served as stored (the log commits to their bytes).
type RefundPayment fiscal.RecordPayment

// noTxHash is the member an empty TxHash writes in a RecordPayment's JSON:
// after protocol and network, before the others. Its quotes cannot occur
// unescaped inside a string value.
var noTxHash = []byte(`,"txHash":""`)

// MarshalJSON writes p as fiscal.RecordPayment does, without the txHash
// member when it is empty (no refund transaction): the members of
// RecordPayment in its order, txHash omitted as `json:",omitempty"` would.
func (p RefundPayment) MarshalJSON() ([]byte, error) {
	out, err := json.Marshal(fiscal.RecordPayment(p))
	if err != nil || p.TxHash != "" {
		return out, err
	}
	return bytes.Replace(out, noTxHash, nil, 1), nil
}

// refundPayment is the refund's payment as its document states it: p, its
// receipt's settlement, without the settlement's own tx hash when the
// refund names no transfer (tx nil).
func refundPayment(p fiscal.RecordPayment, tx *Transaction) RefundPayment {
	if tx == nil {
		p.TxHash, p.LogIndex = "", nil
	}
	return RefundPayment(p)
}

// Result is the answer of Create.
type Result struct {
	Outcome fiscal.Outcome // Created, or Replayed for the same Idempotency-Key and body
	Refund  *Refund
	JSON    []byte // the refund document exactly as stored
}

// state is what the committer knows of a settlement's refunds. Exact
// figures are the sums of the refunds' (negative) exact EUR figures; Gross
// and VAT the sums of what their credit notes state, to the cent
// (negative; "" in a state written before they were kept).
type state struct {
	Count        int    `json:"count"`
	RefundedUSDC string `json:"refundedUsdc"`
	GrossExact   string `json:"grossEurExact,omitempty"`
	NetExact     string `json:"netEurExact,omitempty"`
	VATExact     string `json:"vatEurExact,omitempty"`
	Gross        string `json:"grossEur,omitempty"`
	VAT          string `json:"vatEur,omitempty"`
}

// centsKnown reports whether st states its credit notes' cents (a state
// with no refund yet states them all: none).
func (st state) centsKnown() bool { return st.Count == 0 || st.Gross != "" }

func refundID(settlementID string, n int) string {
	return settlementID + idSeparator + strconv.Itoa(n)
}

// errStale: the settlement's refunds changed between reading them and
// committing; the refund is computed again on the new state.
var errStale = errors.New("refunds: the settlement's refunds changed; compute the refund again")

// input is a validated Request.
type input struct {
	amount decimal.Decimal // zero: everything that remains
	reason string
	tx     *Transaction
}

// caip2RE is the form of a CAIP-2 network id.
var caip2RE = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)

// networks are the supported networks (eip155:8453 and eip155:1), the
// engine's: those it knows the USDC contract of (evmverify.USDCContract).
var networks = []string{evmverify.NetworkBase, evmverify.NetworkEthereum}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// parseNetwork accepts a supported CAIP-2 network: missing is a
// BAD_REQUEST, anything else unknown is UNSUPPORTED_NETWORK naming the
// supported ones, as for a settlement's network.
func parseNetwork(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required (CAIP-2, e.g. %q)", evmverify.NetworkBase)
	}
	if !slices.Contains(networks, v) {
		supported := slices.Sorted(slices.Values(networks))
		detail := fmt.Sprintf("network %s is not supported; supported: %s", shown.Quote(v), strings.Join(supported, ", "))
		if !caip2RE.MatchString(v) {
			detail = fmt.Sprintf("%s is not a CAIP-2 network id; supported: %s", shown.Quote(v), strings.Join(supported, ", "))
		}
		return "", &fiscal.Error{Code: fiscal.CodeUnsupportedNetwork, Field: field, Detail: detail}
	}
	return v, nil
}

func (req Request) input() (input, error) {
	var in input
	var err error
	if req.AmountUSDC != "" {
		if in.amount, _, err = wire.USDCAmount("/amountUsdc", req.AmountUSDC); err != nil {
			return in, fiscal.InputError(err)
		}
	}
	if in.reason, err = wire.Text("/reason", req.Reason); err != nil {
		return in, fiscal.InputError(err)
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
		in.tx = &Transaction{Network: network, TxHash: strings.ToLower(t.TxHash)}
	}
	return in, nil
}

// fingerprint identifies the refund request for its Idempotency-Key: the
// settlement and the normalised body ("5" and "5.00" are one amount).
func (in input) fingerprint(settlementID string) []byte {
	var network, tx, amount string
	if in.tx != nil {
		network, tx = in.tx.Network, in.tx.TxHash
	}
	if !in.amount.IsZero() {
		amount = in.amount.String()
	}
	b, _ := json.Marshal(struct{ K, S, A, R, N, T string }{"refund", settlementID, amount, in.reason, network, tx})
	h := sha256.Sum256(b)
	return h[:]
}

// Create records a refund of one of the account's settlements, full (no
// amountUsdc: everything that remains) or partial: a new ledger entry with
// its own receipt, a UBL credit note (381) correcting the settlement's
// invoice at its original VAT rate and ECB rate, and the event
// settlement.refunded; for a supply that has no invoice, none being
// required, no credit note (there is no invoice to amend) and the rest
// alike. For a supply a summary invoice covers, the credit note corrects
// that summary invoice; until the month's summary is issued the refund is
// refused (CREDIT_NOTE_REFUSED). The idempotency key is optional ("" for none); the
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
func Create(ctx context.Context, b *fiscal.Books, settlementID string, req Request, idempotencyKey string) (*Result, error) {
	res, err := create(ctx, b, settlementID, req, idempotencyKey)
	var fe *fiscal.Error
	exceeds := errors.As(err, &fe) && fe.Code == CodeRefundExceedsRemaining
	if idempotencyKey == "" || !exceeds && (err != nil || res.Outcome != fiscal.Existing) {
		return res, err
	}
	// The key's own refund may have been committed, by a concurrent
	// attempt of the same request, after create looked the key up: that
	// refund is the answer, a replay, not a refusal for the amount it took
	// nor the refund its transfer already backs (Existing).
	in, ierr := req.input()
	if ierr != nil {
		return res, err
	}
	holder, o, lerr := b.Lookup("", "", idempotencyKey, in.fingerprint(settlementID))
	if lerr == nil && holder != "" && o == fiscal.Replayed {
		return stored(b, holder, fiscal.Replayed)
	}
	return res, err
}

// create is Create but for the key's refund committed while it ran.
func create(ctx context.Context, b *fiscal.Books, settlementID string, req Request, idempotencyKey string) (*Result, error) {
	if err := fiscal.InputError(wire.IdempotencyKey(idempotencyKey)); err != nil {
		return nil, err
	}
	in, err := req.input()
	if err != nil {
		return nil, err
	}
	e := b.Engine()
	var idem *ledger.Claim
	if idempotencyKey != "" {
		fp := in.fingerprint(settlementID)
		c := fiscal.IdempotencyClaim(b.Account().ID, idempotencyKey, fp)
		idem = &c
		holder, o, err := b.Lookup("", "", idempotencyKey, fp)
		if err != nil {
			return nil, err
		}
		if holder != "" && o == fiscal.Replayed {
			return stored(b, holder, fiscal.Replayed)
		}
	}
	orig, _, err := b.Record(ctx, settlementID)
	if err != nil {
		return nil, err
	}
	if res, err := ofTransfer(b, orig, in); res != nil || err != nil {
		return res, err
	}
	uninvoiced := orig.Invoice == nil && orig.Invoicing.Uninvoiced() // no invoice, none required: no credit note
	var summary *summaryInvoice
	if inv := orig.Invoicing; orig.ReviewStatus == fiscal.StatusProcessed && orig.Invoice == nil && inv != nil && !uninvoiced {
		// Determined, and invoiced by a summary invoice (Seller.Invoicing;
		// a processed supply invoiced per payment has its invoice): the
		// credit note corrects the summary, once it is issued.
		if summary, err = summaryOf(ctx, b, orig); err != nil {
			return nil, err
		}
	}
	if orig.ReviewStatus != fiscal.StatusProcessed || (orig.Invoice == nil && !uninvoiced && summary == nil) || orig.FX.USDPerEUR == nil {
		return nil, &fiscal.Error{Code: CodeRecordPendingReview, Detail: fmt.Sprintf(
			"settlement %s is %s: without a tax determination it has no invoice a credit note could correct; resolve the review first (POST /settlements/%s/resolve), then refund", orig.ID, orig.ReviewStatus, orig.ID)}
	}
	if t := in.tx; t != nil && t.Network == orig.Settlement.Network && t.TxHash == orig.Settlement.TxHash {
		return nil, badRequest("/transaction/txHash", "is the settlement's own payment; name the transfer that paid the refund back")
	}
	if err := notASale(e, in.tx); err != nil {
		return nil, err
	}
	st, err := stateOf(e, orig.ID)
	if err != nil {
		return nil, err
	}
	amount := in.amount
	if amount.IsZero() {
		amount = remainingUSDC(orig, st)
	}
	if err := fits(orig, st, amount); err != nil {
		return nil, err
	}
	verification, err := verify(ctx, e, orig, in.tx, amount)
	if err != nil {
		return nil, err
	}
	var sr *sumRate
	if summary != nil {
		if sr, err = summaryRate(ctx, b, summary, orig); err != nil {
			return nil, err
		}
	}
	now := e.Now().UTC()
	for attempt := 0; ; attempt++ {
		d, err := draft(b, orig, summary, sr, st, in, amount, verification, now, idem)
		if err != nil {
			return nil, err
		}
		res, err := commit(ctx, b, d, idem)
		if !errors.Is(err, errStale) {
			return res, err
		}
		if attempt >= maxStaleRetries {
			return nil, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "the settlement's refunds changed too often while this one was made; retry", RetryAfter: time.Second, Err: errStale}
		}
		if st, err = stateOf(e, orig.ID); err != nil {
			return nil, err
		}
		if summary != nil {
			// Another supply of the summary may have been refunded: its
			// credit notes' running total is read again too.
			if sr, err = summaryRate(ctx, b, summary, orig); err != nil {
				return nil, err
			}
		}
		if in.amount.IsZero() && in.tx == nil {
			// "Everything that remains" is what remains now: a review
			// found a full refund racing partial ones refused for the
			// amount it read first. A transfer's amount was verified on
			// chain and stays; draft refuses it if it no longer fits.
			amount = remainingUSDC(orig, st)
		}
	}
}

// notASale refuses a refund transaction the ledger records as a sale's
// payment (a settlement's, of any account: its record id is
// Engine.RecordID of the transfer; the sandbox draws random ids, and its
// refunds are not checked so): that transfer went from a buyer to a
// seller, and is no refund paid back, whether or not the chain is checked.
func notASale(e *fiscal.Engine, tx *Transaction) error {
	if tx == nil || e.Settings().Environment == receipt.EnvSandbox {
		return nil
	}
	_, err := e.Document(e.RecordID(tx.Network, tx.TxHash))
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	return badRequest("/transaction/txHash", "is recorded as the payment of a sale, from its buyer to its seller; name the transfer that paid the refund back")
}

// txConflict is the answer to a refund transfer that backs another refund.
func txConflict() *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeSettlementConflict, Field: "/transaction/txHash", Detail: "this refund transaction already backs another refund; a transfer backs one refund"}
}

// ofTransfer answers a refund whose transfer already backs a refund: that
// refund (Existing) when it is the same refund (settlement, and amount
// when one is given), else the claim's conflict. nil: the transfer backs
// no refund yet (the commit checks again atomically).
func ofTransfer(b *fiscal.Books, orig *fiscal.Record, in input) (*Result, error) {
	if in.tx == nil {
		return nil, nil
	}
	c := txClaim(b.Account().ID, orig.ID, in.tx, in.amount)
	holder, _, err := b.Engine().Ledger().ClaimHolder(c.Space, c.Key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	r, raw, err := load(b.Engine(), holder)
	if err != nil {
		return nil, err
	}
	if r.Account != b.Account().ID || r.SettlementID != orig.ID || !in.amount.IsZero() && !decimalOr0(r.AmountUSDC).Equal(in.amount) {
		return nil, txConflict()
	}
	return &Result{Outcome: fiscal.Existing, Refund: r, JSON: raw}, nil
}

// stored answers with the account's refund id as stored.
func stored(b *fiscal.Books, id string, o fiscal.Outcome) (*Result, error) {
	r, raw, err := load(b.Engine(), id)
	if err != nil {
		return nil, err
	}
	if r.Account != b.Account().ID {
		return nil, notFound("refund " + shown.Bare(id))
	}
	return &Result{Outcome: o, Refund: r, JSON: raw}, nil
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
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
func remainingUSDC(orig *fiscal.Record, st state) decimal.Decimal {
	return decimalOr0(orig.Settlement.AmountUSDC).Sub(decimalOr0(st.RefundedUSDC))
}

// fits refuses a refund larger than what remains.
func fits(orig *fiscal.Record, st state, amount decimal.Decimal) error {
	remaining := remainingUSDC(orig, st)
	if amount.IsPositive() && !amount.GreaterThan(remaining) {
		return nil
	}
	if !remaining.IsPositive() {
		return &fiscal.Error{Code: CodeRefundExceedsRemaining, Field: "/amountUsdc", Detail: fmt.Sprintf(
			"settlement %s is refunded in full (%s USDC in %d refunds); nothing remains to refund", orig.ID, orig.Settlement.AmountUSDC, st.Count)}
	}
	return &fiscal.Error{Code: CodeRefundExceedsRemaining, Field: "/amountUsdc", Detail: fmt.Sprintf(
		"%s USDC is more than the %s USDC that remain of settlement %s (%s USDC settled, %s refunded)",
		amount.String(), remaining.String(), orig.ID, orig.Settlement.AmountUSDC, decimalOr0(st.RefundedUSDC).String())}
}

// verify checks the refund transfer on chain when its network's mode is
// "required" (fiscal.Engine.VerifyPayment): a USDC Transfer of exactly
// amount from the settlement's receiver back to its payer. Its errors
// name the refund's fields.
func verify(ctx context.Context, e *fiscal.Engine, orig *fiscal.Record, tx *Transaction, amount decimal.Decimal) (fiscal.Verification, error) {
	if tx == nil {
		return fiscal.Verification{Chain: "not_performed"}, nil
	}
	v, err := e.VerifyPayment(ctx, fiscal.Payment{
		Network:        tx.Network,
		TxHash:         tx.TxHash,
		PayerWallet:    orig.Settlement.ReceiverWallet,
		ReceiverWallet: orig.Settlement.PayerWallet,
		Amount:         amount,
	})
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Field != "" {
		cp := *fe
		cp.Field = map[string]string{"/amountUsdc": "/amountUsdc"}[fe.Field]
		if cp.Field == "" {
			cp.Field = "/transaction/txHash"
		}
		if cp.Code == fiscal.CodeChainVerifyFailed {
			cp.Detail = "the refund transfer (from the settlement's receiver " + orig.Settlement.ReceiverWallet + " to its payer " +
				orig.Settlement.PayerWallet + ", " + amount.String() + " USDC) is not what the chain holds: " + fe.Detail
		}
		return fiscal.Verification{}, &cp
	}
	if err == nil && v.Facts != nil {
		// A refund is a reduction "after the supply takes place" (Art. 90(1)
		// Directive 2006/112/EC), and it is dated by its block
		// (RefundDate): a transfer back mined before the sale's own
		// transfer is no refund of it, and would date the correction
		// before the supply it corrects.
		if sold, ok := settledAt(orig); ok && v.Facts.BlockTime.Before(sold) {
			return fiscal.Verification{}, &fiscal.Error{Code: fiscal.CodeChainVerifyFailed, Field: "/transaction/txHash",
				Detail: "the refund transfer was mined at " + v.Facts.BlockTime.UTC().Format(time.RFC3339) + ", before the settlement it would refund (" +
					sold.UTC().Format(time.RFC3339) + "): a refund is paid after the supply"}
		}
	}
	return v, err
}

// settledAt is the earliest time the settlement's payment can have been
// made: its block's time when the chain proved it, else its timestamp less
// the clock skew the engine allows a settlement (evmverify.MaxTimeSkew).
func settledAt(orig *fiscal.Record) (time.Time, bool) {
	if f := orig.Verification.Facts; f != nil {
		return f.BlockTime, true
	}
	t, err := time.Parse(time.RFC3339Nano, orig.Settlement.Timestamp)
	if err != nil {
		return time.Time{}, false
	}
	return t.Add(-evmverify.MaxTimeSkew), true
}

// amounts are a refund's EUR figures, positive (as the credit note states
// them): exact, and to the cent.
type amounts struct {
	grossExact, netExact, vatExact decimal.Decimal
	gross, net, vat                decimal.Decimal
}

// refundAmounts are the refund's EUR figures at the original ECB rate and
// VAT rate, split as the supply was (Art. 73 Directive 2006/112/EC: the
// taxable amount is the whole consideration, VAT included; Art. 90: a
// price reduction after the supply reduces it accordingly): the exact
// gross split into net and VAT at fx.ExactScale decimals (net = gross
// where no VAT is charged), each rounded once to the cent, net = gross −
// VAT. The refund that empties the settlement takes exactly what remains
// of the original exact figures and, to the cent, what remains of the
// invoice's figures after the earlier credit notes, as long as the last
// credit note's VAT stays consistent with its net. draft then replaces
// the cents, where the settlement's refund state states its credit
// notes' cents, by the running difference of the credit notes against
// its own invoice (ownInvoice) or, for a supply a summary invoice covers,
// against the summary at its rate (sumRate.credit): each rounding its own
// share credited, after many small partial refunds, more than the invoice
// charged, and left the last refund a negative remainder.
func refundAmounts(orig *fiscal.Record, st state, amount decimal.Decimal, full bool) amounts {
	var g, n, v decimal.Decimal
	if !full {
		g = fx.ConvertUSDCExact(amount, *orig.FX.USDPerEUR).GrossEURExact
		n, v = g, decimal.Zero
		if det := orig.Classification; det.ChargesVAT() && det.RatePercent != nil {
			n, v = fx.SplitGross(g, det.RatePercent.Decimal())
		}
	} else {
		exact := func(exact, cents string) decimal.Decimal {
			if exact != "" {
				return decimalOr0(exact)
			}
			return decimalOr0(cents) // a record from before exact figures
		}
		g = exact(orig.FX.GrossEURExact, orig.FX.GrossEUR).Add(decimalOr0(st.GrossExact))
		n = exact(orig.FX.NetEURExact, orig.FX.NetEUR).Add(decimalOr0(st.NetExact))
		v = exact(orig.FX.VATEURExact, orig.FX.VATEUR).Add(decimalOr0(st.VATExact))
	}
	a := amounts{grossExact: g, netExact: n, vatExact: v, gross: fx.RoundEUR(g), vat: fx.RoundEUR(v)}
	if full && st.centsKnown() && orig.FX.GrossEUR != "" {
		invGross, invVAT := decimalOr0(orig.FX.GrossEUR), decimalOr0(orig.FX.VATEUR)
		gross := invGross.Add(decimalOr0(st.Gross))
		vat := invVAT.Add(decimalOr0(st.VAT))
		rate := decimal.Zero
		if det := orig.Classification; det.ChargesVAT() && det.RatePercent != nil {
			rate = det.RatePercent.Decimal()
		}
		// Only while the credit note can state them: its VAT within 0.01
		// of its net × rate, as ubl requires of a given breakdown (BR-CO-17,
		// stricter); after many partial refunds the cents left may drift
		// further, and each credit note must be consistent first.
		if vat.Sub(gross.Sub(vat).Mul(rate).Shift(-2)).Abs().LessThanOrEqual(decimal.New(1, -2)) {
			a.gross, a.vat = gross, vat
		}
	}
	a.net = a.gross.Sub(a.vat)
	return a
}

func neg2(d decimal.Decimal) string { return d.Neg().StringFixed(2) }
func negX(d decimal.Decimal) string { return d.Neg().StringFixed(fx.ExactScale) }

// urlPrefix is where the engine's documents are served: the sandbox under
// /sandbox (README "Sandbox").
func urlPrefix(e *fiscal.Engine) string {
	if e.Settings().Environment == receipt.EnvSandbox {
		return "/sandbox"
	}
	return ""
}

// draft makes the refund's entry: the Refund document, its credit note
// (numbered in the committer), its receipt, its claims and the committer's
// check of what remains.
func draft(b *fiscal.Books, orig *fiscal.Record, summary *summaryInvoice, sr *sumRate, st state, in input, amount decimal.Decimal, v fiscal.Verification, now time.Time, idem *ledger.Claim) (*fiscal.Draft, error) {
	e := b.Engine()
	account := b.Account().ID
	if err := fits(orig, st, amount); err != nil {
		return nil, err
	}
	settled := decimalOr0(orig.Settlement.AmountUSDC)
	refunded := decimalOr0(st.RefundedUSDC).Add(amount)
	full := refunded.Equal(settled)
	a := refundAmounts(orig, st, amount, full)
	if sr != nil {
		// A supply a summary invoice covers: the credit note's cents are
		// the running difference of the summary's credit notes at its rate.
		sr.credit(&a, rateOf(orig), orig.Classification.ChargesVAT())
	} else if own := ownInvoice(orig, st); own != nil {
		// Its own invoice: the running difference of its credit notes.
		own.creditTo(&a, rateOf(orig), orig.Classification.ChargesVAT(), full)
	}
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
	rfx := fiscal.RecordFX{
		Pair: orig.FX.Pair, AmountUSDC: amountStr, USDCUSD: orig.FX.USDCUSD, USDPerEUR: orig.FX.USDPerEUR,
		GrossEUR: neg2(a.gross), NetEUR: neg2(a.net), VATEUR: neg2(a.vat),
		GrossEURExact: negX(a.grossExact), NetEURExact: negX(a.netExact), VATEURExact: negX(a.vatExact),
		Rounding: orig.FX.Rounding,
		Note: fmt.Sprintf("correction of settlement %s: the refunded USDC at the settlement's own ECB rate (%s USD per EUR of %s) and VAT rate; negative, it adds to the supply's figures",
			orig.ID, orig.FX.USDPerEUR.Raw, orig.FX.USDPerEUR.RateDate),
	}
	if nat := orig.FX.National; nat != nil && nat.Rate != nil {
		// The correction in the invoicing state's currency, at the
		// original national rate (Art. 230 Directive 2006/112/EC).
		r := nat.Rate.Value
		cp := *nat
		cp.NetExact, cp.VATExact = a.netExact.Mul(r).Neg().String(), a.vatExact.Mul(r).Neg().String()
		cp.Net, cp.VAT = a.net.Mul(r).Round(2).Neg().StringFixed(2), a.vat.Mul(r).Round(2).Neg().StringFixed(2)
		if sr == nil && ownInvoice(orig, st) != nil && invoicelaw.RoundedOnce(nat.Net, nat.VAT, nat.NetExact, nat.VATExact) &&
			invoicelaw.WithExact(&ubl.TaxCurrency{Rate: r}, a.net, a.vat, a.netExact.String(), a.vatExact.String()).Exact != nil {
			// The running difference in the national currency too, as
			// the invoice states it (its exact net and VAT converted and
			// rounded once, Art. 230): the refunds' exact figures so far,
			// this one's included, converted and rounded once, less those
			// before it converted and rounded once. The notes' national
			// figures telescope to the invoice's once the supply is
			// refunded in full (its exact figures refunded), each within
			// 0.01 of its own exact share converted (the credit note
			// states them: ubl.TaxCurrency.Stated and Exact). Every note
			// of its own invoice has its cents within ubl.ExactTolerance
			// (0.02) of its exact share (the running difference of
			// sumRate.creditTo: two cumulative nets each within 0.01 of
			// the exact, its VAT within 0.01 of its net × rate), which
			// ubl and WithExact accept; with 0.01, the last note's net
			// (the invoice's gross − VAT less the rounded exact net
			// credited before) often fell outside, was stated from its
			// cents converted below, and the notes credited more or less
			// than the invoice stated.
			exNet, exVAT := decimalOr0(st.NetExact).Neg(), decimalOr0(st.VATExact).Neg()
			conv := func(before, this decimal.Decimal) string {
				return before.Add(this).Mul(r).Round(2).Sub(before.Mul(r).Round(2)).Neg().StringFixed(2)
			}
			cp.Net, cp.VAT = conv(exNet, a.netExact), conv(exVAT, a.vatExact)
		} else if sr == nil && ownInvoice(orig, st) != nil {
			// An invoice issued before its national VAT was converted
			// from the exact VAT states its euro cents converted: the
			// running difference in the national currency too: the
			// euro cents credited so far, this note's included, converted
			// and rounded once, less those before it converted and rounded
			// once. The notes' national figures telescope to the
			// invoice's (its taxable amount and VAT converted once), where
			// converting each note's own cents drifts a unit per note; each
			// stays within 0.01 of its own cents converted (the credit
			// note states them: ubl.TaxCurrency.Stated).
			credNet, credVAT := decimalOr0(st.VAT).Sub(decimalOr0(st.Gross)), decimalOr0(st.VAT).Neg()
			conv := func(before, this decimal.Decimal) string {
				return before.Add(this).Mul(r).Round(2).Sub(before.Mul(r).Round(2)).Neg().StringFixed(2)
			}
			cp.Net, cp.VAT = conv(credNet, a.net), conv(credVAT, a.vat)
		}
		rfx.National = &cp
	}
	prefix := urlPrefix(e)
	invoiceID := ""
	if corrected := cmp.Or(summary.invoice(), orig.Invoice); corrected != nil {
		invoiceID = corrected.ID
	}
	ref := Refund{
		ID: id, Object: ObjectRefund, Version: version, Custody: fiscal.CustodyNone, Environment: orig.Environment,
		Account: account, SettlementID: orig.ID, Sequence: n, CreatedAt: now.Format(time.RFC3339Nano),
		RefundDate: day, AmountUSDC: amountStr, RefundedUSDC: refunded.StringFixed(usdcDecimals),
		RemainingUSDC: settled.Sub(refunded).StringFixed(usdcDecimals), Full: full, Reason: in.reason,
		Transaction: in.tx, Verification: v,
		OriginalSettlement: orig.Settlement, Seller: orig.Seller, Supply: orig.Supply, Classification: det, FX: rfx,
		OriginalInvoiceID: invoiceID, SupersedesReceipt: orig.Receipt.ID,
		Receipt: fiscal.ReceiptRef{ID: fiscal.ReceiptID(id), Spec: fiscal.ReceiptSpec(det.Jurisdiction), URL: prefix + "/v1/receipts/" + fiscal.ReceiptID(id)},
	}
	// The receipt speaks of the refund transfer: the refunded amount from
	// the settlement's receiver to its payer, at the refund's time, with
	// the correction's figures and the credit note. Without a refund
	// transaction its settlement keeps the settlement's network and tx
	// hash, which every receipt must state (receipt 4.0.0); the document's
	// payment does not (refundPayment).
	rec := *orig
	rec.ID, rec.Object, rec.ReviewStatus, rec.ReviewReasons = id, ObjectRefund, fiscal.StatusProcessed, nil
	rec.Receipt, rec.Verification, rec.FX, rec.Fee, rec.History, rec.Revision = ref.Receipt, v, rfx, nil, nil, 0
	rec.Settlement.AmountUSDC = amountStr
	rec.Settlement.PayerWallet, rec.Settlement.ReceiverWallet = orig.Settlement.ReceiverWallet, orig.Settlement.PayerWallet
	rec.Settlement.Timestamp = at.Format(time.RFC3339Nano)
	rec.Settlement.LogIndex = nil
	if t := in.tx; t != nil {
		contract, _ := evmverify.USDCContract(t.Network)
		rec.Settlement.Network, rec.Settlement.TxHash, rec.Settlement.AssetContract = t.Network, t.TxHash, contract
	}
	if v.Facts != nil {
		li := int64(v.Facts.LogIndex)
		rec.Settlement.LogIndex = &li
	}
	ref.Payment = refundPayment(rec.Settlement, in.tx)
	d, err := correction(b, orig, summary, rec, in, a, day, amountStr, prefix+"/settlements/"+orig.ID+"/refunds/"+id+"/ubl", now)
	if err != nil {
		return nil, err
	}
	d.EventType = EventSettlementRefunded
	d.Postings = append(d.Postings, ledger.Posting{Index: indexAccountRefunds, Key: indexKey(account, day, now, id)})
	if idem != nil {
		d.Claims = append(d.Claims, *idem)
	}
	if t := in.tx; t != nil {
		d.Claims = append(d.Claims, txClaim(account, orig.ID, t, amount))
	}
	d.Claims = append(d.Claims, ledger.Claim{Space: claimRefund, Key: orig.ID + ":" + strconv.Itoa(n), Fingerprint: []byte(id)})
	d.Document = func(sealed *fiscal.Record) ([]byte, error) {
		r := ref
		r.Ledger = sealed.Ledger
		if sealed.Invoice != nil {
			cn := *sealed.Invoice
			r.CreditNote = &cn
		}
		return json.Marshal(r)
	}
	key := []byte(orig.ID)
	d.OnCommit([]ledger.SideKey{{Bucket: bucketState, Key: key}}, func(h *ledger.Hook) error {
		raw, err := h.Get(bucketState, key)
		if err != nil {
			return err
		}
		var cur state
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &cur); err != nil {
				return fmt.Errorf("refunds: stored refund state of %s: %w", orig.ID, err)
			}
		}
		if cur.Count != st.Count || cur.RefundedUSDC != st.RefundedUSDC {
			return errStale
		}
		if err := fits(orig, cur, amount); err != nil {
			return err // cannot happen when the state is the one read; kept as the committer's guarantee
		}
		next := state{
			Count: n, RefundedUSDC: refunded.String(),
			GrossExact: decimalOr0(cur.GrossExact).Sub(a.grossExact).String(),
			NetExact:   decimalOr0(cur.NetExact).Sub(a.netExact).String(),
			VATExact:   decimalOr0(cur.VATExact).Sub(a.vatExact).String(),
		}
		if cur.centsKnown() {
			next.Gross, next.VAT = decimalOr0(cur.Gross).Sub(a.gross).String(), decimalOr0(cur.VAT).Sub(a.vat).String()
		}
		raw, err = json.Marshal(next)
		if err != nil {
			return err
		}
		return h.Put(bucketState, key, raw)
	})
	if sr != nil {
		d.OnCommit(sr.check(a))
	}
	return d, nil
}

// correction drafts the refund's entry with its credit note, numbered in
// the committer, correcting the settlement's invoice, or the summary
// invoice that covers it; or, for a supply that has no invoice, none being
// required (fiscal.RecordInvoicing.Uninvoiced), without one: there is no
// invoice to amend, and the refund still reduces the taxable amount (Art.
// 90 Directive 2006/112/EC) in the OSS return.
func correction(b *fiscal.Books, orig *fiscal.Record, summary *summaryInvoice, rec fiscal.Record, in input, a amounts, day, amount, url string, now time.Time) (*fiscal.Draft, error) {
	corrected := cmp.Or(summary.invoice(), orig.Invoice)
	if corrected == nil {
		return b.CreditNoteDraft(orig, rec, fiscal.CreditNote{}, now) // no invoice: no credit note
	}
	note := ubl.Refund{
		RefundedOn: day, Amount: amount, Asset: orig.Settlement.Asset,
		Invoice: corrected.ID, Rate: orig.FX.USDPerEUR.Raw, RateCurrency: orig.FX.USDPerEUR.Quote, RateDate: orig.FX.USDPerEUR.RateDate,
		Reason: in.reason, Sandbox: orig.Environment == receipt.EnvSandbox,
	}
	paidBy := ""
	if t := in.tx; t != nil {
		note.Network, note.TxHash = t.Network, t.TxHash
		paidBy = t.TxHash
	}
	text, err := ubl.RefundNote("EUR", note)
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the credit note's note could not be written", Err: err}
	}
	law, err := invoiceLaw(b, orig, summary)
	if err != nil {
		return nil, err
	}
	return b.CreditNoteDraft(orig, rec, fiscal.CreditNote{Net: a.net, VAT: a.vat, Note: text, PaidBy: paidBy, URL: url, Law: law, Corrects: summary.invoice(), Buyer: summary.buyerParty()}, now)
}

// summaryInvoice is the issued summary invoice that covers a supply
// (package invoicing): its id, invoice and UBL.
type summaryInvoice struct {
	id       string
	ref      fiscal.InvoiceRef
	ubl      []byte
	buyer    ubl.Party                 // the buyer it names (BG-7): its latest supply's, every supply's alike
	totals   []invoicing.SummaryTotal  // what it charged per VAT rate
	supplies []invoicing.SummarySupply // the supplies it covers
}

// invoice is the summary's invoice, nil for no summary: what a refund of
// a supply corrects is cmp.Or(summary.invoice(), its own invoice).
func (s *summaryInvoice) invoice() *fiscal.InvoiceRef {
	if s == nil {
		return nil
	}
	return &s.ref
}

// buyerParty is the buyer the summary names, nil for no summary.
func (s *summaryInvoice) buyerParty() *ubl.Party {
	if s == nil {
		return nil
	}
	return &s.buyer
}

// summaryOf reads the issued summary invoice that covers orig, a processed
// supply invoiced by a summary (Seller.Invoicing summary_monthly). While
// the month's summary is not issued there is no invoice a credit note
// could correct (Art. 219 Directive 2006/112/EC): the refund is refused
// (CREDIT_NOTE_REFUSED) until it is.
func summaryOf(ctx context.Context, b *fiscal.Books, orig *fiscal.Record) (*summaryInvoice, error) {
	id, err := invoicing.SummaryCovering(b, orig) // orig is read: not again
	if err != nil {
		return nil, err
	}
	if id == "" {
		if id, err = invoicedAlone(ctx, b, orig); err != nil {
			return nil, err
		}
	}
	res, doc, err := invoicing.Summary(ctx, b, id)
	if err != nil {
		return nil, err
	}
	// The summary names the buyer as its latest supply states it
	// (invoicing.summaryDraft, fiscal.Books.InvoiceFrame), which every
	// supply it covers states alike (a month whose records name the buyer
	// otherwise is refused); its credit notes name the same buyer (Art.
	// 219 Directive 2006/112/EC).
	sup := res.Summary.Supplies
	if len(sup) == 0 {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the summary invoice " + id + " lists no supply"}
	}
	latest, _, err := b.Record(ctx, sup[len(sup)-1].RecordID)
	if err != nil {
		return nil, err
	}
	buyer, _ := invoicelaw.BuyerParty(latest.Classification, latest.Buyer.ForInvoiceLaw())
	return &summaryInvoice{id: id, ref: res.Summary.Invoice, ubl: doc, buyer: buyer, totals: res.Summary.Totals, supplies: sup}, nil
}

// invoicedAlone answers for orig, a supply whose month's summary invoice is
// not issued: while it can be issued (or its month has not ended), the
// refund waits for it (CREDIT_NOTE_REFUSED: issue it, then refund); once
// the summary is refused (invoicing.Refusal: a month that mixes seller
// VAT numbers, states' invoicing rules or the buyer's facts, which no
// wait changes), the supply is invoiced on its own (invoicing.IssueAlone,
// Art. 220 Directive 2006/112/EC: a summary is the seller's option, Art.
// 223) and the refund corrects that invoice: the id of the document
// covering it. Should the supply alone be refused too (the account's
// profile now puts it under another state's rules), the refund is
// CREDIT_NOTE_REFUSED naming both refusals: what the operator fixes first.
func invoicedAlone(ctx context.Context, b *fiscal.Books, orig *fiscal.Record) (string, error) {
	inv := orig.Invoicing
	wait := &fiscal.Error{Code: fiscal.CodeCreditNoteRefused, Detail: fmt.Sprintf(
		"settlement %s is invoiced by the summary invoice of %s (invoicing %s), which is not issued yet: a credit note corrects an issued invoice. Issue it once the month has ended (POST /v1/invoices/summaries), then refund", orig.ID, inv.Period, inv.Mode)}
	refused, err := invoicing.Refusal(ctx, b, orig)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodePeriodOpen {
		return "", wait
	}
	if err != nil {
		return "", err
	}
	if refused == nil {
		if id, err := invoicing.SummaryCovering(b, orig); err != nil || id != "" {
			return id, err // issued meanwhile
		}
		return "", wait
	}
	res, err := invoicing.IssueAlone(ctx, b, orig, refused.Detail)
	if errors.As(err, &fe) && fe.Code == fiscal.CodeInvoiceRulesFailed {
		return "", &fiscal.Error{Code: fiscal.CodeCreditNoteRefused, Detail: fmt.Sprintf(
			"settlement %s has no issued invoice a credit note could correct: the summary invoice of %s cannot be issued (%s), and the supply cannot be invoiced on its own either (%s); fix that first, then refund",
			orig.ID, inv.Period, refused.Detail, fe.Detail), Err: err}
	}
	if err != nil {
		return "", err
	}
	return res.Summary.ID, nil
}

// invoiceLaw is the invoicing law orig's invoice followed, which its
// credit notes follow too (Art. 219 Directive 2006/112/EC: a document
// amending an invoice refers to it; the correction is declared where the
// supply was, under the same VAT number, e.g. in the return of the OSS
// state of identification, whatever the account's profile says since):
// the state and basis the record states and the seller's VAT number the
// invoice bears (a non-Union OSS number as its BT-32). An invoice that
// followed no state's rules states no state but its basis (invoicelaw.For:
// a supply outside the Community by a seller with no one member state of
// establishment, Art. 219a(2)(a)(ii)): its credit notes follow no state's
// rules either, whatever state the account's profile names since. Zero
// only for a record that states neither (one recorded before invoices
// stated their law: decided again from the account's profile). For a
// supply a summary invoice covers, the summary's law.
func invoiceLaw(b *fiscal.Books, orig *fiscal.Record, summary *summaryInvoice) (invoicelaw.Law, error) {
	if summary != nil {
		return lawOf(summary.ref, summary.ubl, "the summary invoice "+summary.id)
	}
	if !statesLaw(*orig.Invoice) {
		return invoicelaw.Law{}, nil
	}
	// orig is the record already read and checked: its invoice by the hash
	// it states, without reading the record again (Books.Invoice would).
	doc, _, err := b.Engine().StoredInvoice(orig.ID, orig.Invoice.UBLSHA256)
	if err != nil {
		return invoicelaw.Law{}, err
	}
	return lawOf(*orig.Invoice, doc, "the invoice of settlement "+orig.ID)
}

// statesLaw reports whether the invoice inv states the law it followed: a
// state, or the basis on which it followed none.
func statesLaw(inv fiscal.InvoiceRef) bool { return inv.TaxCountry != "" || inv.TaxBasis != "" }

// lawOf is the law of the invoice inv whose UBL is doc (what names it, for
// an error).
func lawOf(inv fiscal.InvoiceRef, doc []byte, what string) (invoicelaw.Law, error) {
	if !statesLaw(inv) {
		return invoicelaw.Law{}, nil
	}
	vatNumber, taxReg, err := ubl.SellerTaxIDs(doc)
	if err != nil {
		return invoicelaw.Law{}, &fiscal.Error{Code: fiscal.CodeInternal, Detail: what + " cannot be read", Err: err}
	}
	if vatNumber == "" && strings.HasPrefix(taxReg, "EU") {
		vatNumber = taxReg
	}
	return invoicelaw.Law{TaxCountry: inv.TaxCountry, Basis: inv.TaxBasis, SellerVAT: vatNumber}, nil
}

func txClaim(accountID, settlementID string, t *Transaction, amount decimal.Decimal) ledger.Claim {
	return ledger.Claim{Space: claimRefundTx, Key: t.Network + ":" + t.TxHash, Fingerprint: []byte(accountID + "\x00" + settlementID + "\x00" + amount.String())}
}

// indexKey is a refund's key in the account's refund index: account \x00
// refund date \x00 createdAt (8-byte big-endian unix nanos) id.
func indexKey(accountID, day string, t time.Time, id string) []byte {
	k := make([]byte, 0, len(accountID)+len(day)+10+len(id))
	k = append(append(append(k, accountID...), 0), day...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(t.UnixNano()))
	return append(k, id...)
}

// commit appends the refund; a claim held by a concurrent request answers
// as a replay (the Idempotency-Key) or as the refund of the same transfer
// (Existing); a concurrent refund of the same settlement that took its
// number makes this one stale (errStale: compute it again).
func commit(ctx context.Context, b *fiscal.Books, d *fiscal.Draft, idem *ledger.Claim) (*Result, error) {
	e := b.Engine()
	doc, res, err := e.Commit(ctx, d)
	var conflict *ledger.ClaimConflictError
	if errors.As(err, &conflict) && conflict.Claim.Space == claimRefundTx {
		return nil, txConflict()
	}
	if err != nil {
		return nil, err
	}
	if res.Existing {
		for _, c := range d.Claims {
			if (idem == nil || c.Space != idem.Space) && c.Space != claimRefundTx {
				continue
			}
			if holder, _, err := e.Ledger().ClaimHolder(c.Space, c.Key); err == nil && holder == res.ID {
				if c.Space == claimRefundTx {
					return stored(b, res.ID, fiscal.Existing)
				}
				return stored(b, res.ID, fiscal.Replayed)
			}
		}
		return nil, errStale
	}
	var r Refund
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
	}
	return &Result{Outcome: fiscal.Created, Refund: &r, JSON: doc}, nil
}
