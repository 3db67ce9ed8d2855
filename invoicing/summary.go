package invoicing

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// Summary invoices (Art. 223 Directive 2006/112/EC; fiscal's
// invoicemode.go says which supplies they cover). One per account, buyer,
// invoicing state and calendar month, issued once the month is over: a
// ledger entry of its own whose document (the log leaf: the log commits to
// it) lists every supply it covers, with the UBL invoice beside it,
// numbered in the account's series like any invoice
// (fiscal.Books.DocumentDraft). Issuing it again returns it (a ledger
// claim per account, month, buyer and state: fiscal.SummaryKey).

// ObjectSummaryInvoice is the Object of a summary invoice's document.
const ObjectSummaryInvoice = "summary_invoice"

// EventInvoiceSummaryIssued is the outbox event of a summary invoice.
const EventInvoiceSummaryIssued = "invoice.summary_issued"

// EventInvoiceIssued is the outbox event of the invoice of one supply
// issued on its own after its record, because its month's summary could
// not be (IssueAlone; Art. 220, 221 Directive 2006/112/EC): an invoice of
// its own, not a summary (Art. 223). Its data is the invoice's document.
const EventInvoiceIssued = "invoice.issued"

const (
	summaryVersion  = "fiscal402.summary/1"
	summaryIDPrefix = "sum-" // a summary's id: "sum-" + 32 hex of a keyed hash
	summaryNetScale = 6      // BT-146 (ubl: at most 6 decimals) carries the exact net sum at this many
	// maxStaleRetries bounds how often a summary reads its supplies again
	// because more were posted to it meanwhile.
	maxStaleRetries = 64
)

// errStale: supplies were posted to the summary since it read them.
var errStale = errors.New("invoicing: supplies were posted to the summary since it read them; read them again")

// networkNames are the human names of the supported networks, for the
// invoice note.
var networkNames = map[string]string{
	evmverify.NetworkBase:     "Base",
	evmverify.NetworkEthereum: "Ethereum",
}

// SummaryInvoice is a summary invoice's stored document: what it invoices
// and which supplies it covers. Per VAT rate, the taxable amount is the
// sum of the supplies' exact net (Record.FX, 12 decimals) rounded once, and
// the VAT that amount times the rate, rounded (SummaryVAT).
type SummaryInvoice struct {
	ID        string            `json:"id"` // "sum-<32 hex>"
	Object    string            `json:"object"`
	Version   string            `json:"version"`
	Account   string            `json:"account"`
	CreatedAt string            `json:"createdAt"`
	Period    string            `json:"period"`      // YYYY-MM
	Start     string            `json:"periodStart"` // BT-73
	End       string            `json:"periodEnd"`   // BT-74
	Buyer     string            `json:"buyer"`       // the payer wallet
	Basis     string            `json:"basis"`       // the rule allowing the summary
	Invoice   fiscal.InvoiceRef `json:"invoice"`
	Totals    []SummaryTotal    `json:"totals"`
	Supplies  []SummarySupply   `json:"supplies"`
	Ledger    fiscal.LedgerRef  `json:"ledger"`
	GrossEUR  string            `json:"grossEur"` // BT-112
	VATEUR    string            `json:"vatEur"`   // BT-110
	NetEUR    string            `json:"netEur"`   // BT-109
	Supplied  int               `json:"suppliesCount"`
	Rounding  string            `json:"rounding"`
	// InvoicedAlone, on the invoice of one supply its month's summary
	// could not cover (IssueAlone), is why: the summary's refusal. Absent
	// on a summary invoice.
	InvoicedAlone string `json:"invoicedAlone,omitempty"`
}

// SummaryTotal is one VAT rate of a summary invoice.
type SummaryTotal struct {
	Category    string `json:"category"`
	RatePercent string `json:"ratePercent"`
	Supplies    int    `json:"supplies"`
	NetEURExact string `json:"netEurExact"`
	VATEURExact string `json:"vatEurExact"`
	NetEUR      string `json:"netEur"` // BT-116: the exact net sum rounded once
	VATEUR      string `json:"vatEur"` // BT-117: NetEUR × rate, rounded (BR-CO-17; SummaryVAT)
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

// SummaryResult is the answer of Issue for one summary: Created, or
// Existing when it was issued before (the same invoice).
type SummaryResult struct {
	Outcome fiscal.Outcome
	Summary *SummaryInvoice
	JSON    []byte // the document as stored
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

func notFound(what string) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeNotFound, Detail: what + " not found"}
}

// periodBounds parses a YYYY-MM period: its first and last day, and the
// instant it has ended in every taxing territory (local midnight in the
// westernmost zone the rulesets tax in, the Azores at UTC−1: an hour after
// midnight UTC; vat/localday.go).
func periodBounds(period string) (first, last time.Time, closes time.Time, err error) {
	first, err = time.Parse("2006-01", period)
	if err != nil || len(period) != len("2006-01") {
		return first, last, closes, badRequest("/period", "want a calendar month YYYY-MM, got %s", shown.Quote(period))
	}
	next := first.AddDate(0, 1, 0)
	return first, next.AddDate(0, 0, -1), next.Add(time.Hour), nil
}

