package fiscal

import (
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// receiptClaims maps a record to the claims of its receipt. The receipt is a
// frozen public format (package receipt); the record may grow, so the mapping
// is explicit, field by field. The log position is filled in by seal.
//
// New receipts are service.receipt/4.0.0 for both jurisdictions (receipt
// doc.go "# Version 4.0.0": the claims of 3.0.0, logged as they are and
// signed through the checkpoint the receipt key cosigns): the claims are
// built here in clear, and seal conceals the personal fields (tx hash,
// wallets, the buyer's name, postal code, VAT number, evidence values, the
// record's and the invoice's hashes) as salted commitments whose openings
// stay with the record, behind the account's key. Receipts of 1.0.0, 2.0.0
// and 3.0.0 already issued keep verifying.
func receiptClaims(r *Record, issued time.Time) receipt.Claims {
	det := r.Classification
	receiptJurisdiction, spec := receiptFormat(det.Jurisdiction)
	c := receipt.Claims{
		Spec:         spec,
		ReceiptID:    r.Receipt.ID,
		EventID:      strings.TrimPrefix(r.Receipt.ID, "rcpt_"), // the entry's event id: the record id for revision 1
		IssuedAt:     issued.Unix(),
		Environment:  r.Environment,
		Custody:      CustodyNone,
		Jurisdiction: receiptJurisdiction,
		Ruleset:      det.Ruleset,
		ReviewStatus: r.ReviewStatus,
		Settlement: receipt.Settlement{
			Protocol:      r.Settlement.Protocol,
			Network:       r.Settlement.Network,
			TxHash:        r.Settlement.TxHash,
			LogIndex:      r.Settlement.LogIndex,
			Asset:         r.Settlement.Asset,
			AssetContract: r.Settlement.AssetContract,
			AmountUSDC:    r.Settlement.AmountUSDC,
			Payer:         r.Settlement.PayerWallet,
			Receiver:      r.Settlement.ReceiverWallet,
			Timestamp:     r.Settlement.Timestamp,
			Scheme:        r.Settlement.Scheme,
			Chain:         chainClaims(r.Verification),
		},
		Seller: receipt.Party{LegalName: r.Seller.LegalName, VATNumber: r.Seller.VATNumber, Country: r.Seller.Country},
		Buyer: receipt.Buyer{
			Country:    r.Buyer.Country,
			PostalCode: r.Buyer.PostalCode,
			VATNumber:  r.Buyer.VATNumber,
			Name:       r.Buyer.Name,
		},
		Classification: &receipt.Classification{
			Status:         det.Status,
			Regime:         det.Regime,
			OSSScheme:      det.Scheme,
			Category:       det.Category,
			TaxingCountry:  det.TaxingCountry,
			VATEX:          det.VATEX,
			LegalBasis:     det.LegalBasis,
			InvoiceNote:    det.InvoiceNote,
			BuyerTreatment: det.BuyerTreatment,
		},
	}
	if n := len(r.History); n > 1 {
		c.Supersedes = r.History[n-2].ReceiptID
	}
	if det.RatePercent != nil {
		c.Classification.RatePercent = det.RatePercent.Decimal().String()
	}
	if det.RateSource != nil {
		c.Classification.RateTable = det.RateSource.Table
		c.Classification.RateEffectiveFrom = det.RateSource.EffectiveFrom
	}
	for _, reason := range det.Reasons {
		c.Classification.Reasons = append(c.Classification.Reasons, reason.Code)
	}
	for _, reason := range r.ReviewReasons {
		c.ReviewReasons = append(c.ReviewReasons, reason.Code)
	}
	// A result with no registry named is one no registry gave (vies.Result:
	// "empty when no registry was consulted", e.g. lookups switched off):
	// there is no consultation to prove, and the record's review reasons
	// already say the number is unverified.
	if reg := r.Buyer.Registry; reg != nil && reg.Registry != "" {
		c.Buyer.Registry = &receipt.RegistryProof{
			Registry:          reg.Registry,
			Status:            string(reg.Status),
			Number:            reg.CountryCode + reg.Number,
			RequestIdentifier: reg.RequestIdentifier,
			CheckedAt:         reg.RequestDate.UTC().Format(time.RFC3339),
		}
	}
	if rt := r.FX.USDPerEUR; rt != nil {
		c.FX = &receipt.FX{
			Pair:          r.FX.Pair,
			AmountUSDC:    r.FX.AmountUSDC,
			USDCUSDRate:   r.FX.USDCUSD.Rate,
			USDCUSDSource: r.FX.USDCUSD.Source,
			USDPerEUR: receipt.FXRate{
				Raw:           rt.Raw,
				RateDate:      rt.RateDate,
				RequestedDate: requestedDate(rt.Requested),
				Policy:        string(rt.Policy),
				Source:        rt.Source,
				Snapshot:      rt.Snapshot,
			},
			GrossEUR: r.FX.GrossEUR,
			NetEUR:   r.FX.NetEUR,
			VATEUR:   r.FX.VATEUR,
			Rounding: r.FX.Rounding,
		}
		if receipt.ConcealedSpec(spec) {
			c.FX.GrossEURExact = r.FX.GrossEURExact
			if r.FX.NetEUR != "" {
				c.FX.NetEURExact, c.FX.VATEURExact = r.FX.NetEURExact, r.FX.VATEURExact
			}
		}
	}
	if receipt.ConcealedSpec(spec) {
		for _, ev := range r.Buyer.Evidence {
			c.Buyer.LocationEvidence = append(c.Buyer.LocationEvidence, receipt.LocationEvidence{Kind: ev.Kind, Country: ev.Country, Value: ev.Value})
		}
	}
	if r.Invoice != nil {
		c.Invoice = &receipt.Invoice{ID: r.Invoice.ID, UBLSHA256: r.Invoice.UBLSHA256}
	}
	if r.Fee != nil {
		c.Fee = &receipt.Fee{Model: r.Fee.Model, BPS: r.Fee.BPS, AccruedEUR: r.Fee.AccruedEUR, Label: r.Fee.Label}
	}
	if r.Environment == receipt.EnvSandbox {
		c.Watermark = receipt.SandboxWatermark
	}
	return c
}

func chainClaims(v Verification) receipt.ChainFacts {
	if v.Facts == nil {
		return receipt.ChainFacts{Verification: receipt.ChainNotPerformed}
	}
	finalized := v.Facts.Finalized
	return receipt.ChainFacts{
		Verification:  receipt.ChainVerified,
		BlockNumber:   v.Facts.BlockNumber,
		BlockHash:     v.Facts.BlockHash,
		BlockTime:     v.Facts.BlockTime.UTC().Format(time.RFC3339),
		Confirmations: v.Facts.Confirmations,
		Finalized:     &finalized,
	}
}

// ReceiptSpec is the receipt version a record of the jurisdiction is issued
// with (the jurisdiction table and the manifest's receipt_versions, which
// package catalog publishes from this function): service.receipt/4.0.0 for
// both eu-vat and uk-vat (before it, 3.0.0; before that 1.0.0 for eu-vat
// and the experimental 2.0.0 for uk-vat). A determination without a
// jurisdiction (a manual review before the place of supply is known) is
// recorded under eu-vat, the service's supported jurisdiction.
func ReceiptSpec(jurisdiction string) string {
	return receipt.SpecV4
}

// receiptFormat returns the receipt jurisdiction and spec for a
// determination's jurisdiction.
func receiptFormat(detJurisdiction string) (jurisdiction, spec string) {
	if detJurisdiction == vat.JurisdictionUK {
		return vat.JurisdictionUK, ReceiptSpec(detJurisdiction)
	}
	return vat.JurisdictionEU, ReceiptSpec(detJurisdiction)
}

// requestedDate is the receipt's requested_date: the date the rate was
// asked for, or, under fx.LatestPublishedAt (which asks for an instant, kept
// in the record with the publication's PublishedFrom), that instant's UTC
// date.
func requestedDate(requested string) string {
	if len(requested) > len("2006-01-02") {
		return requested[:len("2006-01-02")]
	}
	return requested
}
