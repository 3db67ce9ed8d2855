package httpserver

import (
	"bytes"
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/returns"
)

// formatOf reads ?format=, defaulting to def.
func formatOf(v url.Values, def string, allowed ...string) (string, error) {
	f := v.Get("format")
	if f == "" {
		return def, nil
	}
	if !slices.Contains(allowed, f) {
		return "", badRequestf("format", "is %s; want one of %s", shown.Quote(f), strings.Join(allowed, ", "))
	}
	return f, nil
}

func periodOf(v url.Values) (returns.Period, error) {
	if v.Get("period") == "" {
		return returns.Period{}, badRequestf("period", "is required: a calendar quarter as YYYY-Qn, e.g. 2026-Q1")
	}
	return returns.ParsePeriod(v.Get("period"))
}

// getOSSReturn: GET /v1/returns/oss?period=2026-Q1[&format=csv]
// [&memberStateOfIdentification=FR], the account's OSS return of a quarter
// (package returns), of one member state of identification when it changed
// within the quarter.
func (s *Server) getOSSReturn(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := cmp.Or(onlyParams(q, "period", "format", "memberStateOfIdentification"), refuseEmpty(q, "format", "memberStateOfIdentification")); err != nil {
		s.problem(w, r, err)
		return
	}
	format, err := formatOf(q, "json", "json", "csv")
	if err != nil {
		s.problem(w, r, err)
		return
	}
	p, err := periodOf(q)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ret, doc, err := returns.OSS(r.Context(), books, p, returns.Options{MemberState: q.Get("memberStateOfIdentification")})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if format == "csv" {
		var buf bytes.Buffer
		if err := returns.WriteCSV(&buf, ret); err != nil {
			s.problem(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		name := "oss-return-" + ret.Period
		if ret.ID.From != "" { // one of the states of a quarter whose state of identification changed
			name += "-" + ret.ID.MemberState
		}
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
		_, _ = w.Write(buf.Bytes())
		return
	}
	s.writeResult(w, r, doc, nil)
}

// OSSRecords is the JSON body of GET /v1/returns/oss/records.
type OSSRecords struct {
	Object      string              `json:"object"` // "oss_records"
	Account     string              `json:"account"`
	Period      string              `json:"period"`
	MemberState string              `json:"memberState"`
	LegalBasis  string              `json:"legalBasis"`
	Data        []returns.RecordRow `json:"data"`
}

// getOSSRecords: GET /v1/returns/oss/records?period=&memberState=, the
// Art. 63c records of the quarter's OSS supplies to one member state.
func (s *Server) getOSSRecords(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := cmp.Or(onlyParams(q, "period", "memberState", "format"), refuseEmpty(q, "format")); err != nil {
		s.problem(w, r, err)
		return
	}
	format, err := formatOf(q, "json", "json", "csv")
	if err != nil {
		s.problem(w, r, err)
		return
	}
	p, err := periodOf(q)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if q.Get("memberState") == "" {
		s.problem(w, r, badRequestf("memberState", "is required: the member state of consumption that asks (ISO 3166-1 alpha-2)"))
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	rq := returns.RecordsQuery{Period: p, MemberState: q.Get("memberState")}
	var buf bytes.Buffer
	if format == "csv" {
		cw, err := returns.NewRecordsCSV(&buf)
		if err == nil {
			err = returns.Records(r.Context(), books, rq, cw.Write)
		}
		if err == nil {
			err = cw.Flush()
		}
		if err != nil {
			s.problem(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
		return
	}
	body := OSSRecords{Object: "oss_records", Account: books.Account().ID, Period: p.String(), MemberState: invoicelaw.ISOCountry(strings.ToUpper(rq.MemberState)), // EL is GR, as returns.Records reads it
		LegalBasis: "Art. 63c Implementing Regulation (EU) No 282/2011; Art. 369k Directive 2006/112/EC", Data: []returns.RecordRow{}}
	err = returns.Records(r.Context(), books, rq, func(row returns.RecordRow) error { body.Data = append(body.Data, row); return nil })
	s.writeValue(w, r, http.StatusOK, "no-store", body, err)
}

// firstWrite tells whether anything reached the client.
type firstWrite struct {
	w       http.ResponseWriter
	started bool
}

func (f *firstWrite) Write(p []byte) (int, error) {
	f.started = true
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok && err == nil {
		fl.Flush()
	}
	return n, err
}

// exportSettlements: GET /settlements/export?from=&to=&format=csv|jsonl,
// every record of the account created in the range, streamed.
func (s *Server) exportSettlements(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := cmp.Or(onlyParams(q, "from", "to", "format"), refuseEmpty(q, "from", "to", "format")); err != nil {
		s.problem(w, r, err)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = returns.FormatCSV
	}
	if err := returns.CheckFormat(format); err != nil {
		s.problem(w, r, err)
		return
	}
	from, err := parseBound("from", q.Get("from"), false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	to, err := parseBound("to", q.Get("to"), true)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if format == returns.FormatCSV {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/jsonl")
	}
	fw := &firstWrite{w: w}
	if err := returns.Export(r.Context(), books, returns.ExportQuery{From: from, To: to, Format: format}, fw); err != nil {
		if !fw.started {
			w.Header().Del("Content-Type")
			s.problem(w, r, err)
			return
		}
		// Part of the export is out: abort the response, so the client sees
		// a broken transfer rather than a file that looks complete.
		s.log.Error("export interrupted", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// Examples of the text answers, for the OpenAPI document (taken from a run
// of the returns tests; the JSON answers' examples are recorded by
// TestOpenAPIExamples).
const (
	exampleReturnCSV = `period,status,scheme,ossIdentificationNumber,memberStateOfIdentification,section,establishment,establishmentVatNumber,originalPeriod,memberState,ratePercent,rateType,supplyType,records,amountUsdc,usdPerEur,taxableAmountEur,vatEur,invoiceTaxableAmountEur,invoiceVatEur,differenceVatEur,ledgerIndexes,note
2026-Q1,final,union,IE1234567T,IE,oss,,,,DE,7,reduced,services,1,10.700000,1.1498,8.70,0.61,8.43,0.59,0.02,1,
2026-Q1,final,union,IE1234567T,IE,oss,,,,DE,19,standard,services,1,1190.000000,1.1498,869.72,165.25,858.30,163.08,2.17,0,
2026-Q1,final,union,IE1234567T,IE,member_state,,,,DE,,,,,,,,165.86,,163.67,,,
2026-Q1,final,union,IE1234567T,IE,payable,,,,,,,,,,,,165.86,,163.67,,,
2026-Q1,final,union,IE1234567T,IE,not_in_oss:REVERSE_CHARGE_B2B,,,,FR,0,,services,1,100.000000,,,,84.30,0.00,,3,
2026-Q1,final,union,IE1234567T,IE,excluded_pending,,,,,,,,1,12.000000,,,,,,,2,
`
	exampleRecordsCSV = `receiptId,recordId,ledgerIndex,memberStateOfConsumption,supplyType,serviceKind,description,supplyDate,taxableAmount,taxableAmountExact,taxableAmountCurrency,adjustments,ratePercent,vatAmount,vatAmountExact,vatCurrency,usdPerEur,fxRateDate,paymentDate,paymentAmount,paymentCurrency,network,txHash,invoiceNumber,invoiceIssueDate,invoiceUblSha256,customerName,customerCountry,customerPostalCode,locationEvidence,missing
rcpt_x402-d33e1c591f8f6943a478e408b312fbfe,x402-d33e1c591f8f6943a478e408b312fbfe,0,DE,services,digital_service,Digital service,2026-01-15,858.29,858.295425285383,EUR,,19,163.08,163.076130804223,EUR,1.1651,2026-01-14,2026-01-15T10:00:00Z,1190,USDC,eip155:8453,0xb413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2,F402-2026-000001,2026-04-13,6f78eaa09fb69d4f4f6a970d19075ee8b365cd4f8603d0a3651ee9396f94a820,,DE,,,"(i) payments on account received before the supply: the ledger records the settled payment only, which is the chargeable event; (k) the name of the customer: not given for this supply"
`
	exampleExportCSV = `id,type,createdAt,settledAt,supplyDate,country,category,regime,ratePercent,netEur,vatEur,grossEur,amountUsdc,network,txHash,invoiceNumber,receiptId,reviewStatus,ledgerIndex,netEurExact,vatEurExact,grossEurExact,invoiceCoverage
x402-d33e1c591f8f6943a478e408b312fbfe,settlement,2026-04-13T18:00:00Z,2026-01-15T10:00:00Z,2026-01-15,DE,S,OSS_B2C,19,858.29,163.08,1021.37,1190,eip155:8453,0xb413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2,F402-2026-000001,rcpt_x402-d33e1c591f8f6943a478e408b312fbfe,PROCESSED,0,858.295425285383,163.076130804223,1021.371556089606,per_payment
x402-8ec504d73c9ac08abef5a8b83e528ae8,settlement,2026-04-13T18:00:00Z,2026-02-15T10:00:00Z,,,,,,,,10.12,12.00,eip155:8453,0x583c7dfb7b3055d99465544032a571e10a134b1b6f769422bbb71fd7fa167a5d,,rcpt_x402-8ec504d73c9ac08abef5a8b83e528ae8,PENDING_MANUAL_REVIEW,2,,,10.116337885685,not_invoiced
`
	exampleExportJSONL = `{"id":"x402-d33e1c591f8f6943a478e408b312fbfe","type":"settlement","createdAt":"2026-04-13T18:00:00Z","settledAt":"2026-01-15T10:00:00Z","supplyDate":"2026-01-15","country":"DE","category":"S","regime":"OSS_B2C","ratePercent":"19","netEur":"858.29","vatEur":"163.08","grossEur":"1021.37","amountUsdc":"1190","network":"eip155:8453","txHash":"0xb413f47d13ee2fe6c845b2ee141af81de858df4ec549a58b7970bb96645bc8d2","invoiceNumber":"F402-2026-000001","receiptId":"rcpt_x402-d33e1c591f8f6943a478e408b312fbfe","reviewStatus":"PROCESSED","ledgerIndex":0,"netEurExact":"858.295425285383","vatEurExact":"163.076130804223","grossEurExact":"1021.371556089606","invoiceCoverage":"per_payment"}
{"id":"x402-8ec504d73c9ac08abef5a8b83e528ae8","type":"settlement","createdAt":"2026-04-13T18:00:00Z","settledAt":"2026-02-15T10:00:00Z","supplyDate":"","country":"","category":"","regime":"","ratePercent":"","netEur":"","vatEur":"","grossEur":"10.12","amountUsdc":"12.00","network":"eip155:8453","txHash":"0x583c7dfb7b3055d99465544032a571e10a134b1b6f769422bbb71fd7fa167a5d","invoiceNumber":"","receiptId":"rcpt_x402-8ec504d73c9ac08abef5a8b83e528ae8","reviewStatus":"PENDING_MANUAL_REVIEW","ledgerIndex":2,"netEurExact":"","vatEurExact":"","grossEurExact":"10.116337885685","invoiceCoverage":"not_invoiced"}
`
)
