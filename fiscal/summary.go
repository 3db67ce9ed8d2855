package fiscal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// Summary invoices (Art. 223 Directive 2006/112/EC; invoicemode.go says
// which supplies they cover). One per account, buyer, invoicing state and
// calendar month, issued once the month is over: a ledger entry of its
// own whose document (the log leaf: the log commits to it) lists every
// supply it covers, with the UBL invoice beside it, numbered in the
// account's series like any invoice (numbering.go). Issuing it again
// returns it (a ledger claim per account, month, buyer and state).

// ObjectSummaryInvoice is the Object of a summary invoice's document.
const ObjectSummaryInvoice = "summary_invoice"

// EventInvoiceSummaryIssued is the outbox event of a summary invoice.
const EventInvoiceSummaryIssued = "invoice.summary_issued"

// Codes of summary invoices.
const (
	// CodePeriodOpen: the month has not ended yet in every taxing
	// territory; its summary invoice cannot be issued (409).
	CodePeriodOpen Code = "PERIOD_OPEN"
	// CodeInvoiceRulesFailed: the summary invoice would break rules of EN
	// 16931 or invoicing law; the detail names them (422).
	CodeInvoiceRulesFailed Code = "INVOICE_RULES_FAILED"
)

const (
	summaryVersion  = "fiscal402.summary/1"
	claimSummary    = "summary"    // account \x00 period \x00 buyer \x00 tax country → the summary's entry
	bucketSummaryOf = "summary-of" // record id → id of the summary invoice covering it
	summaryIDPrefix = "sum-"       // a summary's id: "sum-" + 32 hex of a keyed hash
	summaryNetScale = 6            // BT-146 (ubl: at most 6 decimals) carries the exact net sum at this many
)

// SummaryInvoice is a summary invoice's stored document: what it invoices
// and which supplies it covers. The numbers are the sums of the supplies'
// exact figures (Record.FX, 12 decimals), rounded once per VAT rate.
type SummaryInvoice struct {
	ID        string          `json:"id"` // "sum-<32 hex>"
	Object    string          `json:"object"`
	Version   string          `json:"version"`
	Account   string          `json:"account"`
	CreatedAt string          `json:"createdAt"`
	Period    string          `json:"period"`      // YYYY-MM
	Start     string          `json:"periodStart"` // BT-73
	End       string          `json:"periodEnd"`   // BT-74
	Buyer     string          `json:"buyer"`       // the payer wallet
	Basis     string          `json:"basis"`       // the rule allowing the summary
	Invoice   InvoiceRef      `json:"invoice"`
	Totals    []SummaryTotal  `json:"totals"`
	Supplies  []SummarySupply `json:"supplies"`
	Ledger    LedgerRef       `json:"ledger"`
	GrossEUR  string          `json:"grossEur"` // BT-112
	VATEUR    string          `json:"vatEur"`   // BT-110
	NetEUR    string          `json:"netEur"`   // BT-109
	Supplied  int             `json:"suppliesCount"`
	Rounding  string          `json:"rounding"`
}

// SummaryTotal is one VAT rate of a summary invoice.
type SummaryTotal struct {
	Category    string `json:"category"`
	RatePercent string `json:"ratePercent"`
	Supplies    int    `json:"supplies"`
	NetEURExact string `json:"netEurExact"`
	VATEURExact string `json:"vatEurExact"`
	NetEUR      string `json:"netEur"` // BT-116: the exact sum rounded once
	VATEUR      string `json:"vatEur"` // BT-117: the exact sum rounded once
}

// SummarySupply is one supply a summary invoice covers.
type SummarySupply struct {
	RecordID    string `json:"recordId"`
	LedgerIndex int64  `json:"ledgerIndex"` // the entry of the record's state invoiced
	SupplyDate  string `json:"supplyDate"`
	AmountUSDC  string `json:"amountUsdc"`
	TxHash      string `json:"txHash"`
	NetEURExact string `json:"netEurExact"`
	VATEURExact string `json:"vatEurExact"`
}

// SummaryRequest names the summary invoice to issue: the month (YYYY-MM),
// the buyer (a consumer's payer wallet, a business customer's VAT number)
// and, when the buyer's supplies of the month
// follow more than one state's invoicing rules, the state.
type SummaryRequest struct {
	Period     string `json:"period"`
	Buyer      string `json:"buyer"`
	TaxCountry string `json:"taxCountry,omitempty"`
}

