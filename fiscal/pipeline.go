package fiscal

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/ubl"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// Supply is what a record is made from: a validated payment, the supplier
// and what the chain said about the payment.
type Supply struct {
	Payment      Payment
	Seller       Seller       // the supplier: the account's seller for its own sales
	Verification Verification // from VerifyPayment, or the chain facts an ingest read
	// CrossBorder are the seller's Art. 59c running totals for the year of
	// the supply and the year before (nil: unknown; the flags decide).
	CrossBorder *vat.CrossBorderTotals
	// AccountTotals: the supply is the account's own sale, decided on the
	// account's running totals (totals.go) and counted toward them when
	// committed; Prepare reads them (CrossBorder must be nil).
	AccountTotals bool
	// Determine replaces the engine's rate table's Determine, for a way in
	// that knows less about the seller than an account does (fiscal
	// events). nil: Config.Rates.Determine.
	Determine func(vat.Input) vat.Determination

	// Object is the kind of record made (Record.Object): "" means
	// ObjectSettlement.
	Object string
	// Registry is a registry answer already had (a re-check, a revision);
	// nil: Prepare asks the registry about the buyer's VAT number.
	Registry *vies.Result
	// RecheckSeller, when set, is the seller a re-check of the buyer's VAT
	// number decides on (Recheck.Seller) instead of Seller: the account's
	// full profile of a fiscal event of its own sale.
	RecheckSeller *Seller
	rateAt        time.Time // the instant the rate is looked up at, when not the payment's (fx.RateOfTheDay)
}

// Draft is a record's first state before it is committed: Prepare makes
// it, Issue adds the invoice and the receipt, Commit appends it. Callers may
// add claims, postings and side writes, and replace the stored document.
type Draft struct {
	Record    Record
	EventType string
	Claims    []ledger.Claim   // unique keys the entry takes, checked in order
	Postings  []ledger.Posting // secondary index entries
	Puts      []ledger.Put     // side data written in the entry's transaction
	// Document, when set, makes the stored document from the sealed record
	// (its ledger position filled in) instead of the record's JSON. Without
	// a receipt (Issue not called) the document is also the log leaf, so
	// that the log commits to every entry.
	Document func(sealed *Record) ([]byte, error)

	id        string // ledger entry id = the event id of this entry
	createdAt time.Time
	amounts   amounts    // the supply's EUR figures (split), when its tax is determined
	ubl       []byte     // the invoice, numbered in the committer
	ublDraft  *ubl.Draft // the invoice before its number
	// series is the invoice numbering series (a ledger sequence) and
	// seriesPrefix what precedes the number in the invoice id.
	series, seriesPrefix string
	total                *totalCheck     // the Art. 59c running total this supply counts toward
	claims               *receipt.Claims // nil: no receipt; the document is the leaf
	bufs                 *sealBufs       // the leaf's and the openings' buffers, until the entry's Append returned (Engine.release)
	// checks run first in the committer, in order, with the side values
	// they declare (Draft.OnCommit); an error fails the append.
	checks []commitCheck
}