// periodOpen is the PERIOD_OPEN error of period, or nil once it closed.
func periodOpen(period string, closes, now time.Time) error {
	if !now.Before(closes) {
		return nil
	}
	return &fiscal.Error{Code: fiscal.CodePeriodOpen, Field: "/period", Detail: fmt.Sprintf(
		"%s has not ended in every taxing territory yet; its summary invoices can be issued from %s", period, closes.Format(time.RFC3339))}
}

// checkPeriodClosed is PERIOD_OPEN while the period has not ended in every
// taxing territory at the engine's time, BAD_REQUEST for a malformed one.
func checkPeriodClosed(b *fiscal.Books, period string) error {
	_, _, closes, err := periodBounds(period)
	if err != nil {
		return err
	}
	return periodOpen(period, closes, b.Engine().Now().UTC())
}

// summaryBuyers lists the buyers (and their invoicing states) with supplies
// waiting for a summary invoice of period in the account's books, whether
// or not it was issued: what issueSummary takes, one by one.
func summaryBuyers(b *fiscal.Books, period string) ([]SummaryRequest, error) {
	if _, _, _, err := periodBounds(period); err != nil {
		return nil, err
	}
	prefix := []byte(b.Account().ID + "\x00" + period + "\x00")
	hits, err := b.Engine().Ledger().Scan(fiscal.IndexSummaryCover, prefix, nil, false, 0)
	if err != nil {
		return nil, fiscal.StoreError(err)
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
// lower case, a VAT number as the engine posts it
// (invoicelaw.CustomerVATNumber: upper case, without separators). A
// malformed one (a wallet that is not 0x and 40 hexadecimal digits, a VAT
// number with characters no VAT number has) is BAD_REQUEST on /buyer: the
// buyer is part of the summary's ledger keys, and such a request names no
// buyer, rather than one without supplies (NOT_FOUND). wellFormed says
// whether a VAT number is one by its syntax and check digits
// (vat.ValidateNumber); one that is not names a buyer only if supplies
// were posted under it (a registry may confirm a number whose check digits
// vat doubts, vat_number_check_digits_disagree): issueSummary refuses it
// with BAD_REQUEST when none were, instead of NOT_FOUND.
func summaryBuyerKey(b string) (key string, wellFormed bool, err error) {
	b = strings.TrimSpace(b)
	if b == "" {
		return "", false, badRequest("/buyer", "the buyer (payer wallet) is required")
	}
	if strings.HasPrefix(strings.ToLower(b), "0x") {
		w, err := wire.Address("/buyer", "0x"+b[2:])
		return w, err == nil, fiscal.InputError(err)
	}
	n, err := wire.VATNumber("/buyer", b)
	if err != nil {
		return "", false, fiscal.InputError(err)
	}
	if key = invoicelaw.CustomerVATNumber(n, nil); key == "" {
		return "", false, notBuyer(b)
	}
	_, verr := vat.ValidateNumber(n)
	return key, verr == nil, nil
}

// notBuyer is the BAD_REQUEST of a buyer b that names none.
func notBuyer(b string) error {
	return badRequest("/buyer", "%s is neither a payer wallet (0x and 40 hexadecimal digits) nor a well-formed VAT number (a country prefix, the state's syntax and check digits)", shown.Quote(b))
}

// summaryTaxCountry normalises the state a request names among one
// buyer's summaries: an ISO 3166-1 alpha-2 code in any case, EL read as GR
// (as the engine posts it); "" stays "" (the buyer's only state). Anything
// else is BAD_REQUEST on /taxCountry.
func summaryTaxCountry(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	c, err := wire.Country("/taxCountry", c)
	if err != nil {
		return "", fiscal.InputError(err)
	}
	if c == "EL" {
		c = "GR"
	}
	return c, nil
}

// issueSummary issues the summary invoice of a buyer's supplies of a
// calendar month that the account's invoicing mode left to one
// (fiscal.Record.Invoicing), once the month has ended (PERIOD_OPEN
// before). It lists the totals per VAT rate with the period (BG-14): the
// supplies' exact net summed and rounded once, its VAT by BR-CO-17
// (SummaryVAT); the next
// number of the account's series; the covered records in its ledger
// document. Issuing it again returns the same invoice (Outcome Existing).
// A supply recorded after its month's summary was issued gets its own
// invoice. listed says the buyer was read from the ledger's postings (the
// month's run), not from a request: its form is never refused.
func issueSummary(ctx context.Context, b *fiscal.Books, q SummaryRequest, listed bool) (*SummaryResult, error) {
	first, last, closes, err := periodBounds(q.Period)
	if err != nil {
		return nil, err
	}
	asked := q.Buyer
	wellFormed := false
	if q.Buyer, wellFormed, err = summaryBuyerKey(q.Buyer); err != nil {
		return nil, err
	}
	if q.TaxCountry, err = summaryTaxCountry(q.TaxCountry); err != nil {
		return nil, err
	}
	now := b.Engine().Now().UTC()
	if err := periodOpen(q.Period, closes, now); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		res, err := issueOnce(ctx, b, q, first, last, now)
		if fe := (*fiscal.Error)(nil); !wellFormed && !listed && errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
			return nil, notBuyer(asked) // no supplies were posted under it either
		}
		if errors.Is(err, errStale) && attempt < maxStaleRetries {
			continue // a supply was posted to it meanwhile: read them again
		}
		if errors.Is(err, errStale) {
			return nil, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "supplies kept arriving for this summary while it was made; retry", RetryAfter: time.Second, Err: err}
		}
		return res, err
	}
}

