// Package fx converts settlement amounts to EUR, and VAT to a taxing
// state's national currency, with European Central Bank reference rates,
// recording where every rate came from.
//
// The only conversion source is the ECB euro foreign exchange reference rate
// (for the US dollar series EXR.D.USD.EUR.SP00.A, SourceECB; other
// currencies the same key with their code), quoted as the ECB publishes it:
// units per euro. Rates are kept as the exact strings published ("1.1711"),
// parsed into decimal.Decimal, never stored inverted and never interpolated.
// A USDC amount becomes USD at a recorded 1:1 peg and EUR by division by the
// USD rate, kept exact at 12 decimals and rounded once to cents.
//
//	live := fx.NewLiveTable(embedded)                  // kept current by a Refresher
//	r, err := live.Rate(ctx, "USD", settledAt, fx.LatestPublishedAt)
//	if errors.Is(err, fx.ErrNotYetPublished) { /* PENDING_MANUAL_REVIEW, fx_rate_unavailable */ }
//	conv := fx.ConvertUSDCExact(amount, r)             // "85.59" and "85.587127695995" for 100 USDC at 1.1684
//	net, vat := fx.SplitGross(conv.GrossEURExact, pct) // exact; round shown figures and sums once
//
// # Data
//
// Embedded returns the series compiled into the package: a byte-for-byte
// copy of data/ecb-eurusd.csv (1999-01-04 to 2026-04-13), the USD column of
// the ECB's own eurofxref-hist.zip
// (https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip; provenance
// in data/SOURCE.md), written by go generate together with embedded_gen.go,
// which records its source path, SHA-256 (EmbeddedSnapshot) and upstream
// provenance (EmbeddedProvenance). It holds USD only. Newer
// publications, and every other currency, come from an ECB file (LoadFile,
// ParseCSV, ParseXML: eurofxref-hist.csv, our two-column CSV,
// eurofxref-daily.xml, -hist-90d.xml, -hist.xml) or from the ECB feeds over
// HTTP (Fetch, Refresher). Merge combines tables and refuses any value that
// contradicts one already known: published values are never overwritten.
// LiveTable serves a table that an updater extends while lookups run.
//
// A Table knows which days it covers completely. A file covers the days from
// its first to its last publication; a merged table can have holes (a daily
// feed merged onto an old snapshot). Coverage reports them.
//
// # Refresher
//
// A Refresher keeps a LiveTable current (issue 14). Restore merges the ECB
// documents kept in a Store (the engine implements Store over its ledger
// database), so a restart works offline; Run then attempts, after each
// TARGET business day's publication at 16:00 Frankfurt time plus
// PublicationMargin, to fetch the daily feed, the 90-day feed when more than
// one publication is missing, or, once per process, the full history when an
// older hole remains (the 90-day feed too while the history fails); and the 90-day feed at once when the publication
// before the daily one lacks currencies it carries (a table of USD only, as
// the embedded series), since no later daily feed brings that day again. A failed fetch is retried with exponential backoff
// (RetryMin doubling to RetryMax) and equal jitter, and not sooner than a 429
// or 503 answer's Retry-After asked (StatusError.RetryAfter, at most a day);
// a publication not out yet
// is polled the same way; a publication that contradicts a known rate is
// refused (ConflictError), logged at error level, and not retried before the
// next publication. Each document that added rates is saved, then OnUpdate
// runs with the new table: the engine re-processes the records that were
// pending for a missing rate there. Status reports the newest reference date,
// its age, whether a publication is overdue, and the last error. Clock and
// Rand make it deterministic in tests.
//
// # Policies
//
// Three policies choose the publication, and the one used is recorded on
// the Rate (Art. 91(2), 366(2) and 369h(2) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112; the
// ECB's TARGET closing days, on which it publishes no rates):
//
//   - LatestPublishedAt, Art. 91(2) VAT Directive read strictly ("the latest
//     exchange rate published by the European Central Bank at the time the
//     tax becomes chargeable"): what had been published at that instant; a
//     reference date D counts from 16:00 Frankfurt time on D, the hour the
//     ECB gives ("usually updated at around 16:00 CET every working day").
//     A payment at 08:00 UTC takes the previous publication. The Rate
//     records PublishedFrom, the instant its publication counts from.
//     CET/CEST is computed from the EU summer-time rule, so no tzdata is
//     needed. The engine should make it its default (issue 16).
//   - ForDayOrPrevious, the "rate of the day": the publication for the UTC
//     date of the instant looked up, else the latest before it. The day of
//     the chargeable event is the supply's calendar day in the taxing
//     state, which need not be the payment's UTC date: RateOfTheDay gives
//     the instant to look that day up at (noon UTC on it). Kept as an
//     account option; the zero Policy means it, for compatibility.
//   - PeriodEndOrNext, Arts. 366(2) and 369h(2), for OSS/IOSS returns: the
//     publication for the last day of the period, else the next one
//     (PeriodEndRate, ConvertUSDCPeriodTotal).
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
// # National currencies
//
// Art. 230 requires the VAT of an invoice to be stated in the taxing Member
// State's currency too (BT-6, BT-111). NationalCurrencyFor names it for a
// taxing country and supply instant: CZK, DKK, HUF, PLN, RON, SEK, GBP, and
// BGN for supplies before 1 January 2026 (Bulgaria adopted the euro then:
// Council Decision (EU) 2025/1407, fixed rate 1.95583 by Council Regulation
// (EU) 2025/1409); none for the euro area. Its RateRule cites the state's
// law. Every Member State must accept the latest ECB rate (Art. 91(2), third
// subparagraph), so ConvertEURToNational converts at the ECB rate, with the
// publication the state's rule selects (Poland: the last day before the tax
// point, art. 31a ust. 2 ustawy o VAT). The United Kingdom's rules (HMRC VAT
// Notice 700 §16.3) do not list the ECB rate: ErrNationalRateRequired. A
// currency the table lacks is ErrNationalRateUnavailable. Both are review
// reasons for the engine, never a cue to use another rate.
//
// # Exact amounts
//
// EUR figures are kept exact until the one rounding to cents (issue 15):
// ConvertUSDCExact records the gross at ExactScale (12) decimals beside the
// cent figure, SplitGross splits a gross into net and VAT at that scale
// (VAT = gross − net, so nothing is lost), and every total adds exact figures
// and rounds once (Sum, RoundEUR). Twelve places bound the error of a sum of
// 10^9 records by 0.0005 EUR. The OSS return converts the period's USDC total
// at the period-end rate (ConvertUSDCPeriodTotal).
//
// # Rounding
//
// EUR amounts shown have two decimals, rounded half away from zero
// (RoundEUR, DivEUR; Reg. 1103/97 Art. 5,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:31997R1103),
// exactly once:
// ConvertUSDC divides the USD amount by the rate and rounds the exact
// quotient, with no intermediate precision that could round twice; exact
// figures (DivExact, SplitGross) are rounded the same way at ExactScale.
// National-currency figures round the exact product to two decimals.
// Rounding is national law; this is the customary rule, not a
// per-Member-State one. The divisions, roundings and their text are
// computed in 64-bit integers when the figures fit, with exactly the value,
// exponent and bytes of shopspring's DivRound, Round and StringFixed, which
// are used otherwise (fixed.go).
//
// # Errors
//
// Lookups fail with errors wrapping ErrNotYetPublished (the rate is not
// available yet: load newer rates and retry; never a reason to convert with an
// older rate), ErrNoRate (before 1999, a quote the table lacks, or a currency
// the ECB did not publish that day) or ErrPolicy. Parsers return *ParseError
// with the 1-based line; Merge returns *ConflictError (errors.Is ErrConflict);
// Fetch returns *StatusError for HTTP failures. ParseUSDC errors wrap
// ErrAmount (a digit finer than six decimals is named by its place; zeros
// after the sixth decimal are accepted); Conversion.Check and
// NationalConversion.Check errors wrap ErrInconsistent. NationalCurrencyFor
// fails with ErrNoNationalRule; ConvertEURToNational with
// ErrNationalRateRequired, ErrNationalRateUnavailable (also ErrNoRate) or
// ErrNotYetPublished. Date arguments wrap ErrDate; a Store blob that cannot
// be read wraps ErrStoreFormat.
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
// requestedDate is an RFC 3339 UTC instant for LatestPublishedAt, which
// also writes "publishedFrom" (16:00 Frankfurt time on rateDate, in UTC).
// snapshot is "<origin>:sha256:<hex>" with origin embedded, file or fetch:
// the hash of the exact bytes that supplied the rate. ConvertUSDCExact adds
// "grossEurExact" (12 decimals) and "exactScale":12; ConvertUSDC's object is
// unchanged. Conversion.Check recomputes a decoded object offline.
//
// A NationalConversion is {"country","currency","at","amountEur","rate"
// (a Rate object with quote = currency),"amountExact","amount","rounding",
// "scale":2,"rule":{"id","ecb","timing","nationalRate","law","note"}}.
//
// The Store blob (EncodeDocuments) is gzip-compressed JSON
// {"format":"fiscal402.fx.documents/1","documents":[{"url","fetchedAt",
// "sha256","body"}]}, body base64, in merge order.
//
// # Determinism
//
// Lookups depend only on the table and the instant passed in: no clock, no
// time zone database, no map iteration. Tables are immutable, so one table
// answers the same question the same way for its whole life, and a record
// names the snapshot that answered it. Restoring stored documents in their
// order reproduces every rate's snapshot. The Refresher's schedule depends
// only on its Clock, its Rand and the feeds' answers.
package fx
