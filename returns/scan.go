package returns

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/listing"
)

// pageSize is the page of listing.List the scans read: the largest it allows,
// so that a quarter of 100,000 records is 500 pages, never all at once.
const pageSize = 200

// each calls fn with every settlement record of the account (its current
// revision, as stored) whose createdAt is in [from, to] and whose settlement
// timestamp is in [settledFrom, settledTo] (zero: unbounded), newest first,
// one page at a time: only a page is held in memory.
func each(ctx context.Context, b *fiscal.Books, q listing.Query, fn func(raw []byte) error) error {
	q.Limit = pageSize
	q.Object = fiscal.ObjectSettlement
	for {
		page, err := listing.List(ctx, b, q)
		if err != nil {
			return err
		}
		for _, raw := range page.Data {
			if err := fn(raw); err != nil {
				return err
			}
		}
		if !page.HasMore {
			return nil
		}
		q.Cursor = page.NextCursor
	}
}

// rec is what the reports read of a stored record: a narrow view of
// fiscal.Record, decoded without the parts no report uses.
type rec struct {
	ID            string   `json:"id"`
	ReviewStatus  string   `json:"reviewStatus"`
	ReviewReasons []reason `json:"reviewReasons"`
	CreatedAt     string   `json:"createdAt"`
	Settlement    struct {
		Protocol       string `json:"protocol"`
		Network        string `json:"network"`
		TxHash         string `json:"txHash"`
		AmountUSDC     string `json:"amountUsdc"`
		Timestamp      string `json:"timestamp"`
		PayerWallet    string `json:"payerWallet"`
		ReceiverWallet string `json:"receiverWallet"`
	} `json:"settlement"`
	Seller struct {
		LegalName string `json:"legalName"`
		VATNumber string `json:"vatNumber"`
		Country   string `json:"country"`
	} `json:"seller"`
	Buyer struct {
		Country    string          `json:"country"`
		PostalCode string          `json:"postalCode"`
		VATNumber  string          `json:"vatNumber"`
		Name       string          `json:"name"`
		Evidence   json.RawMessage `json:"locationEvidence"`
		Registry   json.RawMessage `json:"registry"`
		Address    json.RawMessage `json:"address"`
	} `json:"buyer"`
	Supply struct {
		Kind        string `json:"kind"`
		Description string `json:"description"`
	} `json:"supply"`
	Classification struct {
		Status           string          `json:"status"`
		Regime           string          `json:"regime"`
		Scheme           string          `json:"ossScheme"`
		Category         string          `json:"taxCategoryCode"`
		RatePercent      json.Number     `json:"ratePercent"`
		TaxingCountry    string          `json:"taxingCountry"`
		PlaceOfSupply    string          `json:"placeOfSupply"`
		BuyerTreatment   string          `json:"buyerTreatment"`
		SupplyDate       string          `json:"supplyDate"`
		TimeZone         string          `json:"timeZone"`
		LegalBasis       string          `json:"legalBasis"`
		LocationEvidence json.RawMessage `json:"locationEvidence"`
	} `json:"classification"`
	FX struct {
		AmountUSDC    string          `json:"amountUsdc"`
		USDPerEUR     json.RawMessage `json:"usdPerEur"`
		GrossEUR      string          `json:"grossEur"`
		NetEUR        string          `json:"netEur"`
		VATEUR        string          `json:"vatEur"`
		GrossEURExact string          `json:"grossEurExact"`
		NetEURExact   string          `json:"netEurExact"`
		VATEURExact   string          `json:"vatEurExact"`
	} `json:"fx"`
	Invoice *struct {
		ID         string `json:"id"`
		Format     string `json:"format"`
		UBLSHA256  string `json:"ublSha256"`
		URL        string `json:"url"`
		TaxCountry string `json:"taxCountry"`
		TaxBasis   string `json:"taxBasis"`
		IssueDate  string `json:"issueDate"`
	} `json:"invoice"`
	Invoicing *struct {
		Invoice    string `json:"invoice"` // "per_payment" | "summary" | "none"
		Period     string `json:"period"`
		Basis      string `json:"basis"`
		TaxCountry string `json:"taxCountry"`
	} `json:"invoicing"`
	Receipt struct {
		ID string `json:"id"`
	} `json:"receipt"`
	Ledger struct {
		Index int64 `json:"index"`
	} `json:"ledger"`
}

