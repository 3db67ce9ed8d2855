package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// prepare does the work that needs no ledger: chain verification, registry
// lookup, VAT determination, FX conversion, amounts and the invoice.
func (e *Engine) prepare(ctx context.Context, acc *Account, s settlement, now time.Time) (*entry, error) {
	verification, err := e.verifyOnChain(ctx, s)
	if err != nil {
		return nil, err
	}
	reg := e.lookupVATNumber(ctx, s.Buyer.VATNumber)
	en, err := e.build(ctx, acc.ID, acc.Seller, s, now, verification, reg)
	if err != nil {
		return nil, err
	}
	return en, e.queueRecheck(en, acc.Seller, reg, now)
}

// build makes the first entry of a record from facts already gathered: the
// verified (or unverified) payment and the registry's answer about the
// buyer's VAT number (nil when none was asked). It classifies, converts,
// splits and renders. Amendments (review.go) call it again with new facts.
func (e *Engine) build(ctx context.Context, accountID string, seller Seller, s settlement, now time.Time, verification Verification, reg *vies.Result) (*entry, error) {
	id := EventID(s.Network, s.TxHash)
	det := vat.Determine(vat.Input{
		Seller: vat.Seller{
			Country:             seller.Country,
			OtherEstablishments: seller.OtherEstablishments,
			VATNumber:           seller.VATNumber,
			OverThreshold:       seller.OverThreshold,
			OptedForDestination: seller.OptedForDestination,
		},
		Buyer: vat.Buyer{
			Country:    s.Buyer.Country,
			PostalCode: s.Buyer.PostalCode,
			Business:   s.Buyer.VATNumber != "",
			VATNumber:  s.Buyer.VATNumber,
			Registry:   registryCheck(reg),
		},
		Supply: vat.Supply{Kind: s.SupplyKind, Date: s.Timestamp},
	})

	var reasons []vat.Reason
	if det.Status != vat.StatusDetermined {
		reasons = append(reasons, det.Reasons...)
	}
	rfx, gross, fxReason, err := e.convert(ctx, s)
	if err != nil {
		return nil, err
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
		Object:        "settlement",
		Version:       RecordVersion,
		Custody:       CustodyNone,
		Environment:   "production",
		ReviewStatus:  status,
		ReviewReasons: reasons,
		Account:       accountID,
		CreatedAt:     now.Format(time.RFC3339Nano),
		Settlement: RecordPayment{
			Protocol:       s.Protocol,
			Network:        s.Network,
			TxHash:         s.TxHash,
			Asset:          s.Asset,
			AssetContract:  usdcContracts[s.Network],
			Scheme:         s.Scheme,
			AmountUSDC:     s.AmountString,
			Timestamp:      s.Timestamp.Format(time.RFC3339Nano),
			PayerWallet:    s.PayerWallet,
			ReceiverWallet: s.ReceiverWallet,
		},
		Seller: RecordSeller{
			LegalName: seller.LegalName,
			VATNumber: seller.VATNumber,
			LegalID:   seller.LegalID,
			Country:   seller.Country,
			Address:   seller.Address,
		},
		Buyer: RecordBuyer{
			Country:    s.Buyer.Country,
			PostalCode: s.Buyer.PostalCode,
			VATNumber:  s.Buyer.VATNumber,
			Name:       s.Buyer.Name,
			Attested:   "merchant",
			Registry:   reg,
		},
		Supply:         RecordSupply{Kind: s.SupplyKind, Description: s.Description},
		Classification: det,
		FX:             rfx,
		Verification:   verification,
		Receipt:        ReceiptRef{ID: ReceiptID(id), Spec: receipt.SpecV1, URL: "/v1/receipts/" + ReceiptID(id)},
	}
	if verification.Facts != nil {
		li := int64(verification.Facts.LogIndex)
		rec.Settlement.LogIndex = &li
	}

	if rfx.GrossEUR != "" {
		rec.Fee = e.pricing.fee(gross)
	}
	en := &entry{id: id, record: rec, createdAt: now, eventType: EventSettlementPendingReview}
	if status == StatusProcessed {
		en.eventType = EventSettlementProcessed
		if err := e.attachInvoice(en, gross, now); err != nil {
			return nil, err
		}
	}
	en.record.Revision = 1
	en.record.History = []Revision{{
		Revision: 1, EventType: en.eventType, ReviewStatus: status, ReviewReasons: reasons,
		ReceiptID: ReceiptID(id), At: now.Format(time.RFC3339Nano),
	}}
	en.claims = receiptClaims(&en.record, now)
	return en, nil
}

// attachInvoice computes net and VAT of a processed record and renders its
// UBL invoice into the entry.
func (e *Engine) attachInvoice(en *entry, gross decimal.Decimal, now time.Time) error {
	r := &en.record
	net, tax := splitGross(gross, r.Classification)
	r.FX.NetEUR = net.StringFixed(2)
	r.FX.VATEUR = tax.StringFixed(2)
	inv, err := invoiceFor(r, net, tax, now)
	if err != nil {
		return err
	}
	en.ubl, err = ubl.RenderInvoice(inv)
	if err != nil {
		return &Error{Code: CodeInternal, Detail: "the invoice could not be rendered", Err: err}
	}
	sum := sha256.Sum256(en.ubl)
	r.Invoice = &InvoiceRef{
		ID:        r.ID,
		Format:    "UBL 2.1 Invoice",
		Profile:   string(inv.Profile),
		UBLSHA256: hex.EncodeToString(sum[:]),
		URL:       "/settlements/" + r.ID + "/ubl",
	}
	return nil
}