// SummaryResult is the answer of IssueSummary: Created, or Existing when
// it was issued before (the same invoice).
type SummaryResult struct {
	Outcome Outcome
	Summary *SummaryInvoice
	JSON    []byte // the document as stored
}

// periodBounds parses a YYYY-MM period: its first and last day, and the
// instant it has ended in every taxing territory (local midnight in the
// westernmost zone the rulesets tax in, the Azores at UTC−1: an hour after
// midnight UTC; vat/localday.go).
func periodBounds(period string) (first, last time.Time, closes time.Time, err error) {
	first, err = time.Parse("2006-01", period)
	if err != nil || len(period) != len("2006-01") {
		return first, last, closes, badRequest("/period", "want a calendar month YYYY-MM, got %q", period)
	}
	next := first.AddDate(0, 1, 0)
	return first, next.AddDate(0, 0, -1), next.Add(time.Hour), nil
}

// periodCloses checks a YYYY-MM period and returns the instant from which
// its summary invoices can be issued: when it has ended in every taxing
// territory (01:00 UTC on the first of the next month).
func periodCloses(period string) (time.Time, error) {
	_, _, closes, err := periodBounds(period)
	return closes, err
}

// periodOpen is the PERIOD_OPEN error of period, or nil once it closed.
func periodOpen(period string, closes, now time.Time) error {
	if !now.Before(closes) {
		return nil
	}
	return &Error{Code: CodePeriodOpen, Field: "/period", Detail: fmt.Sprintf(
		"%s has not ended in every taxing territory yet; its summary invoices can be issued from %s", period, closes.Format(time.RFC3339))}
}

// CheckPeriodClosed is PERIOD_OPEN while the period has not ended in every
// taxing territory at the engine's time, BAD_REQUEST for a malformed one.
func (b *Books) CheckPeriodClosed(period string) error {
	closes, err := periodCloses(period)
	if err != nil {
		return err
	}
	return periodOpen(period, closes, b.e.Now().UTC())
}

// SummaryBuyers lists the buyers (and their invoicing states) with supplies
// waiting for a summary invoice of period in the account's books, whether
// or not it was issued: what IssueSummary takes, one by one.
func (b *Books) SummaryBuyers(ctx context.Context, period string) ([]SummaryRequest, error) {
	if _, _, _, err := periodBounds(period); err != nil {
		return nil, err
	}
	prefix := []byte(b.acc.ID + "\x00" + period + "\x00")
	hits, err := b.e.ledger.Scan(indexSummaryCover, prefix, nil, false, 0)
	if err != nil {
		return nil, storeError(err)
	}
	var out []SummaryRequest
	for _, h := range hits {
		parts := strings.SplitN(string(h.Key[len(prefix):]), "\x00", 3)
		if len(parts) < 3 {
			continue
		}
		q := SummaryRequest{Period: period, Buyer: parts[0], TaxCountry: parts[1]}
		if n := len(out); n == 0 || out[n-1] != q {
			out = append(out, q)
		}
	}
	return out, nil
}

// summaryBuyerKey normalises a buyer as summaries name it: a wallet in
// lower case, a VAT number in upper case without spaces.
func summaryBuyerKey(b string) string {
	b = strings.TrimSpace(b)
	if strings.HasPrefix(strings.ToLower(b), "0x") {
		return strings.ToLower(b)
	}
	return strings.ToUpper(strings.ReplaceAll(b, " ", ""))
}

// summaryKey is the claim key of a summary invoice.
func summaryKey(accountID, period, buyer, taxCountry string) string {
	return accountID + "\x00" + period + "\x00" + buyer + "\x00" + taxCountry
}

// summaryIssued reports whether the summary invoice is issued.
func (e *Engine) summaryIssued(accountID, period, buyer, taxCountry string) bool {
	_, _, err := e.ledger.ClaimHolder(claimSummary, summaryKey(accountID, period, buyer, taxCountry))
	return err == nil
}