// issueOnce reads the supplies posted to the summary and commits it, or
// returns errStale when a supply was posted since they were read.
func issueOnce(ctx context.Context, b *fiscal.Books, q SummaryRequest, first, last, now time.Time) (*SummaryResult, error) {
	e, acc := b.Engine(), b.Account().ID
	k := fiscal.SummaryKey{Account: acc, Period: q.Period, Buyer: q.Buyer, TaxCountry: q.TaxCountry}
	prefix := []byte(acc + "\x00" + q.Period + "\x00" + q.Buyer + "\x00")
	if q.TaxCountry != "" {
		prefix = []byte(k.String() + "\x00")
	}
	hits, err := e.Ledger().Scan(fiscal.IndexSummaryCover, prefix, nil, false, 0)
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	countries := map[string]bool{}
	for _, h := range hits {
		if c, _, ok := strings.Cut(string(h.Key[len(acc)+len(q.Period)+len(q.Buyer)+3:]), "\x00"); ok {
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
	k.TaxCountry = q.TaxCountry
	key := k.String()
	// The summary's id is keyed with the engine's record-id key, as a
	// payment's record id is: the same month, buyer and state, the same id.
	id := summaryIDPrefix + strings.TrimPrefix(e.RecordID("summary", key), "x402-")
	if _, _, err := e.Ledger().ClaimHolder(fiscal.ClaimSummary, key); err == nil {
		return storedSummary(b, id, fiscal.Existing)
	}
	recs, err := coveredRecords(ctx, b, hits, q, id)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, notFound(fmt.Sprintf("supplies of %s to %s awaiting a summary invoice", q.Period, q.Buyer))
	}
	d, doc, err := summaryDraft(b, id, q, recs, first, last, now, "")
	if err != nil {
		return nil, err
	}
	d.Claims = []ledger.Claim{{Space: fiscal.ClaimSummary, Key: key, Fingerprint: []byte(id)}}
	d.Puts = append(d.Puts, ledger.Put{Bucket: fiscal.BucketSummaryIssued, Key: []byte(key), Value: []byte(id)})
	d.OnCommit(summaryCheck(key, int64(len(hits))))
	stored, res, err := e.Commit(ctx, d)
	if err != nil {
		return nil, err
	}
	return committed(b, id, stored, res, doc)
}

// committed answers the commit of an invoice document (a summary, or a
// supply's own invoice) with id: the one stored before under its claim
// (Existing), or doc as stored.
func committed(b *fiscal.Books, id string, stored []byte, res ledger.Appended, doc *SummaryInvoice) (*SummaryResult, error) {
	if res.Existing {
		return storedSummary(b, id, fiscal.Existing)
	}
	if err := json.Unmarshal(stored, doc); err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored invoice " + id + " is unreadable", Err: err}
	}
	return &SummaryResult{Outcome: fiscal.Created, Summary: doc, JSON: stored}, nil
}

// summaryCheck is the committer's check of a summary (fiscal.SummaryKey):
// if the supplies posted to it are no longer the posted it read, it fails
// with errStale and the summary reads them again.
func summaryCheck(key string, posted int64) ([]ledger.SideKey, func(h *ledger.Hook) error) {
	reads := []ledger.SideKey{{Bucket: fiscal.BucketSummaryIssued, Key: []byte(key)}, {Bucket: fiscal.BucketSummaryPosted, Key: []byte(key)}}
	return reads, func(h *ledger.Hook) error {
		raw, err := h.Get(fiscal.BucketSummaryPosted, []byte(key))
		if err != nil {
			return err
		}
		var n int64
		if len(raw) == 8 {
			n = int64(binary.BigEndian.Uint64(raw))
		}
		if n != posted {
			return fmt.Errorf("%d supplies were posted to this summary, %d read: %w", n, posted, errStale)
		}
		return nil
	}
}

