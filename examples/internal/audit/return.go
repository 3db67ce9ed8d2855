package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// maxReturn bounds the return file: a quarter of a million records lists a
// million ledger indexes, some megabytes.
const maxReturn = 256 << 20

// runReturn recomputes an OSS return (package returns) from receipts:
// "audit return RETURN.json --receipts DIR".
func runReturn(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit return", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("receipts", "", "a directory of receipt files (*.json, as GET /v1/receipts/{id} serves them)")
	jwksPath := fs.String("jwks", "", "the receipt key set file (GET "+receipt.PathJWKS+"): checks the return's signature and every receipt")
	var lk logKeyFlags
	lk.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audit return RETURN.json --receipts DIR [--jwks FILE (--log-key KEY | --log-key-file FILE)]")
		fmt.Fprintln(stderr, "")
		fmt.Fprintln(stderr, "Recomputes every line of an OSS return (GET /v1/returns/oss) from the receipts of the ledger")
		fmt.Fprintln(stderr, "indexes it lists, offline, and prints \"return verified\" or the first line that does not add up.")
		fmt.Fprintln(stderr, "With --jwks and the log key it also verifies the return's signature, its checkpoint and every receipt.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 || *dir == "" {
		fs.Usage()
		return ExitUsage
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "audit return: %v\n", err)
		return inputExit(err)
	}
	raw, err := readBig(pos[0], maxReturn)
	if err != nil {
		return usageErr(unreadable(err))
	}
	if _, err := os.ReadDir(*dir); err != nil {
		return usageErr(unreadable(fmt.Errorf("--receipts: %w", err)))
	}
	var jwks []byte
	if *jwksPath != "" {
		if jwks, err = readFile(*jwksPath); err != nil {
			return usageErr(err)
		}
	}
	logKey, err := lk.value(nil, "")
	if err != nil {
		return usageErr(err)
	}
	if (jwks == nil) != (logKey == "") {
		return usageErr(errors.New("give both --jwks and the log key (--log-key or --log-key-file), or neither"))
	}
	if jwks != nil {
		if _, err := receipt.NewVerifier(jwks, logKey); err != nil {
			return usageErr(keysError(err, *jwksPath, lk))
		}
	}
	a := &returnAudit{jwks: jwks, logKey: logKey, out: stdout}
	fail := a.run(raw, *dir)
	if a.readErr != nil {
		return usageErr(a.readErr) // a receipt file that could not be read: no verdict
	}
	if fail != "" {
		fmt.Fprintf(stdout, "return NOT verified: %s\n", fail)
		return ExitFailed
	}
	a.summary()
	return ExitOK
}

