package returns

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/listing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// Format names and the statement type of the signed return.
const (
	// Version is the return document's format, versioned in-band.
	Version = "fiscal402.oss-return/1"
	// StatementType is the JWS typ of a signed return
	// (receipt.VerifyStatement).
	StatementType = "fiscal402.oss-return+jws"

	StatusProvisional = "provisional"
	StatusFinal       = "final"

	// SupplyServices is the supply type of every line: the engine records
	// supplies of services (telecommunications, broadcasting and
	// electronic services); distance sales of goods, the other type of
	// Art. 369g(1), are not recorded.
	SupplyServices = "services"
)

// Return is an OSS VAT return for one quarter. Its JSON is the signed
// content of Document.Return.
type Return struct {
	Object  string `json:"object"` // "oss_return"
	Version string `json:"version"`
	Account string `json:"account"`
	Period  string `json:"period"` // "2026-Q1"
	// PeriodStart and PeriodEnd are the quarter's first and last days.
	PeriodStart string `json:"periodStart"`
	PeriodEnd   string `json:"periodEnd"`
	// DueDate is the last day to submit the return and pay its VAT: the
	// end of the month following the quarter (Period.DueDate);
	// DueDateBasis cites the articles of the return's scheme.
	DueDate      string `json:"dueDate"`
	DueDateBasis string `json:"dueDateBasis"`
	// Status is "final" for a quarter that has ended everywhere, whose
	// period-end rate is published and none of whose records waits for
	// review (excluded.pending), else "provisional" (StatusReason says
	// why).
	Status       string `json:"status"`
	StatusReason string `json:"statusReason,omitempty"`
	// Review names what a person must check before filing the return,
	// where the law leaves a choice to the member state that the engine
	// does not hold; absent when there is nothing.
	Review   []string       `json:"review,omitempty"`
	Scheme   string         `json:"scheme"` // vat.SchemeUnion or vat.SchemeNonUnion
	ID       Identification `json:"identification"`
	Seller   SellerInfo     `json:"seller"`
	Currency string         `json:"currency"` // "EUR"
	FX       PeriodFX       `json:"fx"`

	Lines               []Line        `json:"lines"`
	FixedEstablishments []Section     `json:"fixedEstablishments"`
	Corrections         []Correction  `json:"corrections"`
	MemberStates        []StateTotal  `json:"memberStates"`
	Total               Amounts       `json:"total"`
	Payable             Payable       `json:"payable"`
	NotInOSS            []Summary     `json:"notInOss"`
	Excluded            Excluded      `json:"excluded"`
	DatedByUTC          int           `json:"datedByUtc"`
	Log                 LogCheckpoint `json:"log"`
}