// IssueSummary issues the summary invoice of a buyer's supplies of a
// calendar month that the account's invoicing mode left to one
// (Record.Invoicing), once the month has ended (PERIOD_OPEN before). It
// lists the totals per VAT rate with the period (BG-14), computed on the
// supplies' exact amounts and rounded once; the next number of the
// account's series; the covered records in its ledger document. Issuing it
// again returns the same invoice (Outcome Existing). A supply recorded
// after its month's summary was issued gets its own invoice.
func (b *Books) IssueSummary(ctx context.Context, q SummaryRequest) (*SummaryResult, error) {
	e := b.e
	first, last, closes, err := periodBounds(q.Period)
	if err != nil {
		return nil, err
	}
	q.Buyer = summaryBuyerKey(q.Buyer)
	if q.Buyer == "" {
		return nil, badRequest("/buyer", "the buyer (payer wallet) is required")
	}
	q.TaxCountry = strings.ToUpper(q.TaxCountry)
	now := e.Now().UTC()
	if err := periodOpen(q.Period, closes, now); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		res, err := b.issueSummary(ctx, q, first, last, now)
		if errors.Is(err, errStaleTotal) && attempt < maxStaleRetries {
			continue // a supply was posted to it meanwhile: read them again
		}
		if errors.Is(err, errStaleTotal) {
			return nil, &Error{Code: CodeDBUnavailable, Detail: "supplies kept arriving for this summary while it was made; retry", RetryAfter: time.Second, Err: err}
		}
		return res, err
	}
}

// issueSummary reads the supplies posted to the summary and commits it,
// or returns errStaleTotal when a supply was posted since they were read.
func (b *Books) issueSummary(ctx context.Context, q SummaryRequest, first, last, now time.Time) (*SummaryResult, error) {
	e := b.e
	prefix := []byte(b.acc.ID + "\x00" + q.Period + "\x00" + q.Buyer + "\x00")
	if q.TaxCountry != "" {
		prefix = summaryCoverPrefix(b.acc.ID, q.Period, q.Buyer, q.TaxCountry)
	}
	hits, err := e.ledger.Scan(indexSummaryCover, prefix, nil, false, 0)
	if err != nil {
		return nil, storeError(err)
	}
	countries := map[string]bool{}
	for _, h := range hits {
		if c, _, ok := strings.Cut(string(h.Key[len(b.acc.ID)+len(q.Period)+len(q.Buyer)+3:]), "\x00"); ok {
			countries[c] = true
		}
	}
	switch {
	case len(countries) == 0:
		return nil, notFound(fmt.Sprintf("supplies of %s to %s awaiting a summary invoice", q.Period, q.Buyer))
	case len(countries) > 1:
		list := slices.Sorted(func(yield func(string) bool) {
			for c := range countries {
				if !yield(c) {
					return
				}
			}
		})
		return nil, badRequest("/taxCountry", "the supplies of %s to this buyer follow the invoicing rules of %s: name one", q.Period, strings.Join(list, ", "))
	}
	for c := range countries {
		q.TaxCountry = c
	}
	key := summaryKey(b.acc.ID, q.Period, q.Buyer, q.TaxCountry)
	id := summaryIDPrefix + strings.TrimPrefix(e.keyedID("summary", key), "x402-")
	if e.summaryIssued(b.acc.ID, q.Period, q.Buyer, q.TaxCountry) {
		return b.storedSummary(id, Existing)
	}
	recs, err := b.coveredRecords(hits, q)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, notFound(fmt.Sprintf("supplies of %s to %s awaiting a summary invoice", q.Period, q.Buyer))
	}
	d, doc, err := b.summaryDraft(id, q, recs, first, last, now)
	if err != nil {
		return nil, err
	}
	d.Claims = []ledger.Claim{{Space: claimSummary, Key: key, Fingerprint: []byte(id)}}
	d.Puts = append(d.Puts, ledger.Put{Bucket: bucketSummaryIssued, Key: []byte(key), Value: []byte(id)})
	d.OnCommit(summaryCheck(key, int64(len(hits))))
	stored, res, err := e.Commit(ctx, d)
	if err != nil {
		return nil, err
	}
	if res.Existing {
		return b.storedSummary(id, Existing)
	}
	if err := json.Unmarshal(stored, doc); err != nil {
		return nil, &Error{Code: CodeInternal, Detail: "stored summary is unreadable", Err: err}
	}
	return &SummaryResult{Outcome: Created, Summary: doc, JSON: stored}, nil
}