// Prepare classifies a supply for the account without writing anything:
// registry lookup of the buyer's VAT number, VAT determination, conversion
// to EUR. The draft is PROCESSED when the treatment is determined and a rate
// exists, else PENDING_MANUAL_REVIEW with its reasons; it carries no
// invoice and no receipt until Issue.
func (e *Engine) Prepare(ctx context.Context, accountID string, s Supply, now time.Time) (*Draft, error) {
	p := s.Payment
	id, err := e.recordID(p)
	if err != nil {
		return nil, err
	}
	reg := s.Registry
	if reg == nil {
		reg = e.lookupVATNumber(ctx, p.Buyer.QualifiedVATNumber())
	}
	determine := s.Determine
	if determine == nil {
		determine = e.cfg.Rates.Determine
	}
	seller := s.Seller
	cb := s.CrossBorder
	var total *totalCheck
	// Art. 59c(1)(a): the totals count for a seller established in one member state.
	if cb == nil && s.AccountTotals && vat.SubjectToThreshold(seller.Country, seller.OtherEstablishments) {
		if cb, total, err = e.totalsFor(accountID, seller, p.Timestamp); err != nil {
			return nil, err
		}
	}
	// The EUR amount first: the Art. 59c count needs the supply's value.
	rfx, gross, fxReason, err := e.convert(ctx, p, cmp.Or(seller.FXPolicy, e.cfg.FXPolicy), s.rateAt)
	if err != nil {
		return nil, err
	}
	if fxReason != nil && total != nil {
		// Without the EUR amount the supply cannot be counted: decide on
		// the account's flags now; the revision made once the rate is out
		// (rates.Retry) counts it.
		cb, total = nil, nil
	}
	det := determine(vat.Input{
		Seller: vat.Seller{
			Country:                  seller.Country,
			OtherEstablishments:      seller.OtherEstablishments,
			VATNumber:                seller.VATNumber,
			OverThreshold:            seller.OverThreshold,
			OptedForDestination:      seller.OptedForDestination,
			CrossBorder:              cb,
			Registrations:            seller.Registrations,
			ElectronicInterface:      seller.ElectronicInterface,
			Art9aRebutted:            seller.Art9aRebutted,
			ReviewSpecialTerritories: seller.ReviewSpecialTerritories,
		},
		Buyer: vat.Buyer{
			Country:    p.Buyer.Country,
			PostalCode: p.Buyer.PostalCode,
			Business:   p.Buyer.VATNumber != "",
			VATNumber:  p.Buyer.VATNumber,
			Registry:   registryCheck(reg),
			Evidence:   p.Buyer.Evidence,
		},
		Supply: vat.Supply{Kind: p.Buyer.SupplyKind, Date: p.Timestamp, GrossEUR: gross, Provider: p.Buyer.Provider,
			Conditions: mergeConditions(seller.RateConditions, p.Buyer.Conditions)},
	})
	if at, other := fx.RateOfTheDay(cmp.Or(seller.FXPolicy, e.cfg.FXPolicy), p.Timestamp, det.SupplyDate); other && s.rateAt.IsZero() {
		s.rateAt, s.Registry = at, reg // decided again on the rate of the supply's local day
		return e.Prepare(ctx, accountID, s, now)
	} else if fxReason == nil && !s.rateAt.IsZero() && !at.Equal(s.rateAt) {
		// On that rate the supply is taxed where its day is another (the
		// Art. 59c(1)(c) threshold turned on it): no day's rate gives back
		// its own day, and Art. 91(2) and 59c do not say which wins.
		fxReason = &vat.Reason{Code: ReasonFXRateDayInDoubt, Detail: fmt.Sprintf("Under the rate of the day (Art. 91(2) Directive 2006/112/EC) the supply was dated %s; on the ECB rate of that day (publication %s) it is taxed in %s, where its day is %s: on either day's rate the Art. 59c(1)(c) threshold places it where the day is the other one. A person decides the place, and so the day and its rate.", s.rateAt.Format(time.DateOnly), rfx.USDPerEUR.RateDate, det.TaxingCountry, det.SupplyDate)}
	}
	var reasons []vat.Reason
	if det.Status != vat.StatusDetermined {
		reasons = append(reasons, det.Reasons...)
	}
	if fxReason != nil {
		reasons = append(reasons, *fxReason)
	}
	status := StatusProcessed
	if len(reasons) > 0 {
		status = StatusPendingReview
	}
	rec := Record{
		ID:            id,
		Object:        cmp.Or(s.Object, ObjectSettlement),
		Version:       recordVersion,
		Custody:       CustodyNone,
		Environment:   e.cfg.Environment,
		ReviewStatus:  status,
		ReviewReasons: reasons,
		Account:       accountID,
		CreatedAt:     now.Format(time.RFC3339Nano),
		Settlement: RecordPayment{
			Protocol:       p.Protocol,
			Network:        p.Network,
			TxHash:         p.TxHash,
			Asset:          p.Asset,
			AssetContract:  settlement.USDCContract(p.Network),
			Scheme:         p.Scheme,
			AmountUSDC:     p.AmountString,
			Timestamp:      p.Timestamp.Format(time.RFC3339Nano),
			PayerWallet:    p.PayerWallet,
			ReceiverWallet: p.ReceiverWallet,
		},
		Seller: RecordSeller{
			LegalName: seller.LegalName,
			VATNumber: seller.VATNumber,
			LegalID:   seller.LegalID,
			Country:   seller.Country,
			Address:   seller.Address,
		},
		Buyer: RecordBuyer{
			Country:          p.Buyer.Country,
			PostalCode:       p.Buyer.PostalCode,
			VATNumber:        p.Buyer.QualifiedVATNumber(), // as the registry was asked; Determine notes a supplied prefix
			VATNumberAsGiven: p.Buyer.PrefixlessVATNumber(),
			Name:             p.Buyer.Name,
			Evidence:         p.Buyer.Evidence,
			Attested:         "merchant",
			Registry:         reg,
			Address:          p.Buyer.Address,
		},
		Supply:         RecordSupply{Kind: p.Buyer.SupplyKind, Description: p.Buyer.Description, Conditions: p.Buyer.Conditions, Provider: p.Buyer.Provider},
		Classification: det,
		FX:             rfx,
		Verification:   s.Verification,
		Receipt:        ReceiptRef{ID: ReceiptID(id), Spec: ReceiptSpec(det.Jurisdiction), URL: e.urlPrefix() + "/v1/receipts/" + ReceiptID(id)},
	}
	if s.Verification.Facts != nil {
		li := int64(s.Verification.Facts.LogIndex)
		rec.Settlement.LogIndex = &li
	}
	var a amounts // the invoice splits them once more (renderInvoice)
	if rfx.GrossEUR != "" {
		rec.Fee = e.cfg.Fee.accrue(gross)
		if det.Determined() {
			a = split(gross, det)
			rec.FX.NetEUR, rec.FX.VATEUR = fx.StringFixed(a.net, 2), fx.StringFixed(a.vat, 2)
			rec.FX.NetEURExact, rec.FX.VATEURExact = fx.StringFixed(a.netExact, fx.ExactScale), fx.StringFixed(a.vatExact, fx.ExactScale)
		}
	}
	d := &Draft{Record: rec, id: id, createdAt: now, amounts: a, EventType: EventSettlementPendingReview}
	if status == StatusProcessed {
		d.EventType = EventSettlementProcessed
		// A processed supply that counts toward the Art. 59c total adds
		// its value in the committer, if the totals are still those read.
		if th := det.Threshold; total != nil && th != nil && th.Counts && th.Counted != nil && th.TotalAfter != nil {
			total.add, total.crossed, total.recordID = *th.Counted, th.Crossed, id
			total.depends = th.Rule == vat.ThresholdWithin || th.Rule == vat.ThresholdCrossed
			total.rule, total.limit = th.Rule, th.Limit
			total.before, total.after = th.TotalBefore, *th.TotalAfter
			d.total = total
		}
	}
	// A VAT number the registry could not confirm yet is asked again in
	// the background; the queue entry is written with the record.
	return d, e.queueRecheck(d, *cmp.Or(s.RecheckSeller, &seller), reg, now)
}