// Identification is the OSS registration the return is filed under:
// Seller.Registrations' oss_union or oss_non_union entry.
type Identification struct {
	// Number is the individual VAT identification number of the scheme
	// (Art. 362 or 369d); "" when the account does not state it.
	Number string `json:"number"`
	// MemberState is the member state of identification.
	MemberState string `json:"memberStateOfIdentification"`
	// Missing names what the account's profile lacks, when it does.
	Missing string `json:"missing,omitempty"`
	// From and To are the days of the period this member state of
	// identification covers, when the state changed within the period
	// (Art. 57f and 59(4) Implementing Regulation (EU) No 282/2011):
	// each state's return declares the supplies of its own days.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// SellerInfo names the taxable person: as the records of the supplies in
// the member state of identification's lines kept it (the newest), else
// as the account's profile states it; Review says when they differ.
type SellerInfo struct {
	LegalName string `json:"legalName"`
	VATNumber string `json:"vatNumber,omitempty"`
	Country   string `json:"country"`
}

// PeriodFX is the conversion the return uses.
type PeriodFX struct {
	Rule string `json:"rule"`
	// Rate is the ECB USD rate of the last day of the quarter or the next
	// publication; absent while it is not published (Unavailable says so).
	Rate        *fx.Rate `json:"usdPerEur,omitempty"`
	Unavailable string   `json:"unavailable,omitempty"`
	Peg         string   `json:"usdcUsd"` // "1": the recorded 1 USDC = 1 USD assumption
	// InvoiceRule says what the invoice figures of the lines are
	// (invoiceRule), and why the VAT the issued invoices state may differ
	// from them.
	InvoiceRule string `json:"invoiceRule"`
}

// invoiceRule is PeriodFX.InvoiceRule. The return declares VAT at the
// period-end rate (Art. 369h(2), 366(2) Directive 2006/112/EC); the
// invoice figures are evidence to reconcile it with, the VAT at each
// chargeable event's rate (Art. 91(2)), kept exact: the records' exact
// figures summed and rounded once per line. An issued invoice rounds its
// own VAT: the invoice of one supply its exact VAT to the cent, a summary
// invoice per VAT rate its taxable amount times the rate (EN 16931
// BR-CO-17, invoicing.SummaryVAT). Summing the invoices' rounded figures
// instead would make a line depend on how its supplies were invoiced (one
// invoice each, or a month's summary per buyer, which may span member
// states and rates no line shares), and a line is a cent away from its
// invoices' sum in some quarters even where it covers exactly one summary
// invoice's rate; the return says so rather than presenting its figure as
// the invoices'.
const invoiceRule = "invoiceTaxableAmountEur and invoiceVatEur are the records' exact EUR amounts, each converted at the ECB rate of its chargeable event (Art. 91(2) Directive 2006/112/EC), " +
	"summed at 12 decimals and rounded once per line, half away from zero; they are evidence to reconcile with, and the return declares vatEur, at the period-end rate. " +
	"The VAT an issued invoice states is rounded on that invoice: a single supply's invoice rounds its exact VAT, a summary invoice states per VAT rate its taxable amount times the rate, rounded (EN 16931 BR-CO-17). " +
	"The sum of the issued invoices' VAT for a line's supplies may therefore differ from its invoiceVatEur by up to a cent per invoice and rate, also where the line is exactly one summary invoice's rate"

// Amounts are the figures of a line, a section or a total. The first two
// EUR figures are the return's (the USDC total at the period-end rate;
// absent while the rate is not published); the Invoice figures are the sum
// of the records' own exact EUR amounts, converted at each chargeable
// event's rate, not of the issued invoices' rounded ones (invoiceRule).
// Each is an exact sum rounded once to cents.
type Amounts struct {
	// Records is the number of ledger entries summed: sales, and the
	// refunds that reduce them (AmountUSDC is net of those refunds).
	Records                 int    `json:"records"`
	AmountUSDC              string `json:"amountUsdc"`
	TaxableAmountEUR        string `json:"taxableAmountEur,omitempty"`
	VATEUR                  string `json:"vatEur,omitempty"`
	InvoiceTaxableAmountEUR string `json:"invoiceTaxableAmountEur"`
	InvoiceVATEUR           string `json:"invoiceVatEur"`
	// DifferenceVATEUR is VATEUR − InvoiceVATEUR: what the period-end rate
	// changes against the invoices.
	DifferenceVATEUR string `json:"differenceVatEur,omitempty"`
}

// Line is the supplies to one member state of consumption at one rate of
// one supply type.
type Line struct {
	MemberState string `json:"memberState"` // of consumption
	RatePercent string `json:"ratePercent"`
	// RateType is the type of the rate, "standard" or "reduced" (vat
	// RateKind constants), as the records of the supplies state it: the
	// common electronic message of the return gives the standard and the
	// reduced rates apart (Annex III Commission Implementing Regulation
	// (EU) 2020/194). Absent for records that do not state it.
	RateType   string `json:"rateType,omitempty"`
	SupplyType string `json:"supplyType"`
	Amounts
	// LedgerIndexes are the log indexes of the entries (current
	// revisions of the records) summed, ascending.
	LedgerIndexes []int64 `json:"ledgerIndexes"`
}

// Section is the supplies from one fixed establishment in a member state
// other than the member state of identification.
type Section struct {
	Establishment string `json:"establishment"` // member state of the fixed establishment
	VATNumber     string `json:"vatNumber,omitempty"`
	Lines         []Line `json:"lines"`
}

// Correction is the change, recorded this quarter, to what an earlier
// quarter's return declared for one member state (Art. 61 Implementing
// Regulation 282/2011): negative for a refund. Its period-end figures are
// at the original period's end rate.
type Correction struct {
	OriginalPeriod string `json:"originalPeriod"`
	MemberState    string `json:"memberState"`
	RatePercent    string `json:"ratePercent"`
	RateType       string `json:"rateType,omitempty"` // as Line.RateType, of the supplies corrected
	SupplyType     string `json:"supplyType"`
	Establishment  string `json:"establishment,omitempty"` // "" for the member state of identification
	// USDPerEUR is the original period's end rate the correction is
	// converted at; absent while it is not published.
	USDPerEUR *fx.Rate `json:"usdPerEur,omitempty"`
	Amounts
	LedgerIndexes []int64 `json:"ledgerIndexes"`
}

// StateTotal is the VAT due to one member state of consumption: its lines
// in every section plus its corrections.
type StateTotal struct {
	MemberState string `json:"memberState"`
	// VATEUR is absent while a line of the state has no period-end
	// figure (a provisional return); a state of corrections alone has it,
	// each correction being at its original period's end rate.
	VATEUR string `json:"vatEur,omitempty"`
	// CorrectionsVATEUR is the part of VATEUR from corrections, given
	// whenever every correction has its figure, VATEUR or not.
	CorrectionsVATEUR string `json:"correctionsVatEur,omitempty"`
	InvoiceVATEUR     string `json:"invoiceVatEur"`
}

// Payable is the VAT the return asks the taxable person to pay: per
// member state of consumption, the balance of its lines and corrections
// (StateTotal), and the sum of the positive balances. A negative balance
// (corrections of earlier quarters exceeding the quarter's supplies to the
// state) is not offset against another state's: the VAT paid is
// distributed to the member states of consumption as the return declares
// it (Art. 369i Directive 2006/112/EC; Art. 46 Regulation (EU) No
// 904/2010), and the state whose balance is negative refunds it under its
// own procedure (as the Spanish tax agency's instructions for the OSS
// return, form 369, section 5, put it: the negative balance "shall not be
// offset against any positive balance" of another member state of
// consumption, and the amount to pay is "the sum of all ... results that
// show a positive balance",
// https://sede.agenciatributaria.gob.es/Sede/en_gb/ayuda/manuales-videos-folletos/manuales-ayuda-presentacion/modelo-369/presentacion-regimen-exterior-union/5-resultado-autoliquidacion-em-consumo.html).
// Total is the arithmetic sum of every line and correction, which nets
// them; Payable is what is paid.
type Payable struct {
	// VATEUR is the sum of the member states' positive VATEUR; absent
	// while the period-end rate is not published.
	VATEUR string `json:"vatEur,omitempty"`
	// InvoiceVATEUR is the same sum of the states' positive InvoiceVATEUR.
	InvoiceVATEUR string `json:"invoiceVatEur"`
	// RefundedBy are the member states of consumption whose balance is
	// negative (VATEUR, or InvoiceVATEUR while there is no period-end
	// figure), in order; Note says what becomes of it.
	RefundedBy []string `json:"refundedBy"`
	Note       string   `json:"note,omitempty"`
}

// payableNote is Payable.Note when a member state's balance is negative.
const payableNote = "the balance of each member state in refundedBy is negative (corrections of earlier quarters exceed this quarter's supplies there): it is not offset against " +
	"the other states' VAT, which is paid in full (Art. 369i Directive 2006/112/EC; the VAT paid is distributed per member state of consumption, Art. 46 Regulation (EU) No 904/2010); " +
	"the member state of consumption refunds it under its own procedure"

// payable is the return's Payable, from its member state totals.
func payable(states []StateTotal, withRate bool) Payable {
	out := Payable{RefundedBy: []string{}}
	vat, inv := decimal.Zero, decimal.Zero
	for _, st := range states {
		iv := decimal.RequireFromString(st.InvoiceVATEUR)
		if iv.IsPositive() {
			inv = inv.Add(iv)
		}
		bal := iv
		if withRate {
			bal = decimal.RequireFromString(st.VATEUR)
			if bal.IsPositive() {
				vat = vat.Add(bal)
			}
		}
		if bal.IsNegative() {
			out.RefundedBy = append(out.RefundedBy, st.MemberState)
		}
	}
	out.InvoiceVATEUR = inv.StringFixed(2)
	if withRate {
		out.VATEUR = vat.StringFixed(2)
	}
	if len(out.RefundedBy) > 0 {
		out.Note = payableNote
	}
	return out
}

// Summary is sales of the quarter that do not belong in the OSS return,
// per regime, country and rate.
type Summary struct {
	Regime      string `json:"regime"`  // vat Regime constant
	Country     string `json:"country"` // the taxing (or, outside scope, the supply's) country
	RatePercent string `json:"ratePercent,omitempty"`
	// Declared says where these sales are declared instead.
	Declared string `json:"declaredIn"`
	Amounts
	LedgerIndexes []int64 `json:"ledgerIndexes"`
}

// Excluded counts the quarter's records that are in no line.
type Excluded struct {
	// Pending records have no tax determination (PENDING_MANUAL_REVIEW):
	// resolve them, then ask for the return again. Only those of the
	// return's member state of identification: the one the profile kept
	// with the record (Books.SupplySeller) states for its day, or none;
	// the others are in their state's return, and Review names them.
	Pending Bucket `json:"pending"`
	// OtherScheme are OSS records of the other OSS scheme than the
	// return's.
	OtherScheme Bucket `json:"otherScheme"`
	// OtherState are OSS records of the return's scheme whose day of
	// supply fell under another member state of identification (a change
	// within the quarter, Art. 57f Implementing Regulation (EU) No
	// 282/2011; the refunds of such supplies alike): that state's return
	// of the quarter (Options.MemberState) declares them (Art. 59(4)), not
	// this one.
	OtherState Bucket `json:"otherState"`
	// FormerState are refunds recorded this quarter of OSS supplies made
	// while a former member state of identification was it, which is the
	// state of identification on no day of this quarter: its final return
	// was that of an earlier quarter, and no OSS return of this quarter
	// corrects it. Reason says where they go.
	FormerState Bucket `json:"formerState"`
	// TimeBarred are refunds recorded this quarter of OSS supplies of a
	// quarter whose return was due more than three years before this
	// quarter's: an OSS return may no longer correct it (Art. 61(2)
	// Implementing Regulation (EU) No 282/2011). Reason says where they go.
	TimeBarred Bucket `json:"timeBarred"`
}

// Bucket is a count of records with their USDC and ledger indexes.
type Bucket struct {
	Records       int     `json:"records"`
	AmountUSDC    string  `json:"amountUsdc"`
	LedgerIndexes []int64 `json:"ledgerIndexes"`
	// Reason says why the records are in no line, where the bucket's name
	// does not.
	Reason string `json:"reason,omitempty"`
}

// LogCheckpoint is the signed log checkpoint the return was computed at.
type LogCheckpoint struct {
	Origin string `json:"origin"`
	Size   int64  `json:"size"`
	Root   string `json:"rootHash"` // base64, as in the checkpoint
	Note   string `json:"checkpoint"`
}

// Document is a signed return: Return is the exact payload of JWS (a
// statement of type StatementType signed with the receipt key), so a
// verifier compares the two byte for byte (or as JSON values).
type Document struct {
	Object string          `json:"object"` // "signed_oss_return"
	Return json.RawMessage `json:"return"`
	JWS    string          `json:"jws"`
}

// Options adjust OSS. The zero value is the return of the member state of
// identification of the period's last day.
type Options struct {
	// MemberState is the member state of identification whose return is
	// asked for (ISO 3166-1 alpha-2; EL is read as GR): when the state of
	// identification changed within the period, each is owed a return for
	// the supplies of its days (Art. 59(4) Implementing Regulation (EU)
	// No 282/2011). "" is the state of the period's last day, as the
	// profile states it, or, when every OSS supply of the period was
	// declared under one state the profile does not identify the seller
	// in on any day of it (an undated rewrite), that state; with several
	// such states "" is BAD_REQUEST naming them (recordsDefault). A state that
	// is the member state of identification on no day of the period, as
	// the profile states it, and under which no supply of the period was
	// declared, as its record states it (declared.go), nor made and
	// pending review, as the profile kept with it states, is BAD_REQUEST on
	// "memberStateOfIdentification".
	MemberState string
}

// acc accumulates exact figures.
type acc struct {
	n                int
	usdc, net, vat   decimal.Decimal
	idx              []int64
	rate             decimal.Decimal // the line's VAT rate, for the split
	original         Period          // corrections: the period whose rate converts
	establishment    string
	estVATNumber     string // the establishment's VAT number its supplies' records kept
	memberState      string
	rateText, regime string
	rateKind         string // the records' rate type (Line.RateType)
}

func (a *acc) add(usdc, net, vat decimal.Decimal, index int64) {
	a.n++
	a.usdc = a.usdc.Add(usdc)
	a.net = a.net.Add(net)
	a.vat = a.vat.Add(vat)
	a.idx = append(a.idx, index)
}

// amounts rounds the accumulated figures once; usdPerEUR nil leaves the
// period-end figures out.
func (a *acc) amounts(usdPerEUR *fx.Rate) Amounts {
	out := Amounts{Records: a.n, AmountUSDC: a.usdc.StringFixed(6),
		InvoiceTaxableAmountEUR: fx.RoundEUR(a.net).StringFixed(2), InvoiceVATEUR: fx.RoundEUR(a.vat).StringFixed(2)}
	if usdPerEUR != nil {
		net, vat := PeriodEndSplit(a.usdc, a.rate, usdPerEUR.Value)
		out.TaxableAmountEUR = net.StringFixed(2)
		out.VATEUR = vat.StringFixed(2)
		out.DifferenceVATEUR = vat.Sub(fx.RoundEUR(a.vat)).StringFixed(2)
	}
	return out
}

// PeriodEndSplit is a line's taxable amount and VAT in EUR at the period-end
// rate: the USDC total (VAT included) converted exactly (fx.DivExact, 1 USDC
// = 1 USD), split at ratePercent (fx.SplitGross), each rounded once to
// cents. The auditor recomputes lines with it.
func PeriodEndSplit(usdc, ratePercent, usdPerEUR decimal.Decimal) (net, vat decimal.Decimal) {
	gross := fx.DivExact(usdc, usdPerEUR)
	n, v := fx.SplitGross(gross, ratePercent)
	return fx.RoundEUR(n), fx.RoundEUR(v)
}

func (a *acc) indexes() []int64 {
	slices.Sort(a.idx)
	return a.idx
}

func dec(s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Zero, nil
	}
	return decimal.NewFromString(s)
}

// OSS computes the account's OSS return for period p and signs it. A p
// that is no quarter ParsePeriod gives (the zero Period, quarter 0) is
// BAD_REQUEST on "period", as is a quarter that has not begun.
func OSS(ctx context.Context, b *fiscal.Books, p Period, opts Options) (*Return, *Document, error) {
	return oss(ctx, b, p, opts, "")
}