// coveredRecords loads the current state of every record posted to the
// summary, once each, and keeps those whose current state still waits for
// this summary (a revision may have changed it).
func (b *Books) coveredRecords(hits []ledger.Hit, q SummaryRequest) ([]*Record, error) {
	seen := map[string]bool{}
	var out []*Record
	for _, h := range hits {
		k := h.Key[:len(h.Key)-8] // the log index AppendIndex added
		id := string(k[bytes.LastIndexByte(k, 0)+1:])
		if seen[id] {
			continue
		}
		seen[id] = true
		r, _, err := b.e.loadRecord(id)
		if err != nil {
			return nil, err
		}
		inv := r.Invoicing
		if r.ReviewStatus != StatusProcessed || inv == nil || inv.Invoice != invoicedBySummary ||
			inv.Period != q.Period || inv.Buyer != q.Buyer || inv.TaxCountry != q.TaxCountry {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Record) int { return int(a.Ledger.Index - b.Ledger.Index) })
	return out, nil
}

// summaryDraft builds the summary invoice of recs and its draft: totals
// per VAT category and rate on the exact amounts, the UBL invoice under
// the law of the supplies (Art. 219a; the latest record's determination
// and the account's current seller profile), the covering links.
func (b *Books) summaryDraft(id string, q SummaryRequest, recs []*Record, first, last, now time.Time) (*Draft, *SummaryInvoice, error) {
	s := b.acc.Seller
	type group struct {
		det        vat.Determination
		net, vatEx decimal.Decimal
		n          int
		from, to   string
	}
	var groups []*group
	doc := &SummaryInvoice{ID: id, Object: ObjectSummaryInvoice, Version: summaryVersion, Account: b.acc.ID,
		CreatedAt: now.Format(time.RFC3339Nano), Period: q.Period, Start: first.Format(time.DateOnly), End: last.Format(time.DateOnly),
		Buyer: q.Buyer, Supplied: len(recs),
		Rounding: "per VAT rate: the sum of the supplies' exact net and VAT (12 decimals) rounded once to the cent, half away from zero"}
	var puts []ledger.Put
	networks := map[string]bool{}
	for _, r := range recs {
		det := r.Classification
		net, err1 := decimal.NewFromString(r.FX.NetEURExact)
		vx, err2 := decimal.NewFromString(r.FX.VATEURExact)
		if err1 != nil || err2 != nil {
			return nil, nil, &Error{Code: CodeInternal, Detail: "record " + r.ID + " has no exact amounts"}
		}
		var g *group
		for _, x := range groups {
			if x.det.Category == det.Category && rateOf(x.det).Equal(rateOf(det)) && x.det.VATEX == det.VATEX {
				g = x
			}
		}
		if g == nil {
			g = &group{det: det, from: det.SupplyDate, to: det.SupplyDate}
			groups = append(groups, g)
		}
		g.net, g.vatEx, g.n = g.net.Add(net), g.vatEx.Add(vx), g.n+1
		g.from, g.to = min(g.from, det.SupplyDate), max(g.to, det.SupplyDate)
		doc.Supplies = append(doc.Supplies, SummarySupply{RecordID: r.ID, LedgerIndex: r.Ledger.Index, SupplyDate: det.SupplyDate,
			AmountUSDC: r.Settlement.AmountUSDC, TxHash: r.Settlement.TxHash, NetEURExact: r.FX.NetEURExact, VATEURExact: r.FX.VATEURExact})
		puts = append(puts, ledger.Put{Bucket: bucketSummaryOf, Key: []byte(r.ID), Value: []byte(id)})
		networks[networkNames[r.Settlement.Network]] = true
	}
	latest := recs[len(recs)-1]
	law := invoicelaw.For(latest.Classification, s.ForInvoiceLaw())
	seller := invoicelaw.SellerParty(s.ForInvoiceLaw(), law)
	buyer, missing := invoicelaw.BuyerParty(latest.Classification, latest.Buyer.ForInvoiceLaw())
	if len(missing) > 0 {
		return nil, nil, &Error{Code: CodeInvoiceRulesFailed, Detail: "the business customer's " + strings.Join(missing, ", ") + " is missing (Art. 226(5)); resolve its latest record's address"}
	}
	item := s.ItemName
	if d := latest.Supply.Description; d != "" && !slices.ContainsFunc(recs, func(r *Record) bool { return r.Supply.Description != d }) {
		item = d
	}
	inv := ubl.Invoice{
		Profile: invoiceProfile(latest.Classification, seller, buyer), IssueDate: now.Format(time.DateOnly), TaxCountry: law.TaxCountry,
		Period:   &ubl.Period{Start: doc.Start, End: doc.End},
		Currency: "EUR", BuyerReference: id, Seller: seller, Buyer: buyer, PaidInFull: true,
		PaymentMeans: ubl.StablecoinPaymentMeans(seller.Country, buyer.Country, id),
	}
	var netSum, vatSum decimal.Decimal
	for i, g := range groups {
		rate := rateOf(g.det)
		code, reason := g.det.VATEX, g.det.ExemptionReason
		base, tax := fx.RoundEUR(g.net), decimal.Zero
		if g.det.Category == "S" {
			tax = fx.RoundEUR(g.vatEx)
		}
		dates := g.from
		if g.to != g.from {
			dates += " to " + g.to
		}
		inv.Lines = append(inv.Lines, ubl.Line{
			ID: fmt.Sprint(i + 1), Name: fmt.Sprintf("%s: %d supplies, %s", item, g.n, dates), Quantity: decimal.NewFromInt(1),
			PriceAmount: g.net.Round(summaryNetScale), NetAmount: base, Category: g.det.Category, RatePercent: rate,
			ExemptionCode: code, ExemptionReason: reason, Period: &ubl.Period{Start: g.from, End: g.to},
		})
		inv.Subtotals = append(inv.Subtotals, ubl.TaxSubtotal{Category: g.det.Category, RatePercent: rate, TaxableAmount: base, TaxAmount: tax,
			ExemptionCode: code, ExemptionReason: reason})
		doc.Totals = append(doc.Totals, SummaryTotal{Category: g.det.Category, RatePercent: rate.String(), Supplies: g.n,
			NetEURExact: g.net.StringFixed(fx.ExactScale), VATEURExact: g.vatEx.StringFixed(fx.ExactScale),
			NetEUR: base.StringFixed(2), VATEUR: tax.StringFixed(2)})
		netSum, vatSum = netSum.Add(base), vatSum.Add(tax)
	}
	doc.NetEUR, doc.VATEUR, doc.GrossEUR = netSum.StringFixed(2), vatSum.StringFixed(2), netSum.Add(vatSum).StringFixed(2)
	nets := slices.Sorted(func(yield func(string) bool) {
		for n := range networks {
			if !yield(n) {
				return
			}
		}
	})
	inv.Note = fmt.Sprintf("Summary invoice of %d supplies from %s to %s (Art. 223 Directive 2006/112/EC), each paid in full in USDC on %s when supplied; "+
		"each supply was converted to EUR at the ECB euro reference rate of its date, and the amounts per VAT rate are the sums of the supplies' exact amounts rounded once. "+
		"The supplies are listed in the seller's fiscal402 record %s.", len(recs), doc.Start, doc.End, strings.Join(nets, ", "), id)
	if n := latest.Classification.InvoiceNote; n != "" {
		inv.Note += " " + n
	}
	doc.Basis = summaryRules[law.TaxCountry]
	u, err := ubl.DraftInvoice(inv)
	if err != nil {
		var ve *ubl.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, &Error{Code: CodeInvoiceRulesFailed, Detail: "the summary invoice would break " + strings.Join(ve.Rules(), ", ") + ": " + ve.Error(), Err: err}
		}
		return nil, nil, &Error{Code: CodeInternal, Detail: "the summary invoice could not be rendered", Err: err}
	}
	d := &Draft{
		Record: Record{ID: id, Object: ObjectSummaryInvoice, Account: b.acc.ID, CreatedAt: doc.CreatedAt,
			Invoice: &InvoiceRef{Format: "UBL 2.1 Invoice", Profile: string(inv.Profile), URL: "/v1/invoices/summaries/" + id + "/ubl",
				TaxCountry: law.TaxCountry, TaxBasis: law.Basis, IssueDate: inv.IssueDate}},
		EventType: EventInvoiceSummaryIssued,
		Puts:      puts,
		id:        id,
		createdAt: now,
		ublDraft:  u,
	}
	if latest.Classification.Regime == vat.RegimeReverseChargeB2B {
		// Art. 222: the invoice of a reverse-charge supply by the 15th of
		// the month after it; a summary is late after the 15th after its
		// month.
		ref := d.Record.Invoice
		ref.IssueDeadline = invoicelaw.ReverseChargeDeadline(doc.End)
		ref.IssuedLate = ref.IssueDeadline != "" && inv.IssueDate > ref.IssueDeadline
	}
	d.series, d.seriesPrefix = invoiceSeries(b.acc.ID, s, now)
	d.Document = func(sealed *Record) ([]byte, error) {
		out := *doc
		out.Invoice, out.Ledger = *sealed.Invoice, sealed.Ledger
		return json.Marshal(out)
	}
	return d, doc, nil
}