// Issue renders the UBL invoice of a PROCESSED draft and prepares its
// receipt; a draft pending review gets only the receipt (no invoice without
// a tax determination). The seller is the issuer of the invoice: the
// account's full profile (address, legal id).
func (e *Engine) Issue(d *Draft, seller Seller) error {
	r := &d.Record
	r.Seller = RecordSeller{LegalName: seller.LegalName, VATNumber: seller.VATNumber, LegalID: seller.LegalID, Country: seller.Country, Address: seller.Address}
	if r.ReviewStatus == StatusProcessed {
		// The invoicing law may send it to review (a national rate, the
		// customer's address, rules the invoice would break): it then
		// counts toward the Art. 59c total only when a revision processes
		// it (Commit).
		if err := e.attachInvoice(d, seller); err != nil {
			return err
		}
	}
	r.Revision = 1
	r.History = []Revision{{
		Revision: 1, EventType: d.EventType, ReviewStatus: r.ReviewStatus, ReviewReasons: r.ReviewReasons,
		ReceiptID: ReceiptID(d.id), At: r.CreatedAt, // d.createdAt in RFC 3339 (Prepare)
	}}
	c := receiptClaims(r, d.createdAt)
	d.claims = &c
	return nil
}

// documentSeller is s as the engine's documents are numbered for it:
// simulations in the sandbox's own series, whose prefix no account can
// choose (invoicelaw.CheckInvoicePrefix), so that a sandbox document is
// never a number of a real series.
func (e *Engine) documentSeller(s Seller) Seller {
	if e.cfg.Environment == receipt.EnvSandbox {
		s.InvoicePrefix = invoicelaw.SandboxPrefix
	}
	return s
}