// coveredRecords loads the current state of every record posted to the
// summary, once each, and keeps those whose current state still waits for
// this summary (a revision may have changed it) and that no invoice but
// self covers yet: a supply invoiced on its own since (IssueAlone) is not
// invoiced twice, while one that self, the summary being issued, already
// covers (another replica committed it first) stays, so that the commit
// finds the summary issued and answers it.
func coveredRecords(ctx context.Context, b *fiscal.Books, hits []ledger.Hit, q SummaryRequest, self string) ([]*fiscal.Record, error) {
	seen := map[string]bool{}
	var out []*fiscal.Record
	for _, h := range hits {
		k := h.Key[:len(h.Key)-8] // the log index AppendIndex added
		id := string(k[bytes.LastIndexByte(k, 0)+1:])
		if seen[id] {
			continue
		}
		seen[id] = true
		r, _, err := b.Record(ctx, id)
		if err != nil {
			return nil, err
		}
		inv := r.Invoicing
		if r.ReviewStatus != fiscal.StatusProcessed || inv == nil || inv.Invoice != "summary" ||
			inv.Period != q.Period || inv.Buyer != q.Buyer || inv.TaxCountry != q.TaxCountry {
			continue
		}
		if by, err := SummaryCovering(b, r); err != nil {
			return nil, err
		} else if by != "" && by != self {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *fiscal.Record) int { return int(a.Ledger.Index - b.Ledger.Index) })
	return out, nil
}