// oss is OSS; profileState, when not "", is the member state of
// identification the profile states for p, which the return asked for
// without one was not given because the quarter's supplies were declared
// under opts.MemberState (recordsDefault).
func oss(ctx context.Context, b *fiscal.Books, p Period, opts Options, profileState string) (*Return, *Document, error) {
	if err := p.check(); err != nil {
		return nil, nil, err
	}
	e := b.Engine()
	now := e.Now()
	// A quarter has begun when its first local day has begun in some
	// taxing territory (east of UTC it begins before 00:00 UTC; localMargin
	// bounds how far), as it ends when its last has ended in every one.
	if p.Start().Add(-localMargin).After(now) {
		return nil, nil, badRequest("period", "%s has not begun", p)
	}
	acct := b.Account()
	r := &Return{Object: "oss_return", Version: Version, Account: acct.ID, Period: p.String(),
		PeriodStart: p.FirstDay(), PeriodEnd: p.LastDay(), Currency: "EUR",
		Seller: SellerInfo{LegalName: acct.Seller.LegalName, VATNumber: acct.Seller.VATNumber, Country: acct.Seller.Country},
		Lines:  []Line{}, FixedEstablishments: []Section{}, Corrections: []Correction{}, MemberStates: []StateTotal{}, NotInOSS: []Summary{}}
	want, err := memberStateOption(opts.MemberState)
	if err != nil {
		return nil, nil, err
	}
	// A state the profile does not identify the seller in on any day of
	// p may still be the one the quarter's supplies were declared under,
	// as their records state (declared.go: the profile may have been
	// rewritten since): its return is of those supplies, and refused only
	// when there are none.
	var unlisted error
	if r.Scheme, r.ID, err = identification(acct.Seller, p, want); err != nil {
		if want == "" || !isEU(want) {
			return nil, nil, err
		}
		unlisted = err
		r.Scheme = defaultScheme(acct.Seller, p)
		r.ID = Identification{MemberState: want, Missing: fmt.Sprintf("the account's profile states no OSS registration with %s as member state of identification on any day of %s: "+
			"this return is of the supplies whose records were declared under it when they were made (their invoices' law, Art. 219a(2)(b) Directive 2006/112/EC), and of those made under it that wait for review (the profile kept with them)", want, p)}
		if profileState != "" {
			r.ID.Missing += fmt.Sprintf("; it is the return of %s asked for without a member state of identification: the profile states %s for %s, undated, but every OSS supply of the quarter was declared under %s, "+
				"and a member state of identification changes only from a day the seller states (Art. 57f Implementing Regulation (EU) No 282/2011); %s's return is asked for with memberStateOfIdentification=%s",
				p, profileState, p, want, profileState, profileState)
		}
	}
	r.Review = currencyReview(r.ID.MemberState, p)

	// The return is of one ledger state, the log's newest checkpoint as it
	// begins: records and refunds appended since are left out (a record
	// revised since, by the revision it had then). A review found a return
	// summing a refund whose sale was appended between the read of the
	// records and that of the refunds, a state no checkpoint holds.
	head, err := e.Ledger().Checkpoint()
	if err != nil {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "reading the log checkpoint failed", Err: err}
	}
	lines := map[string]*acc{}  // establishment|state|rate
	others := map[string]*acc{} // regime|country|rate
	pending, otherScheme, otherState, formerState, timeBarred := &acc{}, &acc{}, &acc{}, &acc{}, &acc{}
	late := map[string][]int64{} // OSS supplies of earlier quarters recorded in p, by quarter
	// Records of p pending review made under another member state of
	// identification, by that state (pendingElsewhereReview).
	pendingElsewhere := map[string][]int64{}
	// OSS supplies of p of the return's scheme declared under another
	// member state of identification, by that state (recordsDefault).
	declaredElsewhere := map[string][]int64{}
	// The seller as the newest record in the lines of the member state of
	// identification kept it (sellerReview).
	var kept struct {
		date  string
		index int64
		s     SellerInfo
	}
	// OSS supplies of p in its lines recorded, or resolved from review,
	// after p ended, by the quarter in which that happened (changedReview).
	recordedAfter, resolvedAfter := map[string][]int64{}, map[string][]int64{}
	// Records of p pending review when it ended, resolved after it to a
	// treatment outside the OSS (notInOss), by the quarter of the
	// resolution (changedReview).
	resolvedOut := map[string][]int64{}
	// What each entry was declared under: as its record states, else as
	// the profile does (declarations).
	decl := &declarations{seller: acct.Seller, scheme: r.Scheme, msi: r.ID.MemberState}
	// ofReturn: a processed record is an OSS supply this return would
	// declare in its quarter (of its scheme, declared through the OSS, of
	// its member state of identification's days).
	ofReturn := func(rc *ossRec, date string) bool {
		c := rc.Classification
		if c.Regime != vat.RegimeOSSB2C || c.Scheme != r.Scheme {
			return false
		}
		national, msi := decl.of(rc.Ledger.Index, c.Scheme, c.TaxingCountry, date, rc.declared(), false)
		return !national && cmp.Or(msi, r.ID.MemberState) == r.ID.MemberState
	}
	outside := map[string][]int64{} // Union supplies and refunds naming an establishment outside the EU, by country
	relied := thresholdYears{}      // supplies in the lines taxed at destination because a year was over the Art. 59c threshold
	maxIndex := int64(-1)
	// A supply of the quarter was recorded at most MaxClockSkew before it
	// settled, so no record created before the quarter (less a day for the
	// clocks) is of it; records of later quarters are read and skipped.
	// The settlement bounds are left to this loop: listing.List would decode
	// every record a second time to apply them.
	q := listing.Query{From: p.Start().Add(-localMargin)}
	err = each(ctx, b, q, func(raw []byte) error {
		var rc ossRec
		if err := json.Unmarshal(raw, &rc); err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
		}
		if rc.Ledger.Index >= head.Size {
			id := rc.ID
			old, err := revisionBefore(b, &rc, head.Size)
			if old == nil || err != nil {
				return err // nil, nil: the record is younger than the state
			}
			if rc = (ossRec{}); json.Unmarshal(old, &rc) != nil {
				return unreadable(id, errors.New("a revision does not parse"))
			}
		}
		date, byUTC := rc.supplyDate()
		if date < p.FirstDay() && rc.ReviewStatus == fiscal.StatusProcessed && recordedWithin(rc.CreatedAt, p) && ofReturn(&rc, date) {
			if op, err := PeriodOf(date); err == nil {
				late[op.String()] = append(late[op.String()], rc.Ledger.Index)
				maxIndex = max(maxIndex, rc.Ledger.Index) // named: the checkpoint covers it
			}
		}
		if !p.Contains(date) {
			return nil
		}
		if byUTC {
			r.DatedByUTC++
		}
		maxIndex = max(maxIndex, rc.Ledger.Index)
		usdc, err := dec(rc.Settlement.AmountUSDC)
		if err != nil {
			return unreadable(rc.ID, err)
		}
		if rc.ReviewStatus != fiscal.StatusProcessed {
			// It will be decided under the profile it was made under,
			// kept with it (Books.SupplySeller): the member state of
			// identification that profile states for its day is the one
			// whose return it belongs to (Art. 59(4) Implementing
			// Regulation (EU) No 282/2011), none stated being this one.
			kept, err := b.SupplySeller(&fiscal.Record{ID: rc.ID, Account: acct.ID})
			if err != nil {
				return err
			}
			switch m := identifiedIn(kept, cmp.Or(rc.Classification.Scheme, r.Scheme), date); {
			case m != "" && m != r.ID.MemberState:
				pendingElsewhere[m] = append(pendingElsewhere[m], rc.Ledger.Index)
				return nil
			case m == "" && unlisted != nil:
				return nil // none stated: the return of the profile's state counts it, not one the profile does not state
			}
			pending.add(usdc, decimal.Zero, decimal.Zero, rc.Ledger.Index)
			return nil
		}
		net, vatEUR, err := exactNetVAT(&rc)
		if err != nil {
			return unreadable(rc.ID, err)
		}
		c := rc.Classification
		rate, err := dec(c.RatePercent.String())
		if err != nil {
			return unreadable(rc.ID, err)
		}
		rateText := ""
		if c.RatePercent != "" {
			rateText = rate.String()
		}
		national, msi := false, ""
		if c.Regime == vat.RegimeOSSB2C {
			national, msi = decl.of(rc.Ledger.Index, c.Scheme, c.TaxingCountry, date, rc.declared(), true)
		}
		if c.Regime != vat.RegimeOSSB2C || national {
			country := c.TaxingCountry
			if country == "" {
				country = c.PlaceOfSupply
			}
			k := c.Regime + "|" + country + "|" + rateText
			a := others[k]
			if a == nil {
				a = &acc{regime: c.Regime, memberState: country, rateText: rateText, rate: rate}
				others[k] = a
			}
			a.add(usdc, net, vatEUR, rc.Ledger.Index)
			if q := quarterOfTime(rc.resolvedAt()); q > p.String() && quarterOfTime(rc.CreatedAt) <= p.String() {
				resolvedOut[q] = append(resolvedOut[q], rc.Ledger.Index)
			}
			return nil
		}
		if c.Scheme != r.Scheme {
			otherScheme.add(usdc, decimal.Zero, decimal.Zero, rc.Ledger.Index)
			return nil
		}
		if msi != "" && msi != r.ID.MemberState {
			otherState.add(usdc, decimal.Zero, decimal.Zero, rc.Ledger.Index)
			declaredElsewhere[msi] = append(declaredElsewhere[msi], rc.Ledger.Index)
			return nil
		}
		est := establishment(r, rc.Seller.Country, rc.Ledger.Index, outside)
		if est == "" && rc.Seller.LegalName != "" && (date > kept.date || date == kept.date && rc.Ledger.Index > kept.index) {
			kept.date, kept.index = date, rc.Ledger.Index
			kept.s = SellerInfo{LegalName: rc.Seller.LegalName, VATNumber: rc.Seller.VATNumber, Country: rc.Seller.Country}
		}
		k := est + "|" + c.TaxingCountry + "|" + rateText + "|" + c.RateKind
		a := lines[k]
		if a == nil {
			a = &acc{establishment: est, memberState: c.TaxingCountry, rateText: rateText, rate: rate, rateKind: c.RateKind}
			lines[k] = a
		}
		if n := rc.Seller.VATNumber; unlisted != nil && r.ID.Number == "" && r.Scheme == vat.SchemeUnion && est == "" && vatNumberCountry(n) == r.ID.MemberState {
			r.ID.Number = n // the number of the member state of identification (Art. 369d), as the supply's record kept it
		}
		if n := rc.Seller.VATNumber; est != "" && vatNumberCountry(n) == est {
			a.estVATNumber = n // the number the supply was made under, not the profile's now
		}
		a.add(usdc, net, vatEUR, rc.Ledger.Index)
		if th := c.Threshold; th != nil {
			relied.add(th.Rule, th.Year, th.Limit, rc.Ledger.Index)
		}
		if q := quarterOfTime(rc.CreatedAt); q > p.String() {
			recordedAfter[q] = append(recordedAfter[q], rc.Ledger.Index)
		} else if q := quarterOfTime(rc.resolvedAt()); q > p.String() {
			resolvedAfter[q] = append(resolvedAfter[q], rc.Ledger.Index)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	r.Review = append(r.Review, lateReview(late, p)...)
	r.Review = append(r.Review, pendingElsewhereReview(pendingElsewhere)...)

	// OSS supplies of earlier quarters resolved from review in p. Their
	// records were created before p, which the scan above does not read:
	// the account's revisions appended since its newest record created
	// before p (less a day for the clocks) are.
	resolved := map[string][]int64{}
	after, err := lastEntryBefore(ctx, b, p.Start().Add(-localMargin))
	if err != nil {
		return nil, nil, err
	}
	err = resolvedSince(b, after, head.Size, func(raw []byte) error {
		var rc ossRec
		if err := json.Unmarshal(raw, &rc); err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
		}
		n := len(rc.History)
		if n < 2 || rc.ReviewStatus != fiscal.StatusProcessed || rc.History[n-2].ReviewStatus != fiscal.StatusPendingReview ||
			!recordedWithin(rc.History[n-1].At, p) || !rc.createdBefore(p) {
			return nil // not resolved in p, or recorded in p (lateReview names it)
		}
		date, _ := rc.supplyDate()
		if date >= p.FirstDay() || !ofReturn(&rc, date) {
			return nil
		}
		if op, err := PeriodOf(date); err == nil {
			resolved[op.String()] = append(resolved[op.String()], rc.Ledger.Index)
			maxIndex = max(maxIndex, rc.Ledger.Index) // named: the checkpoint covers it
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	r.Review = append(r.Review, resolvedReview(resolved, p)...)
	r.Review = append(r.Review, changedReview(recordedAfter, resolvedAfter, resolvedOut, p)...)

	// Refunds of OSS supplies recorded in p but dated (by the block of
	// their transfer) in an earlier quarter, by that quarter and the
	// supply's (laterefunds.go).
	lateRefunds := map[string][]int64{}
	err = refundsSince(b, after, head.Size, func(rf *refunds.Refund) error {
		if !recordedWithin(rf.CreatedAt, p) || rf.RefundDate >= p.FirstDay() {
			return nil
		}
		c := rf.Classification
		if c.Regime != vat.RegimeOSSB2C || c.Scheme != r.Scheme {
			return nil
		}
		orig := refundSupplyDate(rf)
		d, err := refundDeclared(ctx, b, rf)
		if err != nil {
			return err
		}
		if national, msi := decl.of(rf.Ledger.Index, c.Scheme, c.TaxingCountry, orig, d, false); national || cmp.Or(msi, r.ID.MemberState) != r.ID.MemberState {
			return nil
		}
		dated, err1 := PeriodOf(rf.RefundDate)
		supplied, err2 := PeriodOf(orig)
		if err1 != nil || err2 != nil {
			return nil
		}
		k := dated.String() + "|" + supplied.String()
		lateRefunds[k] = append(lateRefunds[k], rf.Ledger.Index)
		maxIndex = max(maxIndex, rf.Ledger.Index) // named: the checkpoint covers it
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	r.Review = append(r.Review, lateRefundReview(lateRefunds, p)...)

	r.DueDate, r.DueDateBasis = p.DueDate(), dueDateBasis(r.Scheme)

	// The period-end rate (Art. 366(2), 369h(2)).
	r.FX = PeriodFX{Peg: fx.PegRate, InvoiceRule: invoiceRule, Rule: "ECB reference rate (USD per EUR) of the last day of the period, or of the next publication if there is none that day: " +
		"Art. 369h(2) Directive 2006/112/EC (Union scheme), Art. 366(2) (non-Union scheme); 1 USDC = 1 USD"}
	var usdPerEUR *fx.Rate
	if src := e.Settings().FX; src != nil {
		rate, err := fx.PeriodEndRate(ctx, src, "USD", p.LastDay())
		switch {
		case err == nil:
			usdPerEUR = &rate
			r.FX.Rate = &rate
		case errors.Is(err, fx.ErrNotYetPublished) || errors.Is(err, fx.ErrNoRate):
			r.FX.Unavailable = "the ECB rate for " + p.LastDay() + " (or the next publication) is not available yet: the return has only the invoices' EUR figures"
		default:
			return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "reading the period-end rate failed", Err: err}
		}
	} else {
		r.FX.Unavailable = "the engine has no ECB rate source"
	}
	switch {
	case !p.ended(now):
		r.Status, r.StatusReason = StatusProvisional, "the quarter has not ended in every member state"
	case usdPerEUR == nil:
		r.Status, r.StatusReason = StatusProvisional, "the period-end ECB rate is not published yet"
	default:
		r.Status = StatusFinal
	}

	// Refunds recorded in the quarter (by their local day in the taxing
	// state): a refund of a supply of this quarter reduces its line; one
	// of an earlier quarter is a correction of that period (Art. 61
	// Implementing Regulation 282/2011); one of a supply outside the OSS
	// reduces its summary.
	corr := map[string]*acc{}
	// Refunds in p's figures recorded after p ended, by the quarter they
	// were recorded in (refundsChangedReview).
	refundsAfter := map[string][]int64{}
	err = refunds.ByDate(ctx, b, p.FirstDay(), p.LastDay(), func(rf *refunds.Refund, _ []byte) error {
		usdc, err := dec(rf.AmountUSDC)
		if err != nil {
			return err
		}
		usdc = usdc.Neg()
		net, vatEUR := decimal.Zero, decimal.Zero
		ns, vs := rf.FX.NetEURExact, rf.FX.VATEURExact
		if ns == "" {
			ns, vs = rf.FX.NetEUR, rf.FX.VATEUR
		}
		if net, err = dec(ns); err != nil {
			return err
		}
		if vatEUR, err = dec(vs); err != nil {
			return err
		}
		c := rf.Classification
		rateText, rate := "", decimal.Zero
		if c.RatePercent != nil {
			rate = c.RatePercent.Decimal()
			rateText = rate.String()
		}
		idx := rf.Ledger.Index
		if idx >= head.Size {
			return nil // appended after the state the return is of
		}
		maxIndex = max(maxIndex, idx)
		orig := refundSupplyDate(rf)
		national, msi := false, ""
		if c.Regime == vat.RegimeOSSB2C {
			d, err := refundDeclared(ctx, b, rf)
			if err != nil {
				return err
			}
			national, msi = decl.of(idx, c.Scheme, c.TaxingCountry, orig, d, true)
		}
		if c.Regime != vat.RegimeOSSB2C || national {
			country := c.TaxingCountry
			if country == "" {
				country = c.PlaceOfSupply
			}
			k := c.Regime + "|" + country + "|" + rateText
			a := others[k]
			if a == nil {
				a = &acc{regime: c.Regime, memberState: country, rateText: rateText, rate: rate}
				others[k] = a
			}
			a.add(usdc, net, vatEUR, idx)
			return nil
		}
		if c.Scheme != r.Scheme {
			otherScheme.add(usdc, decimal.Zero, decimal.Zero, idx)
			return nil
		}
		if ms := msi; ms != "" && ms != r.ID.MemberState {
			if identifiesWithin(acct.Seller, c.Scheme, ms, p) {
				otherState.add(usdc, decimal.Zero, decimal.Zero, idx) // that state's return of p corrects it
			} else {
				formerState.add(usdc, decimal.Zero, decimal.Zero, idx) // no OSS return of p does (Art. 61a(1))
			}
			return nil
		}
		est := establishment(r, rf.Seller.Country, idx, outside)
		if p.Contains(orig) {
			k := est + "|" + c.TaxingCountry + "|" + rateText + "|" + c.RateKind
			a := lines[k]
			if a == nil {
				a = &acc{establishment: est, memberState: c.TaxingCountry, rateText: rateText, rate: rate, rateKind: c.RateKind}
				lines[k] = a
			}
			a.add(usdc, net, vatEUR, idx)
			if q := quarterOfTime(rf.CreatedAt); q > p.String() {
				refundsAfter[q] = append(refundsAfter[q], idx)
			}
			return nil
		}
		op, err := PeriodOf(orig)
		if err != nil {
			return err
		}
		if !correctableIn(op, p) {
			timeBarred.add(usdc, decimal.Zero, decimal.Zero, idx) // Art. 61(2) Implementing Regulation 282/2011
			return nil
		}
		k := op.String() + "|" + est + "|" + c.TaxingCountry + "|" + rateText + "|" + c.RateKind
		a := corr[k]
		if a == nil {
			a = &acc{original: op, establishment: est, memberState: c.TaxingCountry, rateText: rateText, rate: rate, rateKind: c.RateKind}
			corr[k] = a
		}
		a.add(usdc, net, vatEUR, idx)
		if q := quarterOfTime(rf.CreatedAt); q > p.String() {
			refundsAfter[q] = append(refundsAfter[q], idx)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	r.Review = append(r.Review, refundsChangedReview(refundsAfter, p)...)
	// The Art. 59c review is made once the return knows whether it is
	// final (the state it is of), and takes its place here.
	thresholdAt := len(r.Review)

	r.Review = append(r.Review, outsideReview(outside, r.ID.MemberState)...)
	r.Review = append(r.Review, decl.review()...)
	if want == "" && len(lines) == 0 && len(corr) == 0 && pending.n == 0 {
		for m, idx := range pendingElsewhere { // made under m, as the profile kept with them states
			declaredElsewhere[m] = append(declaredElsewhere[m], idx...)
		}
		if state, err := recordsDefault(acct.Seller, r.Scheme, r.ID.MemberState, p, declaredElsewhere); state != "" || err != nil {
			if err != nil {
				return nil, nil, err
			}
			return oss(ctx, b, p, Options{MemberState: state}, r.ID.MemberState)
		}
	}
	if kept.s.LegalName != "" && kept.s != r.Seller {
		r.Review = append(r.Review, sellerReview(r.Seller, kept.s))
		r.Seller = kept.s
	}
	if unlisted != nil && len(lines) == 0 && pending.n == 0 {
		// No supply of p was declared under it either, nor made under it
		// and pending review (the profile kept with it): it identified the
		// seller on no day of p, and corrections of its earlier returns
		// are no return of p's (Art. 61a(1) Implementing Regulation (EU)
		// No 282/2011; excluded.formerState).
		return nil, nil, unlisted
	}

	// Lines and sections, sorted.
	states := map[string]*stateSum{}
	sections := map[string]*Section{}
	for _, a := range sortedAccs(lines) {
		l := Line{MemberState: a.memberState, RatePercent: a.rateText, RateType: a.rateKind, SupplyType: SupplyServices, Amounts: a.amounts(usdPerEUR), LedgerIndexes: a.indexes()}
		states[a.memberState] = states[a.memberState].add(l.Amounts, false)
		if a.establishment == "" {
			r.Lines = append(r.Lines, l)
			continue
		}
		s := sections[a.establishment]
		if s == nil {
			s = &Section{Establishment: a.establishment, Lines: []Line{}}
			if vatNumberCountry(acct.Seller.VATNumber) == a.establishment {
				s.VATNumber = acct.Seller.VATNumber
			}
			sections[a.establishment] = s
		}
		// The establishment's number is the one its supplies were made
		// under (Art. 369g(2) Directive 2006/112/EC), as their records
		// kept it: a later profile may name another, or none there.
		if a.estVATNumber != "" {
			s.VATNumber = a.estVATNumber
		}
		s.Lines = append(s.Lines, l)
	}
	for _, k := range slices.Sorted(maps.Keys(sections)) {
		r.FixedEstablishments = append(r.FixedEstablishments, *sections[k])
	}
	r.Review = append(r.Review, unattributedReview(r, acct.Seller.OtherEstablishments)...)
	for _, a := range sortedAccs(corr) {
		// The original period's end rate, read as the period's own: not
		// published (or no rate) leaves the correction without its
		// figures and the return provisional, saying so; a failure to
		// read it is an error, not a final return without them.
		var rate *fx.Rate
		if src := e.Settings().FX; src != nil {
			rt, err := fx.PeriodEndRate(ctx, src, "USD", a.original.LastDay())
			switch {
			case err == nil:
				rate = &rt
			case errors.Is(err, fx.ErrNotYetPublished) || errors.Is(err, fx.ErrNoRate):
				if r.Status == StatusFinal {
					r.Status, r.StatusReason = StatusProvisional, ""
				}
				if why := "the ECB rate for " + a.original.LastDay() + " (or the next publication), at which the corrections of " + a.original.String() + " are converted, is not available"; !strings.Contains(r.StatusReason, why) {
					r.StatusReason = strings.TrimPrefix(r.StatusReason+"; "+why, "; ")
				}
			default:
				return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "reading the period-end rate of " + a.original.String() + " failed", Err: err}
			}
		}
		c := Correction{OriginalPeriod: a.original.String(), MemberState: a.memberState, RatePercent: a.rateText, RateType: a.rateKind, SupplyType: SupplyServices,
			Establishment: a.establishment, USDPerEUR: rate, Amounts: a.amounts(rate), LedgerIndexes: a.indexes()}
		r.Corrections = append(r.Corrections, c)
		states[a.memberState] = states[a.memberState].add(c.Amounts, true)
	}
	total := &stateSum{}
	for _, k := range slices.Sorted(maps.Keys(states)) {
		s := states[k]
		st := StateTotal{MemberState: k, InvoiceVATEUR: s.invoiceVAT.StringFixed(2)}
		// A state's figures are those its lines and corrections have: a
		// correction is at its original period's end rate, known while
		// this period's is not (a provisional return), so a state of
		// corrections alone has its balance, and every state the part
		// of it from corrections.
		if s.periodOK {
			st.VATEUR = s.vat.StringFixed(2)
		}
		if s.hasCorr && s.corrOK {
			st.CorrectionsVATEUR = s.corrVAT.StringFixed(2)
		}
		r.MemberStates = append(r.MemberStates, st)
		total.merge(s)
	}
	r.Total = Amounts{Records: total.n, AmountUSDC: total.usdc.StringFixed(6), InvoiceTaxableAmountEUR: total.invoiceNet.StringFixed(2), InvoiceVATEUR: total.invoiceVAT.StringFixed(2)}
	if total.periodOK || usdPerEUR != nil && total.n == 0 {
		r.Total.TaxableAmountEUR = total.net.StringFixed(2)
		r.Total.VATEUR = total.vat.StringFixed(2)
		r.Total.DifferenceVATEUR = total.vat.Sub(total.invoiceVAT).StringFixed(2)
	}
	r.Payable = payable(r.MemberStates, r.Total.VATEUR != "")
	for _, a := range sortedAccs(others) {
		r.NotInOSS = append(r.NotInOSS, Summary{Regime: a.regime, Country: a.memberState, RatePercent: a.rateText, Declared: declaredIn(a.regime),
			Amounts: a.amounts(nil), LedgerIndexes: a.indexes()})
	}
	r.Excluded = Excluded{Pending: pending.bucket(), OtherScheme: otherScheme.bucket(), OtherState: otherState.bucket(), FormerState: formerState.bucket(),
		TimeBarred: timeBarred.bucket()}
	if pending.n > 0 {
		r.Review = append(r.Review, pendingReview(r.Excluded.Pending.LedgerIndexes))
		// The return covers every supply of the period (Art. 369g
		// Directive 2006/112/EC): while one of its records is undecided
		// it is not final, and will change when that record is.
		if r.Status == StatusFinal {
			r.Status, r.StatusReason = StatusProvisional, ""
		}
		r.StatusReason = strings.TrimPrefix(r.StatusReason+"; "+pendingStatus(r.Excluded.Pending.LedgerIndexes), "; ")
	}
	if timeBarred.n > 0 {
		r.Excluded.TimeBarred.Reason = timeBarredReason
	}
	if formerState.n > 0 {
		r.Excluded.FormerState.Reason = formerStateReason
	}

	thr, maxIndex, err := thresholdRefundReview(ctx, b, head, r.Status == StatusFinal, maxIndex, relied)
	if err != nil {
		return nil, nil, err
	}
	r.Review = slices.Insert(r.Review, thresholdAt, thr...)
	cp, err := checkpoint(e.Ledger(), head, r.Status == StatusFinal, maxIndex)
	if err != nil {
		return nil, nil, err
	}
	r.Log = cp
	doc, err := sign(b, r)
	if err != nil {
		return nil, nil, err
	}
	return r, doc, nil
}

// refundSupplyDate is the day of the supply a refund corrects: its
// determination's, or, for a record written before the engine kept one,
// the UTC day of its settlement.
func refundSupplyDate(rf *refunds.Refund) string {
	d, _ := supplyDay(rf.Classification.SupplyDate, rf.OriginalSettlement.Timestamp)
	return d
}

// stateSum adds a member state's rounded line figures (each line rounded
// once; the state's total is the sum of its lines, as the return shows
// them).
type stateSum struct {
	n                      int
	usdc                   decimal.Decimal
	net, vat, corrVAT      decimal.Decimal
	invoiceNet, invoiceVAT decimal.Decimal
	periodOK, hasCorr      bool
	corrOK                 bool // every correction has its period-end figures
	seen                   bool
}

func (s *stateSum) add(a Amounts, correction bool) *stateSum {
	if s == nil {
		s = &stateSum{periodOK: true, corrOK: true}
	}
	s.seen = true
	s.n += a.Records
	s.usdc = s.usdc.Add(decimal.RequireFromString(a.AmountUSDC))
	s.invoiceNet = s.invoiceNet.Add(decimal.RequireFromString(a.InvoiceTaxableAmountEUR))
	s.invoiceVAT = s.invoiceVAT.Add(decimal.RequireFromString(a.InvoiceVATEUR))
	s.hasCorr = s.hasCorr || correction
	if a.VATEUR == "" {
		s.periodOK = false
		s.corrOK = s.corrOK && !correction
		return s
	}
	v := decimal.RequireFromString(a.VATEUR)
	s.net = s.net.Add(decimal.RequireFromString(a.TaxableAmountEUR))
	s.vat = s.vat.Add(v)
	if correction {
		s.corrVAT = s.corrVAT.Add(v)
	}
	return s
}

func (s *stateSum) merge(o *stateSum) {
	if !s.seen {
		s.periodOK = true
		s.seen = true
	}
	s.n += o.n
	s.usdc = s.usdc.Add(o.usdc)
	s.net = s.net.Add(o.net)
	s.vat = s.vat.Add(o.vat)
	s.invoiceNet = s.invoiceNet.Add(o.invoiceNet)
	s.invoiceVAT = s.invoiceVAT.Add(o.invoiceVAT)
	s.periodOK = s.periodOK && o.periodOK
}

func (a *acc) bucket() Bucket {
	return Bucket{Records: a.n, AmountUSDC: a.usdc.StringFixed(6), LedgerIndexes: append([]int64{}, a.indexes()...)}
}

// sortedAccs orders accumulators by original period, establishment, member
// state, regime and numeric rate.
func sortedAccs(m map[string]*acc) []*acc {
	out := make([]*acc, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y *acc) int {
		return cmp.Or(cmp.Compare(x.original.String(), y.original.String()), cmp.Compare(x.establishment, y.establishment),
			cmp.Compare(x.regime, y.regime), cmp.Compare(x.memberState, y.memberState), x.rate.Cmp(y.rate), cmp.Compare(x.rateKind, y.rateKind))
	})
	return out
}

// exactNetVAT is the record's exact EUR net and VAT: the 12-decimal
// figures, or the cent figures of a record written before the engine kept
// exact ones.
func exactNetVAT(rc *ossRec) (net, vat decimal.Decimal, err error) {
	ns, vs := rc.FX.NetEURExact, rc.FX.VATEURExact
	if ns == "" {
		ns, vs = rc.FX.NetEUR, rc.FX.VATEUR
	}
	if ns == "" && rc.FX.GrossEURExact != "" {
		ns = rc.FX.GrossEURExact // outside scope: no split
	}
	if net, err = dec(ns); err != nil {
		return
	}
	vat, err = dec(vs)
	return
}

func unreadable(id string, err error) error {
	return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record " + id + " has an unreadable amount", Err: err}
}

// identification reads the OSS registration of the seller that applies
// within period p (vat.Registration.AppliesWithin) and whose member state
// of identification is want ("": any; the one of the period's last days,
// identifyBy). Without one the scheme follows the establishment (an EU
// seller uses the Union scheme, and its member state of identification is
// where it is established, Art. 369a(2)) and Missing says what the profile
// lacks; a state want that identifies the seller on no day of p is
// BAD_REQUEST.
//
// When the member state of identification changed within the period (the
// change applies from the day the seller ceased to qualify in the former
// state, Art. 57f(1) Implementing Regulation (EU) No 282/2011,
// https://datenbank.nwb.de/Dokument/495230_57f), "the taxable person ...
// shall submit VAT returns ... to both the former and the new Member State
// of identification covering the supplies made during the respective
// periods in which the Member States have been the Member State of
// identification" (Art. 59(4),
// https://datenbank.nwb.de/Dokument/Anzeigen/495230_Article59/;
// https://eur-lex.europa.eu/eli/reg_impl/2011/282/oj). Each state's return
// is then produced on its own (Options.MemberState), declares the supplies
// of its days (From, To) and counts the others' in excluded.otherState.
func identification(s fiscal.Seller, p Period, want string) (string, Identification, error) {
	scheme, id, reg := identifyBy(s, p, want)
	if want != "" && id.MemberState != want {
		return "", Identification{}, badRequest("memberStateOfIdentification",
			"%s is not the member state of identification of an OSS registration of the account on any day of %s; the return of %s is %s's", want, p, p, cmp.Or(defaultState(s, p), "no state"))
	}
	var states []string
	for _, g := range s.Registrations {
		if ossWithin(g, p) {
			if c := stateOf(cmp.Or(g.Country, s.Country)); !slices.Contains(states, c) {
				states = append(states, c)
			}
		}
	}
	if len(states) > 1 && reg != nil {
		id.From, id.To = max(p.FirstDay(), reg.ValidFrom), p.LastDay()
		if reg.ValidTo != "" {
			id.To = min(p.LastDay(), reg.ValidTo)
		}
		id.Missing = strings.TrimPrefix(id.Missing+"; ", "; ") + fmt.Sprintf(
			"the member state of identification changed within %s (%s): a return is due to each for the supplies of its days (Art. 59(4) Implementing Regulation (EU) No 282/2011); this one is %s's, for %s to %s; the other states' days are in excluded.otherState, and their returns are asked for with memberStateOfIdentification",
			p, strings.Join(states, ", "), id.MemberState, id.From, id.To)
	}
	return scheme, id, nil
}

// defaultScheme is the OSS scheme of the return of p asked for without a
// member state of identification.
func defaultScheme(s fiscal.Seller, p Period) string {
	scheme, _, _ := identifyBy(s, p, "")
	return scheme
}

// defaultState is the member state of identification of the return of p
// asked for without one.
func defaultState(s fiscal.Seller, p Period) string {
	_, id, _ := identifyBy(s, p, "")
	return id.MemberState
}

// memberStateOption reads Options.MemberState: "" or a two-letter country
// code (EL read as GR).
func memberStateOption(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if len(v) != 2 || strings.IndexFunc(v, func(r rune) bool { return (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') }) >= 0 {
		return "", badRequest("memberStateOfIdentification", "is %s; want the member state's ISO 3166-1 alpha-2 code, e.g. FR", shown.Quote(v))
	}
	return isoCountry(v), nil
}

// identifyBy is identification without the change of state: of the OSS
// registrations that apply within p and identify the seller in want (""
// any), the one that applies latest, which it returns too (nil for the
// establishment's fallback).
func identifyBy(s fiscal.Seller, p Period, want string) (string, Identification, *vat.Registration) {
	regs := slices.Clone(s.Registrations)
	slices.SortStableFunc(regs, func(a, b vat.Registration) int { // latest window first; open-ended last day is latest
		return -cmp.Compare(cmp.Or(a.ValidTo, "9999-12-31"), cmp.Or(b.ValidTo, "9999-12-31"))
	})
	for i, reg := range regs {
		if !reg.AppliesWithin(p.FirstDay(), p.LastDay()) {
			continue
		}
		switch reg.Scheme {
		case vat.RegistrationOSSUnion:
			id := Identification{Number: reg.Number, MemberState: stateOf(reg.Country)}
			if id.MemberState == "" {
				id.MemberState = stateOf(s.Country)
			}
			if want != "" && id.MemberState != want {
				continue
			}
			if id.Number == "" {
				id.Number = s.VATNumber // Art. 369d: the number of the member state of identification
			}
			return vat.SchemeUnion, id, &regs[i]
		case vat.RegistrationOSSNonUnion:
			id := Identification{Number: reg.Number, MemberState: stateOf(reg.Country)}
			if want != "" && id.MemberState != want {
				continue
			}
			if id.Number == "" {
				id.Missing = "the account's oss_non_union registration has no number (Art. 362)"
			}
			return vat.SchemeNonUnion, id, &regs[i]
		}
	}
	if home := stateOf(s.Country); isEU(home) && (want == "" || want == home && !hasOSSWithin(s, p)) {
		return vat.SchemeUnion, Identification{Number: s.VATNumber, MemberState: home,
			Missing: "the account states no oss_union registration: the member state of establishment and its VAT number are shown (Art. 369a(2), 369d)"}, nil
	}
	if want != "" {
		return "", Identification{}, nil
	}
	return vat.SchemeNonUnion, Identification{Missing: "the account states no oss_non_union registration: number and member state of identification unknown"}, nil
}

// hasOSSWithin reports whether the seller states an OSS registration that
// applies within p.
func hasOSSWithin(s fiscal.Seller, p Period) bool {
	return slices.ContainsFunc(s.Registrations, func(g vat.Registration) bool { return ossWithin(g, p) })
}

// ossWithin: g is an OSS registration (Union or non-Union) in force on a
// day of p.
func ossWithin(g vat.Registration, p Period) bool {
	return (g.Scheme == vat.RegistrationOSSUnion || g.Scheme == vat.RegistrationOSSNonUnion) && g.AppliesWithin(p.FirstDay(), p.LastDay())
}

// identifiesWithin reports whether state is the member state of
// identification of the seller's registration for the OSS scheme named on
// some day of p: whether a return of p is owed to it.
func identifiesWithin(s fiscal.Seller, scheme, state string, p Period) bool {
	want := ossRegistration(scheme)
	return slices.ContainsFunc(s.Registrations, func(g vat.Registration) bool {
		c := stateOf(g.Country)
		if want == vat.RegistrationOSSUnion {
			c = stateOf(cmp.Or(g.Country, s.Country))
		}
		return g.Scheme == want && c == state && g.AppliesWithin(p.FirstDay(), p.LastDay())
	})
}

// correctableIn reports whether the return of p may still correct the
// return of the earlier quarter op. Changes to a return's figures are made
// "only by adjustments in a subsequent return" (Art. 61(1) Implementing
// Regulation (EU) No 282/2011 as replaced by Implementing Regulations (EU)
// 2019/2026 and 2020/1112), submitted "within three years of the date on
// which the initial return was required to be submitted" (Art. 61(2),
// https://datenbank.nwb.de/Dokument/495230_61;
// https://eur-lex.europa.eu/eli/reg_impl/2011/282/oj). A quarter's return
// is due by the end of the month following the quarter (Art. 364 and 369f
// Directive 2006/112/EC). The return of p can be submitted at the latest
// on its own due date and no earlier than the day after p: with quarters,
// its due date is within three years of op's exactly when p is at most
// twelve quarters after op (p's earliest submission, the day after p, is
// then on or before op's due date plus three years; for a later p it is
// after it).
func correctableIn(op, p Period) bool {
	return !p.End().AddDate(0, 1, 0).After(op.End().AddDate(3, 1, 0))
}

// dueDateBasis is the legal basis of Return.DueDate for the scheme: the
// return "shall be submitted by the end of the month following the end of
// the tax period covered by the return" (Art. 369f Directive 2006/112/EC,
// Union scheme; Art. 364, non-Union scheme), and the VAT is paid "at the
// latest ... at the expiry of the deadline by which the return must be
// submitted" (Art. 369i; Art. 367)
// (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112;
// https://vat-one-stop-shop.ec.europa.eu/one-stop-shop/declare-and-pay-oss_en).
func dueDateBasis(scheme string) string {
	if scheme == vat.SchemeUnion {
		return "the return is submitted, and its VAT paid, by the end of the month following the end of the tax period (Art. 369f and 369i Directive 2006/112/EC, Union scheme)"
	}
	return "the return is submitted, and its VAT paid, by the end of the month following the end of the tax period (Art. 364 and 367 Directive 2006/112/EC, non-Union scheme)"
}

// timeBarredReason is why a refund of a supply of a quarter whose return
// was due more than three years before this quarter's is in no line: an
// OSS return may no longer correct it (Art. 61(2) Implementing Regulation
// (EU) No 282/2011), and the rules of the member state of consumption on
// assessments and amendments apply (its second subparagraph). The Spanish
// tax agency's instructions for the OSS return (form 369) say the same:
// after the three years "corrections cannot be submitted through the
// single window system, but rather you must contact the affected Member
// State of consumption directly"
// (https://sede.agenciatributaria.gob.es/Sede/en_gb/ayuda/manuales-videos-folletos/manuales-ayuda-presentacion/modelo-369/presentacion-regimen-exterior-union/4-correcciones-autoliquidaciones.html).
const timeBarredReason = "refunds of supplies of a quarter whose OSS return was due more than three years before this quarter's: an OSS return may no longer correct it " +
	"(Art. 61(2) Implementing Regulation (EU) No 282/2011); the correction is made with the tax authorities of the member state of consumption under its own rules on assessments and amendments"

// currencyReview is what a person must check about the return's currency
// when the member state of identification has not adopted the euro on the
// period's last day: "The VAT return shall be made out in euro. Member
// States which have not adopted the euro may require the VAT return to be
// made out in their national currency" (Art. 369h(1) Directive 2006/112/EC,
// Union scheme; Art. 366(1), non-Union scheme,
// https://datenbank.nwb.de/Dokument/Anzeigen/452295_Article366/), a
// determination that applies to every taxable person using the schemes in
// that state (Art. 61c Implementing Regulation (EU) No 282/2011,
// https://datenbank.nwb.de/Dokument/495230_Article61c). Which states require
// it the engine does not hold, so the euro return is not presented as the
// one to file without that check.
func currencyReview(state string, p Period) []string {
	nc, ok, err := fx.NationalCurrencyFor(state, p.End().Add(-12*time.Hour))
	if err != nil || !ok {
		return nil
	}
	return []string{fmt.Sprintf("the member state of identification %s has not adopted the euro and may require the VAT return to be made out in %s "+
		"(Art. 369h(1) Directive 2006/112/EC, Union scheme; Art. 366(1), non-Union scheme), for every taxable person using the schemes there (Art. 61c Implementing Regulation (EU) No 282/2011): "+
		"this return is in euro; check what %s requires before filing, and if it is %s, convert at the ECB rate of %s or the next publication (Art. 369h(2), 366(2))",
		state, nc.Currency, state, nc.Currency, p.LastDay())}
}

// establishment is the section of a Union return a record of the seller
// established in country belongs to: "" for the member state of
// identification, else the member state of the fixed establishment (Art.
// 369g(1) and (3) Directive 2006/112/EC). A record naming an establishment
// outside the EU (a business established in a third country, identified
// where it has a fixed establishment, Art. 369a(2)) has no section of its
// own: the return has none for it. It is counted with the member state of
// identification and its index kept in outside, for review
// (outsideReview).
func establishment(r *Return, country string, index int64, outside map[string][]int64) string {
	c := stateOf(country)
	switch {
	case r.Scheme != vat.SchemeUnion || c == r.ID.MemberState:
		return ""
	case !isEU(c):
		outside[c] = append(outside[c], index)
		return ""
	}
	return c
}

// unattributedReview says, for a Union return with supplies from the
// member state of identification, which fixed establishments in other
// member states the account's profile states that have no section: the
// return has the services "supplied from" each such establishment apart,
// with its VAT identification number (Art. 369g(3) Directive
// 2006/112/EC), and a record names only the seller's establishment, not
// the one a service was supplied from. The engine does not guess that none
// was; a person checks before filing.
func unattributedReview(r *Return, others []string) []string {
	if r.Scheme != vat.SchemeUnion || len(r.Lines) == 0 {
		return nil
	}
	var out []string
	for _, o := range others {
		c := isoCountry(o)
		if c == r.ID.MemberState || !isEU(c) || slices.ContainsFunc(r.FixedEstablishments, func(s Section) bool { return s.Establishment == c }) {
			continue
		}
		out = append(out, fmt.Sprintf("the account states a fixed establishment in %s, and the records do not say from which establishment each service was supplied: "+
			"this return counts the quarter's supplies as made from the member state of identification %s, with no section for %s; services supplied from the establishment in %s "+
			"are declared in a section of their own with its VAT identification number (Art. 369g(3) Directive 2006/112/EC): check before filing", c, r.ID.MemberState, c, c))
	}
	return out
}

// outsideReview says which records of a Union return name an
// establishment outside the EU, counted with the member state of
// identification.
func outsideReview(outside map[string][]int64, msi string) []string {
	return perKey(outside, func(c string, idx []int64) string {
		return fmt.Sprintf("%d entries (ledger indexes %v) name the seller's establishment in %s, outside the EU: the Union return has sections only for the member state of identification "+
			"and for fixed establishments in other member states (Art. 369g(1), (3) Directive 2006/112/EC), so they are counted with %s; check which establishment made these supplies",
			len(idx), idx, c, msi)
	})
}

// perKey is line(k, its ledger indexes sorted) for each key of m in order:
// the review lines that name records by group.
func perKey(m map[string][]int64, line func(k string, idx []int64) string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		slices.Sort(m[k])
		out = append(out, line(k, m[k]))
	}
	return out
}

// recordedWithin reports whether a record created at createdAt (RFC 3339)
// was recorded within p, in UTC.
func recordedWithin(createdAt string, p Period) bool {
	t, err := time.Parse(time.RFC3339Nano, createdAt)
	return err == nil && !t.Before(p.Start()) && t.Before(p.End())
}

// lateReview says, per earlier quarter, which OSS supplies of it were
// recorded in this quarter. Each is in the return of its own quarter; if
// that return was submitted before the supply was recorded, the supply is
// in no submitted return, and "changes to the figures contained in a VAT
// return relating to periods from the third return period in 2021 shall,
// after the submission of that VAT return, be made only by adjustments in
// a subsequent return" (Art. 61(1) Implementing Regulation (EU) No
// 282/2011, https://datenbank.nwb.de/Dokument/495230_61). The ledger does
// not know when a return was submitted: a person adds the adjustment, or
// not, within the three years of Art. 61(2) (barredReview).
func lateReview(late map[string][]int64, p Period) []string {
	return perKey(late, func(q string, idx []int64) string {
		s := fmt.Sprintf("%d OSS supplies of %s were recorded in this quarter (ledger indexes %v): they are in the return of %s; "+
			"if that return was submitted before they were recorded", len(idx), q, idx, q)
		if barred(q, p) {
			return s + ", " + barredReview(q)
		}
		return s + fmt.Sprintf(", declare them here as adjustments of %s (Art. 61(1) Implementing Regulation (EU) No 282/2011), which this return does not do", q)
	})
}

// recordsDefault is the member state of identification of the return of p
// asked for without one, when the profile's (profileState) is not: every
// OSS supply of p of the scheme named was declared under another state,
// as its record states it, or made under it and pending review, as the
// profile kept with it states (declared, by state), and the profile identifies
// the seller in none of them on any day of p. A member state of
// identification changes only from a day the seller states (Art. 57f
// Implementing Regulation (EU) No 282/2011), so an undated rewrite of the
// profile does not make the profile's state that of the quarter's
// supplies: with one such state, its return is the quarter's; with
// several, each is owed its own (Art. 59(4)), the engine does not guess
// which is the default, and the request is BAD_REQUEST naming them.
// "" and nil: the profile's state stands (it has supplies or corrections
// of p, or a dated change makes the other states its own).
func recordsDefault(s fiscal.Seller, scheme, profileState string, p Period, declared map[string][]int64) (string, error) {
	states := slices.Sorted(maps.Keys(declared))
	if len(states) == 0 || slices.ContainsFunc(states, func(st string) bool { return identifiesWithin(s, scheme, st, p) }) {
		return "", nil
	}
	if len(states) == 1 {
		return states[0], nil
	}
	return "", badRequest("memberStateOfIdentification",
		"is needed for %s: the account's profile states %s, undated, but the quarter's OSS supplies were declared under %s, as their records state (Art. 219a(2)(b) Directive 2006/112/EC), "+
			"and each is owed a return of the supplies of its days (Art. 59(4) Implementing Regulation (EU) No 282/2011): ask for each of them", p, cmp.Or(profileState, "no state"), strings.Join(states, ", "))
}

// sellerReview says that the return names the seller as the records of
// its supplies kept it (the newest in the member state of
// identification's lines), not as the account's profile now states it:
// the supplies were made, and invoiced (Art. 226(5) Directive
// 2006/112/EC), under those facts.
func sellerReview(profile, records SellerInfo) string {
	return fmt.Sprintf("the seller is stated as the records of this return's supplies kept it (%s, VAT number %s, %s), not as the account's profile now states it (%s, VAT number %s, %s): "+
		"they were made and invoiced under those facts (Art. 226(5) Directive 2006/112/EC); check the profile before filing",
		records.LegalName, cmp.Or(records.VATNumber, "none"), records.Country, profile.LegalName, cmp.Or(profile.VATNumber, "none"), profile.Country)
}

// pendingReview says that records of the quarter wait for review: they
// have no tax determination and are in no line (excluded.pending), and
// the engine never guesses one. Some may be OSS supplies whose VAT this
// return then leaves out, so they are resolved before filing, and the
// return asked for again.
func pendingReview(idx []int64) string {
	return fmt.Sprintf("%d records of this quarter wait for review (ledger indexes %v) and are in no line (excluded.pending): they have no tax determination yet, and any of them may be an OSS supply of this return; "+
		"resolve them before filing and ask for the return again", len(idx), idx)
}

// pendingStatus is the StatusReason of a return with records of its
// quarter pending review (excluded.pending).
func pendingStatus(idx []int64) string {
	return fmt.Sprintf("%d records of the quarter wait for review (ledger indexes %v, excluded.pending): the return is final once they are decided", len(idx), idx)
}

// pendingElsewhereReview says which records of the quarter pending review
// were made while another member state of identification was the
// seller's, as the profile kept with them states it (fiscal's
// settlement-profile, Books.SupplySeller): they are decided under that
// profile, and that state's return of the quarter (Options.MemberState)
// counts them in excluded.pending, not this one (Art. 59(4) Implementing
// Regulation (EU) No 282/2011).
func pendingElsewhereReview(m map[string][]int64) []string {
	return perKey(m, func(state string, idx []int64) string {
		return fmt.Sprintf("%d records pending review (ledger indexes %v) were made while %s was the member state of identification, as the profile kept with them states: "+
			"they are decided under it and belong to %s's return of this quarter (Art. 59(4) Implementing Regulation (EU) No 282/2011), whose excluded.pending counts them, not this one's",
			len(idx), idx, state, state)
	})
}

// formerStateReason is why a refund of a supply of a former member state
// of identification's days, recorded in a quarter in which that state
// identifies the seller on no day, is in no OSS return. The former state's
// final return was an earlier quarter's (Art. 61a(1) first subparagraph);
// "Any corrections to the final return and previous returns arising after
// the submission of the final return shall be discharged directly with
// the tax authorities of the Member State of consumption concerned"
// (second subparagraph, https://datenbank.nwb.de/Dokument/495230_61a;
// https://eur-lex.europa.eu/eli/reg_impl/2011/282/oj). The ledger does not
// know when that return was submitted, and the regulation does not say
// where a correction arising before its submission but after its period
// goes: never guessed into a line, each is for a person to review.
const formerStateReason = "refunds of supplies made while a former member state of identification was it, which identifies the seller on no day of this quarter: " +
	"no OSS return of this quarter corrects them. Corrections arising after the former state's final return was submitted are discharged directly with the tax authorities " +
	"of the member state of consumption (Art. 61a(1) second subparagraph Implementing Regulation (EU) No 282/2011); where one arising before that submission goes the regulation does not say: review each"

// identifiedIn is the member state of identification of the seller's
// registration for the OSS scheme named that applies on day (as
// identifyBy reads it), "" when none is stated for that day.
func identifiedIn(s fiscal.Seller, scheme, day string) string {
	want := ossRegistration(scheme)
	for _, reg := range vat.RegistrationsOn(s.Registrations, day) {
		switch {
		case reg.Scheme != want:
		case want == vat.RegistrationOSSUnion:
			return stateOf(cmp.Or(reg.Country, s.Country))
		default:
			return stateOf(reg.Country)
		}
	}
	return ""
}

// ossRegistration is the registration scheme of an OSS scheme
// (vat.SchemeUnion or vat.SchemeNonUnion).
func ossRegistration(scheme string) string {
	if scheme == vat.SchemeUnion {
		return vat.RegistrationOSSUnion
	}
	return vat.RegistrationOSSNonUnion
}

// isEU reports whether c, as isoCountry writes it, is itself the code of
// one of the 27 member states (Art. 5 Directive 2006/112/EC). It does not
// read c as vat.MemberStateOf does (Monaco as France, Art. 7(1)), on
// purpose: every code it is given is either already a state, or names one
// that must be a member state as given.
//   - stateOf's result (identification, establishment) and an invoice's
//     TaxCountry (declaredWhenMade, written by invoicelaw from
//     vat.MemberStateOf) are states already: Monaco reached them as FR.
//   - The member state a return or a records query names
//     (memberStateOfIdentification, RecordsQuery.MemberState) is a member
//     state of identification (Art. 369a) or of consumption (Art. 369k),
//     and Monaco is neither: the records of a customer in Monaco are taxed
//     in, and listed under, FR (Determination.TaxingCountry). An MC query
//     is refused rather than answered as France's under another name.
//   - A fixed establishment the profile lists (unattributedReview) is read
//     as vat.Determine reads Seller.OtherEstablishments, by the raw code:
//     "MC" is no member state there, and its supplies wait for review.
func isEU(c string) bool { return vat.IsMemberState(isoCountry(c)) }

// stateOf is the member state a seller's (or its registration's) country
// names for VAT, as the engine determined its supplies (vat.MemberStateOf:
// a seller in Monaco is established in France, Art. 7(1) Directive
// 2006/112/EC); any other code as isoCountry writes it.
func stateOf(c string) string {
	if s, ok := vat.MemberStateOf(c); ok {
		return s
	}
	return isoCountry(c)
}

// isoCountry maps the VAT prefix EL to ISO GR and upper-cases.
func isoCountry(c string) string {
	c = strings.ToUpper(c)
	if c == "EL" {
		return "GR"
	}
	return c
}

func vatNumberCountry(n string) string {
	if len(n) < 2 {
		return ""
	}
	return isoCountry(n[:2])
}

// declaredNationally reports whether a destination-taxed consumer sale
// (OSS_B2C) of the OSS scheme named is declared outside the OSS: the
// seller states its registrations, none for that scheme, and one in the
// member state of consumption. The special schemes are an option (Art.
// 369b and 359 Directive 2006/112/EC: member states "shall permit" them);
// a seller that does not use one is identified where the supply is taxed
// (Art. 214(1)(a)) and declares it in that state's return, which is what
// its invoice states (invoicelaw, Art. 219a(1)). A seller registered for
// the scheme declares all such supplies through it (Art. 369b, 359).
//
// Only the registrations that apply on day, the supply's day
// (vat.RegistrationsOn), count, as they did for its invoice.
func declaredNationally(s fiscal.Seller, scheme, country, day string) bool {
	if s.Registrations == nil {
		return false // not stated: the OSS is assumed, as the invoice assumes it
	}
	s.Registrations = vat.RegistrationsOn(s.Registrations, day)
	oss := ossRegistration(scheme)
	national := false
	for _, g := range s.Registrations {
		switch {
		case g.Scheme == oss:
			return false
		case g.Scheme == vat.RegistrationNational && stateOf(g.Country) == stateOf(country):
			national = true
		}
	}
	return national
}

func declaredIn(regime string) string {
	switch regime {
	case vat.RegimeOSSB2C:
		return "the national VAT return of the member state of consumption, where the seller is registered (Art. 214(1)(a)); it uses no OSS scheme for these sales"
	case vat.RegimeDomestic:
		return "the national VAT return of the taxing member state"
	case vat.RegimeReverseChargeB2B:
		return "the customer's VAT return (reverse charge, Art. 196); the seller's recapitulative statement (Art. 262)"
	case vat.RegimeOutsideScope:
		return "no EU VAT return: the place of supply is outside the EU"
	case vat.RegimeUKDomestic, vat.RegimeUKB2C, vat.RegimeUKReverseCharge:
		return "the UK VAT return (UK ruleset)"
	}
	return "not the OSS return"
}

// checkpoint is the log checkpoint the return is computed at.
func checkpoint(l *ledger.Ledger, head ledger.Checkpoint, final bool, maxIndex int64) (LogCheckpoint, error) {
	cp := head
	var err error
	switch {
	case final && maxIndex >= 0:
		cp, err = l.CoveringCheckpoint(maxIndex)
	case final:
		cp, err = l.CheckpointAt(0)
	}
	if err != nil {
		return LogCheckpoint{}, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "reading the log checkpoint failed", Err: err}
	}
	return LogCheckpoint{Origin: cp.Origin, Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:]), Note: string(cp.Note)}, nil
}

// sign marshals the return and signs it as a statement.
func sign(b *fiscal.Books, r *Return) (*Document, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("returns: encode return: %w", err)
	}
	jws, err := b.SignStatement(StatementType, payload)
	if err != nil {
		return nil, err
	}
	return &Document{Object: "signed_oss_return", Return: payload, JWS: jws}, nil
}

// revisionBefore is the stored document of the newest revision of rc that
// the log held below size (nil when the record was created at or after it),
// read and verified as its webhook's body is (Books.EventDocument).
func revisionBefore(b *fiscal.Books, rc *ossRec, size int64) ([]byte, error) {
	for i := len(rc.History) - 1; i >= 0; i-- {
		entryID := strings.TrimPrefix(rc.History[i].ReceiptID, "rcpt_")
		raw, err := b.EventDocument(fiscal.Event{ID: "evt_" + entryID, Account: b.Account().ID, RecordID: rc.ID, EntryID: entryID})
		if err != nil {
			return nil, err
		}
		var at struct {
			Ledger struct {
				Index int64 `json:"index"`
			} `json:"ledger"`
		}
		if err := json.Unmarshal(raw, &at); err != nil {
			return nil, unreadable(rc.ID, err)
		}
		if at.Ledger.Index < size {
			return raw, nil
		}
	}
	return nil, nil
}