// DocumentDraft starts the draft of an account's entry that is not a
// state of a settlement (a summary invoice): rec is its record (ID, Object
// and Invoice, with the account and time set here), u its UBL invoice
// without a number, which takes the next number of the account's invoice
// series (numbering.go; the sandbox's own series in the sandbox) when the
// entry is committed. It has no receipt: its stored document
// (Draft.Document) is its log leaf. The caller adds claims, postings, side
// writes and checks, and commits it with Engine.Commit.
func (b *Books) DocumentDraft(rec Record, eventType string, u *ubl.Draft, at time.Time) *Draft {
	rec.Account, rec.CreatedAt = b.acc.ID, at.Format(time.RFC3339Nano)
	d := &Draft{Record: rec, EventType: eventType, id: rec.ID, createdAt: at, ublDraft: u}
	d.series, d.seriesPrefix = invoiceSeries(b.acc.ID, b.e.documentSeller(b.acc.Seller), cmp.Or(rec.Invoice.IssueDate, at.UTC().Format(time.DateOnly)))
	return d
}

// draft prepares and issues the account's own sale, and queues the registry
// re-check of a VAT number the registry could not confirm.
func (b *Books) draft(ctx context.Context, p Payment, v Verification, now time.Time) (*Draft, error) {
	if p.Buyer.SupplyKind == "" {
		p.Buyer.SupplyKind = b.acc.Seller.SupplyKind
	}
	if p.Buyer.Description == "" {
		p.Buyer.Description = b.acc.Seller.ItemName
	}
	e := b.e
	d, err := e.Prepare(ctx, b.acc.ID, Supply{Payment: p, Seller: b.acc.Seller, Verification: v, AccountTotals: true}, now)
	if err != nil {
		return nil, err
	}
	if err := e.Issue(d, b.acc.Seller); err != nil {
		return nil, err
	}
	return d, errors.Join(keepSeller(d, d.Record.ID, b.acc.Seller, false), queueWaits(d, d.Record.ID, p.Timestamp, e.cfg.Rates, false))
}

// recordID is the id of a payment's record: derived from (network, tx hash)
// in production, so replicas and replays agree; in the sandbox a fresh id
// with 128 random bits (sandboxIDPrefix), because simulations of one payment
// may repeat and sandbox records are readable by anyone who holds the id.
func (e *Engine) recordID(p Payment) (string, error) {
	if e.cfg.Environment != receipt.EnvSandbox {
		return e.ids.ID(p.Network, p.TxHash), nil
	}
	var b [16]byte
	if _, err := io.ReadFull(e.rand, b[:]); err != nil {
		return "", &Error{Code: CodeInternal, Detail: "no randomness for a sandbox id", Err: err}
	}
	return sandboxIDPrefix + hex.EncodeToString(b[:]), nil
}

// RecordID is the id the record of the payment (network, txHash) has, or
// will have, in this engine's production books (the sandbox draws random
// ids). It needs the engine's record-id key: nobody else can compute it
// (package recordid).
func (e *Engine) RecordID(network, txHash string) string {
	return e.ids.ID(network, txHash)
}

// sandboxIDPrefix opens the id of every sandbox record.
const sandboxIDPrefix = "x402-sandbox-"

// urlPrefix is where the environment's documents are served: the sandbox
// under /sandbox (README "Sandbox").
func (e *Engine) urlPrefix() string {
	if e.cfg.Environment == receipt.EnvSandbox {
		return "/sandbox"
	}
	return ""
}

// invoiceURL is where a record's invoice is served.
func (e *Engine) invoiceURL(id string) string {
	if e.cfg.Environment == receipt.EnvSandbox {
		return "/sandbox/v1/settlements/" + id + "/ubl"
	}
	return "/settlements/" + id + "/ubl"
}

// attachInvoice renders the UBL invoice of a processed draft under the
// invoicing law of its supply, still without its number (the next of the
// account's series, drawn when the entry is committed: number,
// numbering.go), or sends the draft to review when no compliant invoice
// can be issued (renderInvoice).
func (e *Engine) attachInvoice(d *Draft, seller Seller) error {
	r := &d.Record
	invoicing, perPayment := e.invoicingFor(d, seller)
	r.Invoicing = invoicing
	b2b := r.Classification.BuyerTreatment == vat.TreatmentB2B
	if !perPayment && !b2b {
		if invoicing.Invoice == invoicedBySummary {
			coverBySummary(d)
		}
		return nil // a summary invoice covers it, or none is required
	}
	profile, issued, law, err := e.renderInvoice(d, seller)
	if err != nil || r.ReviewStatus != StatusProcessed {
		return err
	}
	if !perPayment {
		// A business customer's supply for its summary invoice: its own
		// invoice would be compliant (checked above); the summary
		// invoices it.
		d.ubl, d.ublDraft = nil, nil
		coverBySummary(d)
		return nil
	}
	d.series, d.seriesPrefix = invoiceSeries(r.Account, e.documentSeller(seller), issued)
	r.Invoice = &InvoiceRef{
		Format:  "UBL 2.1 Invoice",
		Profile: string(profile),
		URL:     e.invoiceURL(r.ID),
	}
	describeLaw(r, law, issued)
	return nil
}