// summaryDraft builds the summary invoice of recs and its draft: totals
// per VAT category and rate on the exact amounts, the UBL invoice under
// the law of the supplies (Art. 219a; the latest record's determination
// and the account's seller profile, with the VAT number the supplies were
// made under, one for all of them: oneSellerNumber,
// fiscal.Books.InvoiceFrame),
// which must be the state the records were decided under
// (Record.Invoicing.TaxCountry, q.TaxCountry), the covering links.
//
// alone, when not "", makes it the invoice of the one supply recs holds,
// whose month's summary could not be issued for that reason (IssueAlone):
// its period is the day of supply and its note says it is invoiced alone.
func summaryDraft(b *fiscal.Books, id string, q SummaryRequest, recs []*fiscal.Record, first, last, now time.Time, alone string) (*fiscal.Draft, *SummaryInvoice, error) {
	acc := b.Account()
	type group struct {
		det        vat.Determination
		net, vatEx decimal.Decimal
		n          int
		from, to   string
	}
	var groups []*group
	doc := &SummaryInvoice{ID: id, Object: ObjectSummaryInvoice, Version: summaryVersion, Account: acc.ID,
		CreatedAt: now.Format(time.RFC3339Nano), Period: q.Period, Start: first.Format(time.DateOnly), End: last.Format(time.DateOnly),
		Buyer: q.Buyer, Supplied: len(recs), InvoicedAlone: alone,
		Rounding: "per VAT rate: the taxable amount is the sum of the supplies' exact net (12 decimals) rounded once to the cent, its VAT that amount times the rate rounded to the cent (EN 16931 BR-CO-17), half away from zero"}
	var puts []ledger.Put
	networks := map[string]bool{}
	lineOf := make(map[string]int, len(recs)) // record id: its group's index (invoice line ID - 1)
	for _, r := range recs {
		det := r.Classification
		net, err1 := decimal.NewFromString(r.FX.NetEURExact)
		vx, err2 := decimal.NewFromString(r.FX.VATEURExact)
		if err1 != nil || err2 != nil {
			return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "record " + r.ID + " has no exact amounts"}
		}
		at := slices.IndexFunc(groups, func(x *group) bool {
			return x.det.Category == det.Category && rateOf(x.det).Equal(rateOf(det)) && x.det.VATEX == det.VATEX
		})
		if at < 0 {
			groups = append(groups, &group{det: det, from: det.SupplyDate, to: det.SupplyDate})
			at = len(groups) - 1
		}
		g := groups[at]
		lineOf[r.ID] = at
		g.net, g.vatEx, g.n = g.net.Add(net), g.vatEx.Add(vx), g.n+1
		g.from, g.to = min(g.from, det.SupplyDate), max(g.to, det.SupplyDate)
		doc.Supplies = append(doc.Supplies, SummarySupply{RecordID: r.ID, LedgerIndex: r.Ledger.Index, SupplyDate: det.SupplyDate,
			AmountUSDC: r.Settlement.AmountUSDC, TxHash: r.Settlement.TxHash, NetEURExact: r.FX.NetEURExact, VATEURExact: r.FX.VATEURExact})
		puts = append(puts, ledger.Put{Bucket: fiscal.BucketSummaryOf, Key: []byte(r.ID), Value: []byte(id)})
		networks[networkNames[r.Settlement.Network]] = true
	}
	latest := recs[len(recs)-1]
	if err := oneSellerNumber(acc.Seller.ForInvoiceLaw(), q, recs); err != nil {
		return nil, nil, err
	}
	bases, err := eachSupplysLaw(acc.Seller.ForInvoiceLaw(), q, recs)
	if err != nil {
		return nil, nil, err
	}
	if err := oneBuyer(q, recs); err != nil {
		return nil, nil, err
	}
	if err := oneStatePerRate(q, recs); err != nil {
		return nil, nil, err
	}
	inv, ref, missing := b.InvoiceFrame(latest, now)
	if len(bases) > 1 {
		// The supplies reached q.TaxCountry's rules by different rules of
		// Art. 219a (a month that crossed the Art. 59c threshold: taxed at
		// origin, then under the OSS): the invoice states each.
		ref.TaxBasis = strings.Join(bases, "; ")
	}
	if len(missing) > 0 {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: "the business customer's " + strings.Join(missing, ", ") + " is missing (Art. 226(5)); resolve its latest record's address"}
	}
	item := acc.Seller.ItemName
	if d := latest.Supply.Description; d != "" && !slices.ContainsFunc(recs, func(r *fiscal.Record) bool { return r.Supply.Description != d }) {
		item = d
	}
	inv.Period = &ubl.Period{Start: doc.Start, End: doc.End}
	inv.Currency, inv.BuyerReference, inv.PaidInFull = "EUR", id, true
	inv.PaymentMeans = ubl.StablecoinPaymentMeans(inv.Seller.Country, inv.Buyer.Country, id)
	var netSum, vatSum decimal.Decimal
	for i, g := range groups {
		rate := rateOf(g.det)
		code, reason := g.det.VATEX, g.det.ExemptionReason
		base, tax := fx.RoundEUR(g.net), decimal.Zero
		if g.det.Category == "S" {
			tax = SummaryVAT(base, rate)
		}
		dates := g.from
		if g.to != g.from {
			dates += " to " + g.to
		}
		inv.Lines = append(inv.Lines, ubl.Line{
			ID: fmt.Sprint(i + 1), Name: lineName(item, g.n, dates, alone != ""), Quantity: decimal.NewFromInt(1),
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
	inv.Note = fmt.Sprintf("Summary invoice of %s from %s to %s (Art. 223 Directive 2006/112/EC), each paid in full in USDC on %s when supplied; "+
		"each supply was converted to EUR at the ECB euro reference rate of its date, the taxable amount per VAT rate is the sum of the supplies' exact net amounts rounded once, and its VAT that amount times the rate. "+
		"The supplies are listed in the seller's fiscal402 record %s.", supplies(len(recs)), doc.Start, doc.End, strings.Join(nets, ", "), id)
	if alone != "" {
		inv.Note = fmt.Sprintf("Invoice of one supply of %s, paid in full in USDC on %s when supplied, converted to EUR at the ECB euro reference rate of its date. "+
			"It is invoiced on its own: the summary invoice of %s to this customer (Art. 223 Directive 2006/112/EC) could not be issued. "+
			"The supply is listed in the seller's fiscal402 record %s.", doc.Start, strings.Join(nets, ", "), q.Period, id)
	}
	// What each supply's invoice must say beside its amounts (the
	// determination's mention: "Reverse charge", Art. 226(11a); the place
	// of supply of a sale taxed at origin, Art. 59c): every distinct one
	// of the month, in the order of the supplies, not the latest's alone
	// (a month can cross the Art. 59c threshold), in the one note the
	// invoice may carry (PEPPOL-EN16931-R002). A mention that only some
	// lines' supplies carry names those lines: "Place of supply: IE" of
	// the supplies taxed at origin is not the place of supply of the line
	// taxed under the OSS in the consumer's state (Art. 58, 226(11a)).
	var mentions []string
	for _, r := range recs {
		n := r.Classification.InvoiceNote
		if n == "" || slices.Contains(mentions, n) {
			continue
		}
		mentions = append(mentions, n)
		inv.Note += " " + n
		var lines []string
		all := true
		for i := range groups {
			if slices.ContainsFunc(recs, func(x *fiscal.Record) bool { return lineOf[x.ID] == i && x.Classification.InvoiceNote == n }) {
				lines = append(lines, fmt.Sprint(i+1))
			} else {
				all = false
			}
		}
		switch {
		case all:
		case len(lines) == 1:
			inv.Note += " (invoice line " + lines[0] + ")"
		default:
			inv.Note += " (invoice lines " + strings.Join(lines, ", ") + ")"
		}
	}
	doc.Basis = fiscal.SummaryKey{TaxCountry: q.TaxCountry}.Rule()
	if alone != "" {
		doc.Basis = "invoiced on its own (Art. 219a, 220, 221 " + invoicelaw.Directive + "): the summary invoice of its month (Art. 223) could not be issued"
	}
	u, err := ubl.DraftInvoice(inv)
	if err != nil {
		var ve *ubl.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: "the summary invoice would break " + strings.Join(ve.Rules(), ", ") + ": " + ve.Error(), Err: err}
		}
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the summary invoice could not be rendered", Err: err}
	}
	// A reverse charge's Art. 222 deadline (the 15th of the month after the
	// supply) is the same for every supply of the month: InvoiceFrame
	// counted it from the latest.
	ref.URL = "/v1/invoices/summaries/" + id + "/ubl"
	event := EventInvoiceSummaryIssued
	if alone != "" {
		event = EventInvoiceIssued
	}
	d := b.DocumentDraft(fiscal.Record{ID: id, Object: ObjectSummaryInvoice, Invoice: ref}, event, u, now)
	d.Puts = puts
	d.Document = func(sealed *fiscal.Record) ([]byte, error) {
		out := *doc
		out.Invoice, out.Ledger = *sealed.Invoice, sealed.Ledger
		return json.Marshal(out)
	}
	return d, doc, nil
}

