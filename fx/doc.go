// Package fx converts settlement amounts to EUR with European Central Bank
// reference rates, recording where every rate came from.
//
// The only conversion source is the ECB euro foreign exchange reference rate
// for the US dollar (series EXR.D.USD.EUR.SP00.A, SourceECB), quoted as the
// ECB publishes it: US dollars per euro. Rates are kept as the exact strings
// published ("1.1711"), parsed into decimal.Decimal, never stored inverted and
// never interpolated. A USDC amount becomes USD at a recorded 1:1 peg and EUR
// by division by the USD rate, rounded once to cents.
//
//	t, _ := fx.Embedded()
//	r, err := t.Lookup("USD", settledAt, fx.ForDayOrPrevious)
//	if errors.Is(err, fx.ErrNotYetPublished) { /* PENDING_MANUAL_REVIEW, fx_rate_unavailable */ }
//	conv := fx.ConvertUSDC(amount, r) // conv.GrossEURString == "85.59" for 100 USDC at 1.1684
//
// # Data
//
// Embedded returns the series compiled into the package: a byte-for-byte
// copy of shared/data/ecb-eurusd.csv (1999-01-04 to 2026-04-13), written by
// go generate together with embedded_gen.go, which records its source path,
// SHA-256 (EmbeddedSnapshot) and upstream provenance (EmbeddedProvenance;
// research ledger-receipt-fx-webhooks.md §1.3). Newer publications come from
// an ECB file (LoadFile, ParseCSV, ParseXML: eurofxref-hist.csv, our
// two-column CSV, eurofxref-daily.xml, -hist-90d.xml, -hist.xml) or from the
// ECB feeds over HTTP (Fetch). Merge combines tables and refuses any value
// that contradicts one already known: published values are never
// overwritten. LiveTable serves a table that an updater extends while
// lookups run.
//
// A Table knows which days it covers completely. A file covers the days from
// its first to its last publication; a merged table can have holes (a daily
// feed merged onto an old snapshot). Coverage reports them.
//
// # Policies
//
// Three policies choose the publication, and the one used is recorded on
// the Rate (research §1.4, §1.5):
//
//   - ForDayOrPrevious (default), Art. 91(2) VAT Directive: the publication
//     for the UTC date of the chargeable event, else the latest before it.
//   - LatestPublishedAt: what had been published at that instant; a
//     reference date D counts from 16:00 Frankfurt time on D. CET/CEST is
//     computed from the EU summer-time rule, so no tzdata is needed.
//   - PeriodEndOrNext, Arts. 366(2) and 369h(2), for OSS/IOSS returns: the
//     publication for the last day of the period, else the next one.
//
// No rate is invented past what the table knows. Falling back from a date to
// an earlier publication, or forward to a later one, is allowed only across
// days that the table covers or that are TARGET closing days (weekends,
// 1 January, Good Friday, Easter Monday, 1 May, 25 and 26 December; Easter by
// the Gregorian computus). So a Saturday after the last known Friday gets
// Friday's rate, but a Tuesday after the last known Monday is
// ErrNotYetPublished. The calendar matches every gap in the ECB data since
// 2002 (tested).
//
// # Rounding
//
// EUR amounts have two decimals, rounded half away from zero (RoundEUR,
// DivEUR; Reg. 1103/97 Art. 5, research §1.4), exactly once: ConvertUSDC
// divides the USD amount by the rate and rounds the exact quotient, with no
// intermediate precision that could round twice. The engine uses the same two
// functions for net and VAT. Rounding is national law; this is the customary
// rule, not a per-Member-State one.
//
// # Errors
//
// Lookups fail with errors wrapping ErrNotYetPublished (the rate is not
// available yet: load newer rates and retry; never a reason to convert with an
// older rate), ErrNoRate (before 1999, a quote the table lacks, or a currency
// the ECB did not publish that day) or ErrPolicy. Parsers return *ParseError
// with the 1-based line; Merge returns *ConflictError (errors.Is ErrConflict);
// Fetch returns *StatusError for HTTP failures. ParseUSDC errors wrap
// ErrAmount; Conversion.Check errors wrap ErrInconsistent.
//
// # Wire format
//
// Rate and Conversion are written into the fiscal record as its "fx" object;
// member names are stable and amounts are decimal strings:
//
//	{"pair":"USDC/EUR","amountUsdc":"100",
//	 "usdcUsd":{"rate":"1","source":"peg","note":"1 USDC = 1 USD assumed (issuer redemption peg)"},
//	 "usdPerEur":{"base":"EUR","quote":"USD","raw":"1.1684","rateDate":"2026-04-13",
//	   "requestedDate":"2026-04-13","policy":"for-day-or-previous",
//	   "source":"ECB:EXR.D.USD.EUR.SP00.A","snapshot":"embedded:sha256:b159cb81..."},
//	 "grossEur":"85.59","rounding":"half-away-from-zero","scale":2}
//
// requestedDate is an RFC 3339 UTC instant for LatestPublishedAt. snapshot
// is "<origin>:sha256:<hex>" with origin embedded, file or fetch: the hash
// of the exact bytes that supplied the rate. Conversion.Check recomputes a
// decoded object offline.
//
// # Determinism
//
// Lookups depend only on the table and the instant passed in: no clock, no
// time zone database, no map iteration. Tables are immutable, so one table
// answers the same question the same way for its whole life, and a record
// names the snapshot that answered it.
package fx