func rateOf(det vat.Determination) decimal.Decimal {
	if det.RatePercent == nil {
		return decimal.Zero
	}
	return det.RatePercent.Decimal()
}

// storedSummary reads a summary invoice of the account.
func (b *Books) storedSummary(id string, o Outcome) (*SummaryResult, error) {
	raw, err := b.e.Document(id)
	if err != nil {
		return nil, err
	}
	var doc SummaryInvoice
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Object != ObjectSummaryInvoice || doc.Account != b.acc.ID {
		return nil, notFound("summary invoice " + id)
	}
	return &SummaryResult{Outcome: o, Summary: &doc, JSON: raw}, nil
}

// Summary returns the account's summary invoice id (its document) and its
// UBL bytes, checked against the hash its document states.
func (b *Books) Summary(ctx context.Context, id string) (*SummaryResult, []byte, error) {
	res, err := b.storedSummary(id, Existing)
	if err != nil {
		return nil, nil, err
	}
	u, _, err := b.e.StoredInvoice(id, res.Summary.Invoice.UBLSHA256)
	if err != nil {
		return nil, nil, err
	}
	return res, u, nil
}

// InvoicedBy returns the id of the summary invoice that covers the record
// id, "" while none does (the record has its own invoice, none is
// required, or its month's summary is not issued yet: Record.Invoicing
// says which).
func (b *Books) InvoicedBy(ctx context.Context, id string) (string, error) {
	if _, _, err := b.Record(ctx, id); err != nil {
		return "", err
	}
	v, err := b.e.ledger.Get(bucketSummaryOf, []byte(id))
	if errors.Is(err, ledger.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", storeError(err)
	}
	return string(v), nil
}