// SummaryVAT is the VAT of one VAT category and rate of a summary
// invoice: its taxable amount (BT-116: the supplies' exact net summed and
// rounded once to the cent) times the rate, rounded to the cent, half away
// from zero. EN 16931 defines the VAT category tax amount so (BR-CO-17:
// "VAT category tax amount (BT-117) = VAT category taxable amount (BT-116)
// x (VAT category rate (BT-119) / 100), rounded to two decimals";
// https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-tc434/BR-CO-17/), and
// the VAT an invoice states is that rate applied to the taxable amount it
// states (Art. 226(8) and (10) Directive 2006/112/EC). The supplies'
// exact VAT summed and rounded on its own (SummaryTotal.VATEURExact)
// differs from it by a cent in some months (0.06 instead of 0.05 at 9 %
// on 0.61), which the validators' tolerance accepts but which leaves the
// invoice's VAT, and so its total, a cent off its own lines and rate. The
// product of two decimals is exact and /100 shifts the exponent: one
// rounding, on the figure the invoice shows.
func SummaryVAT(base, ratePercent decimal.Decimal) decimal.Decimal {
	return fx.RoundEUR(base.Mul(ratePercent).Shift(-2))
}

// lineName is the name of an invoice line (BT-153): a summary's counts
// the supplies of its VAT rate; the invoice of one supply issued on its
// own (alone) names the supply and its day.
func lineName(item string, n int, dates string, alone bool) string {
	if alone {
		return item + ", " + dates
	}
	return fmt.Sprintf("%s: %s, %s", item, supplies(n), dates)
}

// supplies counts n supplies in words: "1 supply", "2 supplies".
func supplies(n int) string {
	if n == 1 {
		return "1 supply"
	}
	return fmt.Sprintf("%d supplies", n)
}

// eachSupplysLaw refuses a summary of which a supply is not one the
// summary may invoice under the law the account's seller profile ls now
// decides for it (invoicelaw.For, with the VAT number the supply's record
// kept, as fiscal.Books.InvoiceFrame decides the summary's own frame from
// its latest supply): every supply, not the latest alone, must fall under
// the invoicing rules of q.TaxCountry, the state its record was decided
// and declared under (Record.Invoicing.TaxCountry, Art. 219a Directive
// 2006/112/EC), and that state's rules must allow its summary
// (invoicelaw.SummaryRefusal, Art. 223). Registrations dated within the
// month (a change of the member state of identification, a national
// registration that began or ended) can put the earlier supplies under
// another state's rules than the latest; the supplies were recorded, and
// declared, under q.TaxCountry, and the records state neither the other
// state's basis nor what its invoice would need: the engine does not
// guess, it refuses (INVOICE_RULES_FAILED) naming the first such supply,
// its day and both states, and how many there are. It returns the
// distinct bases (Art. 219a) by which the supplies reached q.TaxCountry's
// rules, in supply order.
func eachSupplysLaw(ls invoicelaw.Seller, q SummaryRequest, recs []*fiscal.Record) (bases []string, err error) {
	var first *fiscal.Record
	var firstLaw invoicelaw.Law
	var why string
	n := 0
	for _, r := range recs {
		law := invoicelaw.For(r.Classification, ls.Supplying(r.Seller.VATNumber))
		refusal := invoicelaw.SummaryRefusal(r.Classification, law, q.TaxCountry)
		if refusal == "" {
			if !slices.Contains(bases, law.Basis) {
				bases = append(bases, law.Basis)
			}
			continue
		}
		if n++; first == nil {
			first, firstLaw, why = r, law, refusal
		}
	}
	if first == nil {
		return bases, nil
	}
	others := ""
	if n > 1 {
		others = fmt.Sprintf(" (and %d other supplies of the month)", n-1)
	}
	if firstLaw.TaxCountry != q.TaxCountry {
		return nil, &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Field: "/taxCountry", Detail: fmt.Sprintf(
			"these supplies were recorded under the invoicing rules of %s (Art. 219a %s), but the account's seller profile now puts the supply %s of %s%s under those of %s; "+
				"a summary invoice follows the law its supplies were recorded under, every one of them: date the profile's registrations (validFrom, validTo) so that they apply to the supplies of %s as when they were recorded",
			q.TaxCountry, invoicelaw.Directive, first.ID, first.Classification.SupplyDate, others, cmp.Or(firstLaw.TaxCountry, "no state"), q.Period)}
	}
	return nil, &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: fmt.Sprintf(
		"the supply %s of %s%s cannot be invoiced by the summary invoice of %s under the invoicing rules of %s: %s", first.ID, first.Classification.SupplyDate, others, q.Period, q.TaxCountry, why)}
}