// VerifyPayment checks the payment on chain when the network's policy
// requires it. A chain that says no is CHAIN_VERIFY_FAILED (422); a chain
// that cannot be asked, or that has not confirmed enough yet, is
// CHAIN_UNAVAILABLE (503 with Retry-After) and nothing is written.
func (e *Engine) VerifyPayment(ctx context.Context, s Payment) (Verification, error) {
	return e.verifyOnChain(ctx, s)
}

func (e *Engine) verifyOnChain(ctx context.Context, s Payment) (Verification, error) {
	if e.cfg.Chain == nil || e.cfg.Chain.Mode(s.Network) != evmverify.ModeRequired {
		return Verification{Chain: "not_performed"}, nil
	}
	amount, err := atomicUSDC(s.Amount)
	if err != nil {
		return Verification{}, err
	}
	facts, err := e.cfg.Chain.Verify(ctx, evmverify.Claim{
		Network:  s.Network,
		TxHash:   s.TxHash,
		Asset:    settlement.USDCContract(s.Network),
		Payer:    s.PayerWallet,
		Receiver: s.ReceiverWallet,
		Amount:   amount,
		Time:     s.Timestamp, // zero for a refund: its transfer has no time of its own to check
	})
	if err != nil {
		return Verification{}, chainError(err)
	}
	return Verification{Chain: "verified", Facts: &facts}, nil
}

// claimFields maps evmverify.Claim fields to the request's JSON pointers.
var claimFields = map[string]string{
	"TxHash": "/txHash", "Asset": "/asset", "Payer": "/payerWallet", "Receiver": "/receiverWallet", "Amount": "/amountUsdc",
}

func chainError(err error) error {
	var rej *evmverify.RejectedError
	var notFinal *evmverify.NotFinalError
	var claimErr *evmverify.ClaimError
	switch {
	case errors.As(err, &rej):
		return &Error{Code: CodeChainVerifyFailed, Field: "/txHash", Detail: fmt.Sprintf("%s: %s", rej.Reason, rej.Detail), Err: err}
	case errors.As(err, &notFinal):
		retry := notFinal.RetryAfter
		if retry <= 0 {
			retry = 12 * time.Second
		}
		detail := fmt.Sprintf("the transfer is not final yet (%d of %d confirmations); retry later", notFinal.Confirmations, notFinal.Required)
		switch {
		case notFinal.Pending:
			detail = "the transaction is still pending; retry later"
		case notFinal.Confirmations >= notFinal.Required:
			// Confirmed enough; the policy also asks for the node's
			// finalized block (RequireFinalized), not yet at it.
			detail = fmt.Sprintf("the transfer's block is not yet finalized (%d confirmations); retry later", notFinal.Confirmations)
		}
		return &Error{Code: CodeChainUnavailable, Detail: detail, RetryAfter: retry, Err: err}
	case errors.As(err, &claimErr):
		return &Error{Code: CodeBadRequest, Field: claimFields[claimErr.Field], Detail: claimErr.Error(), Err: err}
	case !errors.Is(err, evmverify.ErrUnavailable) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return err // the caller's context ended; an endpoint's own timeout is ErrUnavailable (a review found it a bare context error)
	}
	return &Error{Code: CodeChainUnavailable, Detail: "the chain could not be asked; retry later", RetryAfter: 10 * time.Second, Err: err}
}

// lookupVATNumber asks the registry about the buyer's VAT number, if there is
// one and a registry is configured.
func (e *Engine) lookupVATNumber(ctx context.Context, number string) *vies.Result {
	if number == "" || e.cfg.VIES == nil {
		return nil
	}
	r := e.cfg.VIES.Check(ctx, number)
	return &r
}

// registryCheck is the registry's answer as the vat package takes it.
func registryCheck(r *vies.Result) *vat.RegistryCheck {
	if r == nil {
		return nil
	}
	return &vat.RegistryCheck{
		Status:            string(r.Status),
		Registry:          r.Registry,
		Number:            r.CountryCode + r.Number,
		CheckedAt:         r.RequestDate,
		RequestIdentifier: r.RequestIdentifier,
		Name:              r.Name,
		Address:           r.Address,
		Fault:             r.Fault,
	}
}