// verifyOnChain checks the payment on chain when the network's policy
// requires it. A chain that says no is CHAIN_VERIFY_FAILED (422); a chain
// that cannot be asked, or that has not confirmed enough yet, is
// CHAIN_UNAVAILABLE (503 with Retry-After) and nothing is written.
func (e *Engine) verifyOnChain(ctx context.Context, s settlement) (Verification, error) {
	if s.Facts != nil {
		return Verification{Chain: "verified", Facts: s.Facts}, nil
	}
	if e.chain == nil || e.chain.Mode(s.Network) != evmverify.ModeRequired {
		return Verification{Chain: "not_performed"}, nil
	}
	amount, err := atomicUSDC(s.Amount)
	if err != nil {
		return Verification{}, err
	}
	facts, err := e.chain.Verify(ctx, evmverify.Claim{
		Network:  s.Network,
		TxHash:   s.TxHash,
		Asset:    usdcContracts[s.Network],
		Payer:    s.PayerWallet,
		Receiver: s.ReceiverWallet,
		Amount:   amount,
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
		if notFinal.Pending {
			detail = "the transaction is still pending; retry later"
		}
		return &Error{Code: CodeChainUnavailable, Detail: detail, RetryAfter: retry, Err: err}
	case errors.As(err, &claimErr):
		return &Error{Code: CodeBadRequest, Field: claimFields[claimErr.Field], Detail: claimErr.Error(), Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &Error{Code: CodeChainUnavailable, Detail: "the chain could not be asked; retry later", RetryAfter: 10 * time.Second, Err: err}
}

// lookupVATNumber asks the registry about the buyer's VAT number, if there is
// one and a registry is configured.
func (e *Engine) lookupVATNumber(ctx context.Context, number string) *vies.Result {
	if number == "" || e.vies == nil {
		return nil
	}
	r := e.vies.Check(ctx, number)
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
// A rate that cannot be had is a review reason, never a guess (DESIGN.md FX).
func (e *Engine) convert(ctx context.Context, s settlement) (RecordFX, decimal.Decimal, *vat.Reason, error) {
	rfx := RecordFX{Pair: "USDC/EUR", AmountUSDC: s.AmountString}
	rate, err := e.fx.Rate(ctx, "USD", s.Timestamp, e.fxPolicy)
	if errors.Is(err, fx.ErrNotYetPublished) || errors.Is(err, fx.ErrNoRate) {
		detail := fmt.Sprintf("no ECB USD reference rate is known for %s under policy %s: %v", s.Timestamp.Format("2006-01-02"), e.fxPolicy, err)
		rfx.Note = detail
		return rfx, decimal.Decimal{}, &vat.Reason{Code: ReasonFXRateUnavailable, Detail: detail}, nil
	}
	if err != nil {
		return rfx, decimal.Decimal{}, nil, &Error{Code: CodeInternal, Detail: "fx rate lookup failed", Err: err}
	}
	conv := fx.ConvertUSDC(s.Amount, rate)
	rfx.USDCUSD = &conv.USDCUSD
	rfx.USDPerEUR = &conv.USDPerEUR
	rfx.GrossEUR = conv.GrossEUR.StringFixed(2)
	rfx.Rounding = conv.Rounding
	return rfx, conv.GrossEUR, nil, nil
}

// splitGross splits the VAT-inclusive EUR amount the buyer paid into net and
// VAT (DESIGN.md "Gross, not net"): net = gross × 100 / (100 + rate), rounded
// to the cent half away from zero on the exact quotient (fx.DivEUR, the one
// EUR rounding rule: no double rounding); VAT = gross − net, so net + VAT =
// gross to the cent (EN 16931 BR-CO-15) and VAT is within about half a cent
// of net × rate (BR-CO-17 tolerates one unit). Where no VAT is charged (AE,
// O) net = gross.
func splitGross(gross decimal.Decimal, det vat.Determination) (net, tax decimal.Decimal) {
	if !det.ChargesVAT() || det.RatePercent == nil {
		return gross, decimal.Zero
	}
	hundred := decimal.NewFromInt(100)
	net = fx.DivEUR(gross.Mul(hundred), hundred.Add(det.RatePercent.Decimal()))
	return net, gross.Sub(net)
}

// atomicUSDC converts a USDC amount (at most 6 decimals) to base units.
func atomicUSDC(d decimal.Decimal) (*big.Int, error) {
	scaled := d.Shift(usdcDecimals)
	if !scaled.IsInteger() {
		return nil, badRequest("/amountUsdc", "has more than %d decimals", usdcDecimals)
	}
	return scaled.BigInt(), nil
}