// oneBuyer refuses a summary whose supplies' records state the buyer
// differently. The summary names one customer (BG-7), as
// fiscal.Books.InvoiceFrame builds it from its latest supply
// (invoicelaw.BuyerParty); an invoice states the customer's full name and
// address (Art. 226(5) Directive 2006/112/EC) and a summary invoice
// details the supplies to that customer (Art. 223). When an earlier
// supply's record names the buyer otherwise (another name, VAT
// identifier, address or country: a consumer named at one payment and
// located elsewhere at another, a business that moved within the month),
// stating the latest's facts for every supply would silently restate the
// earlier records, and which facts are the customer's is not the
// engine's to guess. It refuses (INVOICE_RULES_FAILED, nothing written),
// as a supply under another state's rules refuses the month
// (eachSupplysLaw, invoicelaw.SummaryRefusal), naming the first supply
// that differs, its day, the fields and the latest supply, and how many
// differ.
func oneBuyer(q SummaryRequest, recs []*fiscal.Record) error {
	latest := recs[len(recs)-1]
	want, _ := invoicelaw.BuyerParty(latest.Classification, latest.Buyer.ForInvoiceLaw())
	var first *fiscal.Record
	var fields []string
	n := 0
	for _, r := range recs[:len(recs)-1] {
		got, _ := invoicelaw.BuyerParty(r.Classification, r.Buyer.ForInvoiceLaw())
		diff := invoicelaw.BuyerFactsDiffer(got, want)
		if len(diff) == 0 {
			continue
		}
		if n++; first == nil {
			first, fields = r, diff
		}
	}
	if first == nil {
		return nil
	}
	others := ""
	if n > 1 {
		others = fmt.Sprintf(" (and %d other supplies of the month)", n-1)
	}
	return &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: fmt.Sprintf(
		"the summary invoice of %s names one customer, but the supply %s of %s%s states the customer's %s otherwise than the latest supply %s of %s; "+
			"an invoice states its customer's full name and address (Art. 226(5) %s) and the engine does not choose between its records: it is not issued. "+
			"These supplies need manual review: invoices naming the customer as each record states it (a refund of one of them first invoices that supply on its own: IssueAlone)",
		q.Period, first.ID, first.Classification.SupplyDate, others, strings.Join(fields, ", "), latest.ID, latest.Classification.SupplyDate, invoicelaw.Directive)}
}

// oneSellerNumber refuses a summary of supplies the seller made under
// more than one VAT identification number. An invoice states the number
// under which the supplier made the supply (Art. 226(3) Directive
// 2006/112/EC, https://eur-lex.europa.eu/eli/dir/2006/112/oj), and a
// summary invoice states one (BT-31, or BT-32 for a non-Union OSS
// number), which fiscal.Books.InvoiceFrame takes from its latest supply:
// the number the supply's record kept, and the registrations of the
// profile that apply on its day of supply. When the number changed within
// the month (the profile's number, or dated registrations), the month's
// supplies would need one invoice per number; a summary is one invoice
// per buyer, state and month (fiscal.SummaryKey), so it is not issued
// (INVOICE_RULES_FAILED, naming the numbers and their supplies' days)
// rather than state one number for supplies made under another: the
// supplies under each number need invoicing by hand.
func oneSellerNumber(ls invoicelaw.Seller, q SummaryRequest, recs []*fiscal.Record) error {
	type span struct {
		number   string
		from, to string
		n        int
	}
	var spans []*span
	for _, r := range recs {
		n := invoicelaw.For(r.Classification, ls.Supplying(r.Seller.VATNumber)).SellerVAT
		at := slices.IndexFunc(spans, func(s *span) bool { return s.number == n })
		if at < 0 {
			spans = append(spans, &span{number: n, from: r.Classification.SupplyDate, to: r.Classification.SupplyDate})
			at = len(spans) - 1
		}
		s := spans[at]
		s.from, s.to, s.n = min(s.from, r.Classification.SupplyDate), max(s.to, r.Classification.SupplyDate), s.n+1
	}
	if len(spans) < 2 {
		return nil
	}
	var parts []string
	for _, s := range spans {
		parts = append(parts, fmt.Sprintf("%q (%d supplies, %s to %s)", s.number, s.n, s.from, s.to))
	}
	return &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: fmt.Sprintf(
		"the supplies of %s to this buyer were made under %d VAT numbers of the seller: %s; an invoice states the one under which the supplier made its supplies (Art. 226(3) %s) and a summary invoice covers the whole month, "+
			"so it is not issued: these supplies need manual review, an invoice per VAT number issued outside this service (check the profile's number and the dates of its registrations)",
		q.Period, len(spans), strings.Join(parts, " and "), invoicelaw.Directive)}
}