// convert converts the settled USDC to EUR at the ECB rate the policy picks.
// A rate that cannot be had is a review reason, never a guess: no rate is
// invented past the last known ECB publication (fx.ErrNotYetPublished).
func (e *Engine) convert(ctx context.Context, s Payment, policy fx.Policy, at time.Time) (RecordFX, decimal.Decimal, *vat.Reason, error) {
	rfx := RecordFX{Pair: "USDC/EUR", AmountUSDC: s.AmountString}
	rate, err := e.cfg.FX.Rate(ctx, "USD", cmp.Or(at, s.Timestamp), policy)
	if errors.Is(err, fx.ErrNotYetPublished) || errors.Is(err, fx.ErrNoRate) {
		detail := fmt.Sprintf("no ECB USD reference rate is known for %s under policy %s: %v", policy.Asked(cmp.Or(at, s.Timestamp)), policy, err)
		rfx.Note = detail
		return rfx, decimal.Decimal{}, &vat.Reason{Code: ReasonFXRateUnavailable, Detail: detail}, nil
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// The caller's context ended (a client gone, a deadline): its
		// error as Commit answers it, not an engine fault.
		return rfx, decimal.Decimal{}, nil, err
	}
	if err != nil {
		return rfx, decimal.Decimal{}, nil, &Error{Code: CodeInternal, Detail: "fx rate lookup failed", Err: err}
	}
	conv := fx.ConvertUSDCExact(s.Amount, rate)
	rfx.USDCUSD = &conv.USDCUSD
	rfx.USDPerEUR = &conv.USDPerEUR
	rfx.GrossEUR = conv.GrossEURString           // StringFixed(2)
	rfx.GrossEURExact = conv.GrossEURExactString // StringFixed(fx.ExactScale)
	rfx.Rounding = conv.Rounding
	return rfx, conv.GrossEURExact, nil, nil
}

// amounts are a supply's EUR figures: exact, and as a document shows them.
type amounts struct {
	grossExact, netExact, vatExact decimal.Decimal // at fx.ExactScale decimals
	gross, net, vat                decimal.Decimal // to the cent
}

// split splits the VAT-inclusive EUR amount the buyer paid (exact, at
// fx.ExactScale decimals) into net and VAT. This is the one place rounding
// to the cent happens for a single supply, and it happens after the split,
// never before (the taxable amount is the whole consideration, Art. 73
// Directive 2006/112/EC):
//
//   - exact: net = gross × 100 / (100 + rate) at 12 decimals, VAT = gross −
//     net exactly (fx.SplitGross). Twelve decimals keep the rounding error
//     of a sum of n supplies below n × 5·10⁻¹³ EUR, far under a cent for any
//     return; the exact figures are what a return, an export, an account
//     total and the Art. 59c count add up, rounding each sum once.
//   - document: gross = the exact gross rounded once to the cent, VAT = the
//     exact VAT rounded once, net = gross − VAT, so that net + VAT = gross
//     on the invoice (EN 16931 BR-CO-15), the VAT shown is the VAT owed to
//     the half cent, and it is within a cent of net × rate (BR-CO-17). A
//     micro-payment's VAT may round to 0.00 on its own document; the exact
//     figure keeps it for the return. Rounding is half away from zero (the rule of
//     most member states; national rounding is national law, CJEU C-484/06
//     Ahold).
//
// Where no VAT is charged (AE, O) net = gross.
func split(grossExact decimal.Decimal, det vat.Determination) amounts {
	a := amounts{grossExact: grossExact, netExact: grossExact, vatExact: decimal.Zero}
	if det.ChargesVAT() && det.RatePercent != nil {
		a.netExact, a.vatExact = fx.SplitGross(grossExact, det.RatePercent.Decimal())
	}
	a.gross = fx.RoundEUR(grossExact)
	a.vat = fx.RoundEUR(a.vatExact)
	a.net = a.gross.Sub(a.vat)
	return a
}

// atomicUSDC converts a USDC amount (at most 6 decimals) to base units.
func atomicUSDC(d decimal.Decimal) (*big.Int, error) {
	scaled := d.Shift(evmverify.USDCDecimals)
	if !scaled.IsInteger() {
		return nil, badRequest("/amountUsdc", "has more than %d decimals", evmverify.USDCDecimals)
	}
	return scaled.BigInt(), nil
}

// mergeConditions joins the account's and the request's attested rate
// conditions, without repeats, in a stable order.
func mergeConditions(account, request []string) []string {
	if len(request) == 0 {
		return account
	}
	out := slices.Clone(account)
	for _, c := range request {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