func readBig(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

// returnAudit is one run of "audit return".
type returnAudit struct {
	jwks   []byte
	logKey string
	out    io.Writer
	// readErr is a receipt file of the directory that could not be read.
	readErr error

	ret       returns.Return
	kid       string
	receipts  map[int64]*heldReceipt
	rate      decimal.Decimal
	lineCount int
	recCount  int
}

// heldReceipt is a receipt file of the directory.
type heldReceipt struct {
	file     string
	id       string
	claims   receipt.Claims
	verified bool
	used     bool
}

// run checks everything and returns the first failure in words ("" when
// all holds).
func (a *returnAudit) run(raw []byte, dir string) string {
	var doc struct {
		Object string          `json:"object"`
		Return json.RawMessage `json:"return"`
		JWS    string          `json:"jws"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Return) == 0 {
		return "the file is not a signed OSS return (GET /v1/returns/oss): it needs members object, return and jws"
	}
	if a.jwks != nil {
		payload, kid, err := receipt.VerifyStatement(doc.JWS, a.jwks, returns.StatementType)
		if err != nil {
			return "signature: " + strings.TrimPrefix(err.Error(), "receipt: ")
		}
		var p, r bytes.Buffer
		if json.Compact(&p, payload) != nil || json.Compact(&r, doc.Return) != nil || !bytes.Equal(p.Bytes(), r.Bytes()) {
			return "signature: the readable return differs from the signed one (the JWS payload): it was changed after signing"
		}
		a.kid = kid
	}
	dec := json.NewDecoder(bytes.NewReader(doc.Return))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a.ret); err != nil {
		return "the return cannot be read: " + err.Error()
	}
	r := &a.ret
	if r.Version != returns.Version {
		return fmt.Sprintf("the return is of format %q; this command checks %q", r.Version, returns.Version)
	}
	if a.logKey != "" {
		v, err := note.NewVerifier(a.logKey)
		if err != nil {
			return "log key: " + err.Error()
		}
		cp, err := ledger.ParseCheckpoint([]byte(r.Log.Note), v)
		if err != nil {
			return "checkpoint: the return's log checkpoint is not a checkpoint signed by the log key: " + strings.TrimPrefix(err.Error(), "ledger: ")
		}
		// The readable origin, size and root are what the summary reports
		// as checked: they must be the signed note's (c2sp.org/tlog-checkpoint).
		if cp.Origin != r.Log.Origin || cp.Size != r.Log.Size || cp.Root.String() != r.Log.Root {
			return fmt.Sprintf("checkpoint: the return says it was computed at log %s, size %d, root %s, but its signed checkpoint is of log %s, size %d, root %s: the issuer signed a malformed return; report it to them",
				r.Log.Origin, r.Log.Size, r.Log.Root, cp.Origin, cp.Size, cp.Root)
		}
	}
	if r.FX.Rate != nil {
		rate, err := decimal.NewFromString(r.FX.Rate.Raw)
		if err != nil || !rate.IsPositive() {
			return fmt.Sprintf("fx: the period-end rate %q is not a positive decimal", r.FX.Rate.Raw)
		}
		if r.FX.Rate.Policy != fx.PeriodEndOrNext || r.FX.Rate.Requested != r.PeriodEnd {
			return fmt.Sprintf("fx: the rate must be the ECB publication for the last day of the period (%s) or the next one (policy %s), not %s/%s",
				r.PeriodEnd, fx.PeriodEndOrNext, r.FX.Rate.Requested, r.FX.Rate.Policy)
		}
		a.rate = rate
	}
	if msg := a.loadReceipts(dir); msg != "" {
		return msg
	}

	n := 0
	line := func(what string, l returns.Line, est string) string {
		n++
		a.lineCount++
		return a.checkLine(fmt.Sprintf("line %d (%s: %s %s %% %s, %d records)", n, what, l.MemberState, l.RatePercent, l.SupplyType, l.Records), l, est)
	}
	for _, l := range r.Lines {
		if msg := line("OSS", l, ""); msg != "" {
			return msg
		}
	}
	for _, s := range r.FixedEstablishments {
		for _, l := range s.Lines {
			if msg := line("fixed establishment "+s.Establishment, l, s.Establishment); msg != "" {
				return msg
			}
		}
	}
	for i, c := range r.Corrections {
		where := fmt.Sprintf("correction %d (of %s: %s %s %% %s, %d entries)", i+1, c.OriginalPeriod, c.MemberState, c.RatePercent, c.SupplyType, c.Records)
		if msg := a.checkCorrection(where, c); msg != "" {
			return msg
		}
	}
	for i, s := range r.NotInOSS {
		where := fmt.Sprintf("not-in-OSS summary %d (%s %s %s %%)", i+1, s.Regime, s.Country, s.RatePercent)
		if msg := a.checkSummary(where, s); msg != "" {
			return msg
		}
	}
	if msg := a.checkPending(); msg != "" {
		return msg
	}
	if msg := a.checkTotals(); msg != "" {
		return msg
	}
	return a.checkComplete()
}

// loadReceipts reads every *.json file of dir as a receipt, keyed by its
// log index.
func (a *returnAudit) loadReceipts(dir string) string {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Sprintf("receipts: no *.json files in %s", dir)
	}
	sort.Strings(files)
	var v *receipt.Verifier
	if a.jwks != nil {
		if v, err = receipt.NewVerifier(a.jwks, a.logKey); err != nil {
			return "keys: " + err.Error()
		}
	}
	a.receipts = map[int64]*heldReceipt{}
	for _, f := range files {
		raw, err := readFile(f)
		if err != nil {
			a.readErr = fmt.Errorf("--receipts: %w", err)
			return "receipts: " + err.Error()
		}
		var d receipt.Receipt
		if err := json.Unmarshal(raw, &d); err != nil || d.TlogProof == "" {
			continue // not a receipt (the key set, the return itself)
		}
		index, _, _, err := receipt.ParseTlogProof(d.TlogProof)
		if err != nil {
			return fmt.Sprintf("receipts: %s: %v", filepath.Base(f), err)
		}
		h := &heldReceipt{file: filepath.Base(f), id: d.ID}
		if v != nil {
			c, err := v.Verify(raw)
			if err != nil {
				// Kept: the failure is reported on the line that sums it.
				h.claims.ReceiptID = "!" + strings.TrimPrefix(err.Error(), "receipt: verify "+d.ID+": ")
			} else {
				h.claims, h.verified = *c, true
			}
		} else if err := json.Unmarshal(d.Claims, &h.claims); err != nil {
			return fmt.Sprintf("receipts: %s: claims: %v", filepath.Base(f), err)
		}
		if prev, dup := a.receipts[index]; dup {
			return fmt.Sprintf("receipts: %s and %s both claim ledger index %d", prev.file, h.file, index)
		}
		a.receipts[index] = h
	}
	return ""
}

// take returns the receipt of index, or a failure in words.
func (a *returnAudit) take(where string, index int64) (*heldReceipt, string) {
	if size := a.ret.Log.Size; index < 0 || index >= size {
		// The return was computed at its checkpoint: an entry beyond the
		// tree it names is none the return could have summed.
		return nil, fmt.Sprintf("%s: ledger index %d is not in the log of %d entries the return says it was computed at (its checkpoint)", where, index, size)
	}
	h := a.receipts[index]
	if h == nil {
		return nil, fmt.Sprintf("%s: ledger index %d: no receipt in the directory has it (fetch it: GET /v1/receipts/{id})", where, index)
	}
	if strings.HasPrefix(h.claims.ReceiptID, "!") {
		return nil, fmt.Sprintf("%s: ledger index %d: receipt %s (%s) does not verify: %s", where, index, h.id, h.file, strings.TrimPrefix(h.claims.ReceiptID, "!"))
	}
	if h.used {
		return nil, fmt.Sprintf("%s: ledger index %d is summed twice in the return", where, index)
	}
	h.used = true
	a.recCount++
	return h, ""
}

// sums adds a group of receipts.
type sums struct{ usdc, net, vat decimal.Decimal }

func (s *sums) add(c *receipt.Claims) error {
	u, err := decimal.NewFromString(c.Settlement.AmountUSDC)
	if err != nil {
		return fmt.Errorf("amount_usdc %q", c.Settlement.AmountUSDC)
	}
	if isRefund(c) {
		u = u.Neg() // a refund pays back: its fx figures are negative already
	}
	s.usdc = s.usdc.Add(u)
	if c.FX == nil {
		return nil
	}
	net, vat := c.FX.NetEURExact, c.FX.VATEURExact
	if net == "" {
		net, vat = c.FX.NetEUR, c.FX.VATEUR
	}
	if net == "" {
		net = c.FX.GrossEUR
	}
	n, err := decimal.NewFromString(net)
	if err != nil {
		return fmt.Errorf("net_eur %q", net)
	}
	s.net = s.net.Add(n)
	if vat != "" {
		v, err := decimal.NewFromString(vat)
		if err != nil {
			return fmt.Errorf("vat_eur %q", vat)
		}
		s.vat = s.vat.Add(v)
	}
	return nil
}

// compare checks each figure the return states against the recomputed one.
// The figures at the period-end rate are stated exactly when there is a
// rate (rate not zero; returns.OSS leaves them out while the ECB has not
// published it, and in the summaries outside OSS): without one, a stated
// figure is one nothing recomputes, and fails.
func compare(where string, a returns.Amounts, n int, s sums, rate, ratePercent decimal.Decimal) string {
	want := []struct{ name, got, stated string }{
		{"the number of records", fmt.Sprint(n), fmt.Sprint(a.Records)},
		{"the USDC total", s.usdc.StringFixed(6), a.AmountUSDC},
		{"the invoices' taxable amount (EUR)", fx.RoundEUR(s.net).StringFixed(2), a.InvoiceTaxableAmountEUR},
		{"the invoices' VAT (EUR)", fx.RoundEUR(s.vat).StringFixed(2), a.InvoiceVATEUR},
	}
	var net, vat, diff string // "" without a period-end rate
	if !rate.IsZero() {
		n, v := returns.PeriodEndSplit(s.usdc, ratePercent, rate)
		net, vat, diff = n.StringFixed(2), v.StringFixed(2), v.Sub(fx.RoundEUR(s.vat)).StringFixed(2)
	}
	want = append(want,
		struct{ name, got, stated string }{"the taxable amount at the period-end rate (EUR)", net, a.TaxableAmountEUR},
		struct{ name, got, stated string }{"the VAT at the period-end rate (EUR)", vat, a.VATEUR},
		struct{ name, got, stated string }{"the difference of VAT (EUR)", diff, a.DifferenceVATEUR})
	for _, w := range want {
		switch {
		case w.got == w.stated:
		case w.got == "":
			return fmt.Sprintf("%s: %s: the return states %q, but there is no period-end rate to compute it at", where, w.name, w.stated)
		case w.stated == "":
			return fmt.Sprintf("%s: %s: the receipts give %s at the period-end rate, the return states none", where, w.name, w.got)
		default:
			return fmt.Sprintf("%s: %s: the receipts give %s, the return says %s", where, w.name, w.got, w.stated)
		}
	}
	return ""
}

// inPeriod reports whether a settlement instant can be in the period: its
// local day in some EU time zone (UTC-1 to UTC+3) lies in the quarter.
func (a *returnAudit) inPeriod(ts string, strict bool) bool {
	return inDays(ts, a.ret.PeriodStart, a.ret.PeriodEnd, strict)
}

// inDays is inPeriod for the days [first, last].
func inDays(ts, first, last string, strict bool) bool {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return false
	}
	start, _ := time.Parse(time.DateOnly, first)
	end, _ := time.Parse(time.DateOnly, last)
	end = end.AddDate(0, 0, 1)
	if strict { // surely in the quarter, whatever the zone
		return !t.Before(start.Add(time.Hour)) && t.Before(end.Add(-3*time.Hour))
	}
	return !t.Before(start.Add(-3*time.Hour)) && t.Before(end.Add(time.Hour))
}

func (a *returnAudit) checkLine(where string, l returns.Line, est string) string {
	rate, err := decimal.NewFromString(l.RatePercent)
	if err != nil {
		return fmt.Sprintf("%s: rate %q is not a decimal", where, l.RatePercent)
	}
	var s sums
	for _, idx := range l.LedgerIndexes {
		h, msg := a.take(where, idx)
		if msg != "" {
			return msg
		}
		c := &h.claims
		cl := c.Classification
		switch {
		case c.ReviewStatus != "PROCESSED" || cl == nil:
			return fmt.Sprintf("%s: receipt %s (index %d) is %s, not a determined supply", where, h.id, idx, c.ReviewStatus)
		case cl.Regime != vat.RegimeOSSB2C || cl.OSSScheme != a.ret.Scheme:
			return fmt.Sprintf("%s: receipt %s (index %d) is %s/%s, not an OSS supply of the %s scheme", where, h.id, idx, cl.Regime, cl.OSSScheme, a.ret.Scheme)
		case cl.TaxingCountry != l.MemberState:
			return fmt.Sprintf("%s: receipt %s (index %d) is taxed in %s, not %s", where, h.id, idx, cl.TaxingCountry, l.MemberState)
		case !sameDecimal(cl.RatePercent, l.RatePercent):
			return fmt.Sprintf("%s: receipt %s (index %d) has rate %s %%, not %s %%", where, h.id, idx, cl.RatePercent, l.RatePercent)
		case !a.inPeriod(c.Settlement.Timestamp, false):
			return fmt.Sprintf("%s: receipt %s (index %d) was settled at %s, outside %s", where, h.id, idx, c.Settlement.Timestamp, a.ret.Period)
		case est != "" && c.Seller.Country != est:
			return fmt.Sprintf("%s: receipt %s (index %d) was supplied from %s, not the establishment in %s", where, h.id, idx, c.Seller.Country, est)
		}
		if isRefund(c) {
			if msg := a.supplyCheck(where, h, idx, a.ret.PeriodStart, a.ret.PeriodEnd); msg != "" {
				return msg
			}
		}
		if err := s.add(c); err != nil {
			return fmt.Sprintf("%s: receipt %s (index %d): %v is not a decimal", where, h.id, idx, err)
		}
	}
	return compare(where, l.Amounts, len(l.LedgerIndexes), s, a.rate, rate)
}

// checkCorrection recomputes a correction from its refunds' receipts, at
// the original period's end rate the correction states.
func (a *returnAudit) checkCorrection(where string, c returns.Correction) string {
	op, err := returns.ParsePeriod(c.OriginalPeriod)
	if err != nil || op.String() >= a.ret.Period {
		return fmt.Sprintf("%s: %q is not a period before %s", where, c.OriginalPeriod, a.ret.Period)
	}
	rate := decimal.Zero
	if c.USDPerEUR != nil {
		if c.USDPerEUR.Policy != fx.PeriodEndOrNext || c.USDPerEUR.Requested != op.LastDay() {
			return fmt.Sprintf("%s: the rate must be the ECB publication for %s or the next one, not %s/%s", where, op.LastDay(), c.USDPerEUR.Requested, c.USDPerEUR.Policy)
		}
		if rate, err = decimal.NewFromString(c.USDPerEUR.Raw); err != nil || !rate.IsPositive() {
			return fmt.Sprintf("%s: rate %q", where, c.USDPerEUR.Raw)
		}
	}
	pct, err := decimal.NewFromString(c.RatePercent)
	if err != nil {
		return fmt.Sprintf("%s: rate %q is not a decimal", where, c.RatePercent)
	}
	var s sums
	for _, idx := range c.LedgerIndexes {
		h, msg := a.take(where, idx)
		if msg != "" {
			return msg
		}
		cl := h.claims.Classification
		switch {
		case !isRefund(&h.claims) || cl == nil:
			return fmt.Sprintf("%s: receipt %s (index %d) is no refund", where, h.id, idx)
		case cl.Regime != vat.RegimeOSSB2C || cl.OSSScheme != a.ret.Scheme || cl.TaxingCountry != c.MemberState || !sameDecimal(cl.RatePercent, c.RatePercent):
			return fmt.Sprintf("%s: refund %s (index %d) corrects a %s %s supply at %s %%, not %s at %s %%", where, h.id, idx, cl.Regime, cl.TaxingCountry, cl.RatePercent, c.MemberState, c.RatePercent)
		case !a.inPeriod(h.claims.Settlement.Timestamp, false):
			return fmt.Sprintf("%s: refund %s (index %d) was made at %s, outside %s", where, h.id, idx, h.claims.Settlement.Timestamp, a.ret.Period)
		}
		if msg := a.supplyCheck(where, h, idx, op.FirstDay(), op.LastDay()); msg != "" {
			return msg
		}
		if err := s.add(&h.claims); err != nil {
			return fmt.Sprintf("%s: receipt %s (index %d): %v is not a decimal", where, h.id, idx, err)
		}
	}
	return compare(where, c.Amounts, len(c.LedgerIndexes), s, rate, pct)
}

func (a *returnAudit) checkSummary(where string, sm returns.Summary) string {
	var s sums
	for _, idx := range sm.LedgerIndexes {
		h, msg := a.take(where, idx)
		if msg != "" {
			return msg
		}
		c := &h.claims
		cl := c.Classification
		switch {
		case cl == nil || cl.Regime != sm.Regime:
			return fmt.Sprintf("%s: receipt %s (index %d) is not of regime %s", where, h.id, idx, sm.Regime)
		case cl.TaxingCountry != "" && cl.TaxingCountry != sm.Country:
			// (Without a taxing country, the summary's is the place of
			// supply, which no receipt states.)
			return fmt.Sprintf("%s: receipt %s (index %d) is taxed in %s, not %s", where, h.id, idx, cl.TaxingCountry, sm.Country)
		case (cl.RatePercent == "") != (sm.RatePercent == "") || cl.RatePercent != "" && !sameDecimal(cl.RatePercent, sm.RatePercent):
			return fmt.Sprintf("%s: receipt %s (index %d) has rate %s, not %s", where, h.id, idx, rateWords(cl.RatePercent), rateWords(sm.RatePercent))
		}
		if err := s.add(c); err != nil {
			return fmt.Sprintf("%s: receipt %s (index %d): %v is not a decimal", where, h.id, idx, err)
		}
	}
	return compare(where, sm.Amounts, len(sm.LedgerIndexes), s, decimal.Zero, decimal.Zero)
}

func (a *returnAudit) checkPending() string {
	p := a.ret.Excluded.Pending
	var usdc decimal.Decimal
	for _, idx := range p.LedgerIndexes {
		h, msg := a.take("excluded pending records", idx)
		if msg != "" {
			return msg
		}
		if h.claims.ReviewStatus != "PENDING_MANUAL_REVIEW" {
			return fmt.Sprintf("excluded pending records: receipt %s (index %d) is %s, so it belongs in a line", h.id, idx, h.claims.ReviewStatus)
		}
		u, err := decimal.NewFromString(h.claims.Settlement.AmountUSDC)
		if err != nil {
			return fmt.Sprintf("excluded pending records: receipt %s: amount_usdc %q", h.id, h.claims.Settlement.AmountUSDC)
		}
		usdc = usdc.Add(u)
	}
	if len(p.LedgerIndexes) != p.Records || usdc.StringFixed(6) != p.AmountUSDC {
		return fmt.Sprintf("excluded pending records: the receipts give %d records and %s USDC, the return says %d and %s",
			len(p.LedgerIndexes), usdc.StringFixed(6), p.Records, p.AmountUSDC)
	}
	return ""
}

// checkTotals adds the lines per member state and overall, as the return
// shows them. The figures at the period-end rate of a state (and of the
// total) are stated when the return has the rate and every line and
// correction of the state (of the return, or none at all) states its own;
// the part of a state's VAT from corrections, when one of them does
// (returns.OSS).
func (a *returnAudit) checkTotals() string {
	r := &a.ret
	type stateSum struct {
		vat, corr, inv    decimal.Decimal
		periodOK, hasCorr bool
	}
	per := map[string]*stateSum{}
	var usdc, vatT, netT, invVAT, invNet decimal.Decimal
	n, periodOK := 0, true
	add := func(l returns.Line, correction bool) {
		st := per[l.MemberState]
		if st == nil {
			st = &stateSum{periodOK: true}
			per[l.MemberState] = st
		}
		n += l.Records
		usdc = usdc.Add(decimal.RequireFromString(l.AmountUSDC))
		st.inv = st.inv.Add(decimal.RequireFromString(l.InvoiceVATEUR))
		invVAT = invVAT.Add(decimal.RequireFromString(l.InvoiceVATEUR))
		invNet = invNet.Add(decimal.RequireFromString(l.InvoiceTaxableAmountEUR))
		if l.VATEUR == "" {
			st.periodOK, periodOK = false, false
			return
		}
		v := decimal.RequireFromString(l.VATEUR)
		st.vat = st.vat.Add(v)
		vatT = vatT.Add(v)
		netT = netT.Add(decimal.RequireFromString(l.TaxableAmountEUR))
		if correction {
			st.corr, st.hasCorr = st.corr.Add(v), true
		}
	}
	for _, l := range r.Lines {
		add(l, false)
	}
	for _, s := range r.FixedEstablishments {
		for _, l := range s.Lines {
			add(l, false)
		}
	}
	for _, c := range r.Corrections {
		add(returns.Line{MemberState: c.MemberState, Amounts: c.Amounts}, true)
	}
	if len(r.MemberStates) != len(per) {
		return fmt.Sprintf("member state totals: the lines name %d member states, the totals %d", len(per), len(r.MemberStates))
	}
	// Each state of the lines has a total: with as many totals as states,
	// each then has exactly one (a state listed twice would otherwise
	// stand for one left out).
	listed := map[string]int{}
	for _, st := range r.MemberStates {
		listed[st.MemberState]++
	}
	states := make([]string, 0, len(per))
	for ms := range per {
		states = append(states, ms)
	}
	sort.Strings(states)
	for _, ms := range states {
		if listed[ms] == 0 {
			return fmt.Sprintf("member state total %s: the lines are of %s, but the return states no total for it", ms, ms)
		}
	}
	rated := r.FX.Rate != nil
	for _, st := range r.MemberStates {
		sum := per[st.MemberState]
		var vat, corr string
		if rated && sum.periodOK {
			vat = sum.vat.StringFixed(2)
			if sum.hasCorr {
				corr = sum.corr.StringFixed(2)
			}
		}
		if st.InvoiceVATEUR != sum.inv.StringFixed(2) || st.VATEUR != vat || st.CorrectionsVATEUR != corr {
			return fmt.Sprintf("member state total %s: the lines add up to VAT %s, of which corrections %s (invoices %s) EUR, the return says %s, of which %s (invoices %s)",
				st.MemberState, orNone(vat), orNone(corr), sum.inv.StringFixed(2), orNone(st.VATEUR), orNone(st.CorrectionsVATEUR), st.InvoiceVATEUR)
		}
	}
	var net, vat, diff string
	if rated && (periodOK || n == 0) {
		net, vat, diff = netT.StringFixed(2), vatT.StringFixed(2), vatT.Sub(invVAT).StringFixed(2)
	}
	t := r.Total
	if t.Records != n || t.AmountUSDC != usdc.StringFixed(6) || t.InvoiceVATEUR != invVAT.StringFixed(2) || t.InvoiceTaxableAmountEUR != invNet.StringFixed(2) ||
		t.VATEUR != vat || t.TaxableAmountEUR != net || t.DifferenceVATEUR != diff {
		return fmt.Sprintf("total: the lines add up to %d records, %s USDC, taxable %s, VAT %s and a difference of VAT %s EUR (invoices %s and %s); the return says %d, %s, %s, %s and %s (%s and %s)",
			n, usdc.StringFixed(6), orNone(net), orNone(vat), orNone(diff), invNet.StringFixed(2), invVAT.StringFixed(2),
			t.Records, t.AmountUSDC, orNone(t.TaxableAmountEUR), orNone(t.VATEUR), orNone(t.DifferenceVATEUR), t.InvoiceTaxableAmountEUR, t.InvoiceVATEUR)
	}
	// The payable VAT: the positive member state balances, none offset
	// against another's negative one.
	var pay, payInv decimal.Decimal
	var refunded []string
	for _, st := range r.MemberStates {
		bal := decimal.RequireFromString(st.InvoiceVATEUR)
		if bal.IsPositive() {
			payInv = payInv.Add(bal)
		}
		if t.VATEUR != "" {
			bal = decimal.RequireFromString(st.VATEUR)
			if bal.IsPositive() {
				pay = pay.Add(bal)
			}
		}
		if bal.IsNegative() {
			refunded = append(refunded, st.MemberState)
		}
	}
	p := r.Payable
	if p.InvoiceVATEUR != payInv.StringFixed(2) || (t.VATEUR != "" && p.VATEUR != pay.StringFixed(2)) || strings.Join(p.RefundedBy, " ") != strings.Join(refunded, " ") {
		return fmt.Sprintf("payable: the member state balances give VAT %s (invoices %s), refunded by %v; the return says %s (%s), refunded by %v",
			pay.StringFixed(2), payInv.StringFixed(2), refunded, p.VATEUR, p.InvoiceVATEUR, p.RefundedBy)
	}
	return ""
}

// checkComplete: every receipt of the directory that is surely an OSS
// supply of the seller in the quarter, and not superseded by another
// receipt there, is summed by some line.
func (a *returnAudit) checkComplete() string {
	superseded := map[string]bool{}
	for _, h := range a.receipts {
		if s := h.claims.Supersedes; s != "" && !isRefund(&h.claims) {
			superseded[s] = true // a later revision of the same record
		}
	}
	idx := make([]int64, 0, len(a.receipts))
	for i := range a.receipts {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	for _, i := range idx {
		h := a.receipts[i]
		c := &h.claims
		if h.used || superseded[h.id] || strings.HasPrefix(c.ReceiptID, "!") || c.Classification == nil {
			continue
		}
		if c.Seller.VATNumber != a.ret.Seller.VATNumber || c.Classification.Regime != vat.RegimeOSSB2C || c.Classification.OSSScheme != a.ret.Scheme {
			continue
		}
		if a.inPeriod(c.Settlement.Timestamp, true) {
			return fmt.Sprintf("completeness: receipt %s (index %d, %s) is an OSS supply or refund to %s at %s, inside %s, but no line sums it",
				h.id, i, h.file, c.Classification.TaxingCountry, c.Settlement.Timestamp, a.ret.Period)
		}
	}
	return ""
}

// isRefund tells a refund's receipt: its EUR figures are negative (the
// correction of the supply, at the supply's rates). The exact gross
// (receipts 3.0.0 and 4.0.0) says so whatever the amount; the gross to the
// cent of a refund of less than half a cent (part of a micropayment) is
// "0.00", with no sign, and is read only where no exact figure is stated
// (receipts 1.0.0 and 2.0.0).
func isRefund(c *receipt.Claims) bool {
	return c.FX != nil && strings.HasPrefix(cmp.Or(c.FX.GrossEURExact, c.FX.GrossEUR), "-")
}

// original finds the receipt a refund corrects, among the directory's.
func (a *returnAudit) original(c *receipt.Claims) *heldReceipt {
	for _, h := range a.receipts {
		if h.id == c.Supersedes {
			return h
		}
	}
	return nil
}

// supplyCheck checks a refund against the supply it corrects: the
// directory must hold that supply's receipt, and its settlement must fall
// in period (loosely: any EU zone).
func (a *returnAudit) supplyCheck(where string, h *heldReceipt, idx int64, start, end string) string {
	o := a.original(&h.claims)
	if o == nil {
		return fmt.Sprintf("%s: refund %s (index %d) corrects receipt %s, which is not in the directory: add the receipt of the supply it refunds", where, h.id, idx, h.claims.Supersedes)
	}
	if !inDays(o.claims.Settlement.Timestamp, start, end, false) {
		return fmt.Sprintf("%s: refund %s (index %d) corrects a supply settled at %s, outside %s to %s", where, h.id, idx, o.claims.Settlement.Timestamp, start, end)
	}
	return ""
}

// rateWords is a rate as a failure names it: "19 %", or "none".
func rateWords(r string) string {
	if r == "" {
		return "none"
	}
	return r + " %"
}

func sameDecimal(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

func (a *returnAudit) summary() {
	r := &a.ret
	fmt.Fprintf(a.out, "return verified: OSS return %s (%s, %s scheme) of %s, identification %s in %s\n",
		r.Period, r.Status, r.Scheme, r.Seller.LegalName, orNone(r.ID.Number), r.ID.MemberState)
	fmt.Fprintf(a.out, "  %s and %s recomputed from %d receipts (every ledger index the return lists)\n",
		entriesOf(a.lineCount, "line", "lines"), entriesOf(len(r.Corrections), "correction", "corrections"), a.recCount)
	for _, c := range r.Corrections {
		fmt.Fprintf(a.out, "    correction of %s: %s %s %%, VAT EUR %s at %s (%s), invoices %s\n", c.OriginalPeriod, country(c.MemberState), c.RatePercent,
			c.VATEUR, rateOf(c.USDPerEUR), dateOf(c.USDPerEUR), c.InvoiceVATEUR)
	}
	if r.FX.Rate != nil {
		fmt.Fprintf(a.out, "  period-end rate: %s USD per EUR, ECB publication of %s (asked for %s)\n", r.FX.Rate.Raw, r.FX.Rate.RateDate, r.FX.Rate.Requested)
		fmt.Fprintf(a.out, "  VAT due: EUR %s at the period-end rate; EUR %s on the invoices\n", r.Payable.VATEUR, r.Payable.InvoiceVATEUR)
	} else {
		fmt.Fprintf(a.out, "  no period-end rate yet: VAT on the invoices EUR %s\n", r.Payable.InvoiceVATEUR)
	}
	if len(r.Payable.RefundedBy) > 0 {
		fmt.Fprintf(a.out, "  negative balances, not offset, refunded by the member states of consumption: %s\n", strings.Join(r.Payable.RefundedBy, ", "))
	}
	for _, st := range r.MemberStates {
		vatDue := st.VATEUR
		if vatDue == "" {
			vatDue = "-" // no period-end rate yet
		}
		fmt.Fprintf(a.out, "    %-20s VAT EUR %10s (invoices %s)\n", country(st.MemberState), vatDue, st.InvoiceVATEUR)
	}
	fmt.Fprintf(a.out, "  not in OSS: %d summaries; excluded pending review: %s\n", len(r.NotInOSS), entriesOf(r.Excluded.Pending.Records, "record", "records"))
	if a.kid != "" {
		fmt.Fprintf(a.out, "  signed by receipt key %s; receipts verified with the key set and the log key\n", a.kid)
		fmt.Fprintf(a.out, "  computed at log checkpoint %s, size %d, root %s (signature checked)\n", r.Log.Origin, r.Log.Size, r.Log.Root)
	} else {
		fmt.Fprintln(a.out, "  signature and receipts NOT verified (no --jwks and log key): the figures were recomputed from the receipts' readable claims")
	}
}

func rateOf(r *fx.Rate) string {
	if r == nil {
		return "(no rate yet)"
	}
	return r.Raw
}

func dateOf(r *fx.Rate) string {
	if r == nil {
		return "-"
	}
	return r.RateDate
}

func orNone(s string) string {
	if s == "" {
		return "(none stated)"
	}
	return s
}

func entriesOf(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(int64(n), one, many))
}