// oneStatePerRate refuses a summary of which two supplies of one VAT
// category and rate (one line and one VAT breakdown of the summary, EN
// 16931 BG-23) were taxed in different member states: a month that
// crossed the Art. 59c threshold, its first supplies to a consumer taxed
// at origin at 23 % (Ireland) and the later ones under the OSS at 23 % in
// the consumer's state (Poland, Portugal). One line would state one
// taxable amount for VAT due to two states, under the mention of the
// supplies taxed at origin ("Place of supply: IE", Art. 59c), which would
// then name the wrong place of supply (Art. 58) for the others; the
// invoice of each supply states its own (Art. 226(11a) Directive
// 2006/112/EC). The engine does not restate the records: it refuses
// (INVOICE_RULES_FAILED, nothing written), as a month that mixes what one
// invoice cannot state is (oneSellerNumber, eachSupplysLaw, oneBuyer),
// naming the first supply taxed elsewhere, its day and both states. Its
// supplies can be invoiced on their own (IssueAlone).
func oneStatePerRate(q SummaryRequest, recs []*fiscal.Record) error {
	type line struct {
		det   vat.Determination
		state string
		rec   *fiscal.Record
	}
	var lines []line
	for _, r := range recs {
		det := r.Classification
		at := slices.IndexFunc(lines, func(l line) bool {
			return l.det.Category == det.Category && rateOf(l.det).Equal(rateOf(det)) && l.det.VATEX == det.VATEX
		})
		if at < 0 {
			lines = append(lines, line{det: det, state: det.TaxingCountry, rec: r})
			continue
		}
		if l := lines[at]; l.state != det.TaxingCountry {
			return &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: fmt.Sprintf(
				"the summary invoice of %s states one line and one VAT breakdown per VAT category and rate, but its supplies at %s %s%% were taxed in %s (the supply %s of %s) and in %s (the supply %s of %s); "+
					"one line would state one taxable amount for VAT due to two member states, under a place of supply that is not every supply's (Art. 58, 59c, 226(11a) %s): it is not issued. "+
					"These supplies need manual review: invoices of each supply on its own (a refund of one of them first invoices that supply on its own: IssueAlone)",
				q.Period, det.Category, rateOf(det).String(), cmp.Or(l.state, "no state"), l.rec.ID, l.det.SupplyDate,
				cmp.Or(det.TaxingCountry, "no state"), r.ID, det.SupplyDate, invoicelaw.Directive)}
		}
	}
	return nil
}

func rateOf(det vat.Determination) decimal.Decimal {
	if det.RatePercent == nil {
		return decimal.Zero
	}
	return det.RatePercent.Decimal()
}

// storedSummary reads a summary invoice of the account.
func storedSummary(b *fiscal.Books, id string, o fiscal.Outcome) (*SummaryResult, error) {
	raw, err := b.Engine().Document(id)
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
		return nil, notFound("summary invoice " + shown.Bare(id)) // not "settlement …": the engine's word for any entry
	}
	if err != nil {
		return nil, err
	}
	var doc SummaryInvoice
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Object != ObjectSummaryInvoice || doc.Account != b.Account().ID {
		return nil, notFound("summary invoice " + shown.Bare(id))
	}
	return &SummaryResult{Outcome: o, Summary: &doc, JSON: raw}, nil
}

// Summary returns the account's summary invoice id (its document) and its
// UBL bytes, checked against the hash its document states.
func Summary(ctx context.Context, b *fiscal.Books, id string) (*SummaryResult, []byte, error) {
	res, err := storedSummary(b, id, fiscal.Existing)
	if err != nil {
		return nil, nil, err
	}
	u, _, err := b.Engine().StoredInvoice(id, res.Summary.Invoice.UBLSHA256)
	if err != nil {
		return nil, nil, err
	}
	return res, u, nil
}

// InvoicedBy returns the id of the summary invoice that covers the
// account's record id, "" while none does (the record has its own
// invoice, none is required, or its month's summary is not issued yet:
// Record.Invoicing says which).
func InvoicedBy(ctx context.Context, b *fiscal.Books, id string) (string, error) {
	r, _, err := b.Record(ctx, id)
	if err != nil {
		return "", err
	}
	return SummaryCovering(b, r)
}

// SummaryCovering is InvoicedBy for r, a record the caller has read with
// b (Books.Record: the account's own): the id of the summary invoice that
// covers it, "" while none does, without reading the record again.
func SummaryCovering(b *fiscal.Books, r *fiscal.Record) (string, error) {
	v, err := b.Engine().Ledger().Get(fiscal.BucketSummaryOf, []byte(r.ID))
	if errors.Is(err, ledger.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fiscal.StoreError(err)
	}
	return string(v), nil
}