// ossRec is the narrower view the return reads: only what a line needs.
type ossRec struct {
	ReviewStatus string `json:"reviewStatus"`
	CreatedAt    string `json:"createdAt"`
	Settlement   struct {
		AmountUSDC string `json:"amountUsdc"`
		Timestamp  string `json:"timestamp"`
	} `json:"settlement"`
	Seller struct {
		LegalName string `json:"legalName"` // the return's seller, as the supplies' records kept it
		Country   string `json:"country"`
		VATNumber string `json:"vatNumber"` // a fixed establishment's section states it (Art. 369g(2))
	} `json:"seller"`
	Classification struct {
		Regime        string      `json:"regime"`
		Scheme        string      `json:"ossScheme"`
		RatePercent   json.Number `json:"ratePercent"`
		TaxingCountry string      `json:"taxingCountry"`
		PlaceOfSupply string      `json:"placeOfSupply"`
		SupplyDate    string      `json:"supplyDate"`
		RateKind      string      `json:"rateKind"`
		// Threshold is the Art. 59c check the supply was decided on
		// (thresholdRefundReview).
		Threshold *struct {
			Rule  string          `json:"rule"`
			Year  int             `json:"year"`
			Limit decimal.Decimal `json:"limit"`
		} `json:"threshold"`
	} `json:"classification"`
	FX struct {
		NetEUR        string `json:"netEur"`
		VATEUR        string `json:"vatEur"`
		GrossEURExact string `json:"grossEurExact"`
		NetEURExact   string `json:"netEurExact"`
		VATEURExact   string `json:"vatEurExact"`
	} `json:"fx"`
	// Invoice and Invoicing state the law the supply was invoiced under,
	// which says how it was declared (declaredWhenMade).
	Invoice *struct {
		TaxCountry string `json:"taxCountry"`
		TaxBasis   string `json:"taxBasis"`
	} `json:"invoice"`
	Invoicing *struct {
		TaxCountry string `json:"taxCountry"`
	} `json:"invoicing"`
	ID     string `json:"id"`
	Ledger struct {
		Index int64 `json:"index"`
	} `json:"ledger"`
	History []struct {
		ReceiptID    string `json:"receiptId"`
		ReviewStatus string `json:"reviewStatus"`
		At           string `json:"at"`
		LedgerIndex  int64  `json:"ledgerIndex"`
	} `json:"history"`
}

// declared is how the record says its supply was declared when it was
// made (declaredWhenMade).
func (r *ossRec) declared() declaration {
	var d declaration
	switch {
	case r.Invoice != nil:
		d = declaredWhenMade(r.Classification.TaxingCountry, r.Invoice.TaxCountry, r.Invoice.TaxBasis, "")
	case r.Invoicing != nil:
		d = declaredWhenMade(r.Classification.TaxingCountry, "", "", r.Invoicing.TaxCountry)
	}
	return d
}

// resolvedAt is when the record reached its current determination from
// review: the time of the newest revision that left PENDING_MANUAL_REVIEW
// for PROCESSED (a person's resolution, or the rate it waited for), ""
// when none did.
func (r *ossRec) resolvedAt() string {
	for i := len(r.History) - 1; i > 0; i-- {
		if r.History[i].ReviewStatus == fiscal.StatusProcessed && r.History[i-1].ReviewStatus == fiscal.StatusPendingReview {
			return r.History[i].At
		}
	}
	return ""
}

// firstIndex is the ledger index of the record's first entry (at most:
// a history written without its indexes gives 0).
func (r *ossRec) firstIndex() int64 {
	if len(r.History) > 0 {
		return max(min(r.History[0].LedgerIndex, r.Ledger.Index), 0)
	}
	return r.Ledger.Index
}

func (r *ossRec) supplyDate() (date string, byUTC bool) {
	return supplyDay(r.Classification.SupplyDate, r.Settlement.Timestamp)
}

type reason struct {
	Code string `json:"code"`
}

func decodeRec(raw []byte) (*rec, error) {
	var r rec
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	return &r, nil
}

// supplyDate is the record's date of supply: the local day in the taxing
// state (BT-72), else the UTC day of the settlement timestamp; byUTC says
// which.
func (r *rec) supplyDate() (date string, byUTC bool) {
	return supplyDay(r.Classification.SupplyDate, r.Settlement.Timestamp)
}

// supplyDay is a supply's date: determined, the local day in the taxing
// state (BT-72), else, for a record written before the engine kept one,
// the UTC day of its settlement timestamp (byUTC; "" when that does not
// parse either).
func supplyDay(determined, settled string) (date string, byUTC bool) {
	if determined != "" {
		return determined, false
	}
	t, err := time.Parse(time.RFC3339Nano, settled)
	if err != nil {
		return "", true
	}
	return t.UTC().Format(time.DateOnly), true
}

// declared is how the record says its supply was declared when it was
// made (declaredWhenMade).
func (r *rec) declared() declaration {
	switch {
	case r.Invoice != nil:
		return declaredWhenMade(r.Classification.TaxingCountry, r.Invoice.TaxCountry, r.Invoice.TaxBasis, "")
	case r.Invoicing != nil:
		return declaredWhenMade(r.Classification.TaxingCountry, "", "", r.Invoicing.TaxCountry)
	}
	return declaration{}
}