// RecordInvoicedBy is the summary invoice that covers a record: added to
// the record Books.RecordView serves, never part of the stored record.
type RecordInvoicedBy struct {
	SummaryID string `json:"summaryId"` // "sum-<32 hex>"
	InvoiceID string `json:"invoiceId"` // the summary invoice's number (BT-1)
	URL       string `json:"url"`       // where its UBL is served
}

// recordWithInvoicedBy is Books.Record with, for a record a summary
// invoice covers, its "invoicedBy" appended to the stored bytes.
func (b *Books) recordWithInvoicedBy(ctx context.Context, id string) (*Record, []byte, error) {
	r, raw, err := b.Record(ctx, id)
	if err != nil || r.Invoicing == nil || r.Invoicing.Invoice != invoicedBySummary {
		return r, raw, err
	}
	sum, err := b.InvoicedBy(ctx, r.ID)
	if err != nil || sum == "" {
		return r, raw, err
	}
	res, err := b.storedSummary(sum, Existing)
	if err != nil {
		return nil, nil, err
	}
	add, err := json.Marshal(RecordInvoicedBy{SummaryID: sum, InvoiceID: res.Summary.Invoice.ID, URL: res.Summary.Invoice.URL})
	if err != nil || len(raw) < 2 || raw[len(raw)-1] != '}' {
		return nil, nil, &Error{Code: CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	out := make([]byte, 0, len(raw)+len(add)+16)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, `,"invoicedBy":`...)
	out = append(out, add...)
	out = append(out, '}')
	r.InvoicedBy = &RecordInvoicedBy{SummaryID: sum, InvoiceID: res.Summary.Invoice.ID, URL: res.Summary.Invoice.URL}
	return r, out, nil
}
