package fx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// SourceECB names the series of every rate this package returns for USD: the
// ECB euro foreign exchange reference rate, daily, US dollar per euro, in the
// SDMX key of the ECB Data Portal, EXR.D.USD.EUR.SP00.A
// (https://data.ecb.europa.eu/data/datasets/EXR/EXR.D.USD.EUR.SP00.A). Other quote currencies use the same key
// with their ISO 4217 code in place of USD.
const SourceECB = "ECB:EXR.D.USD.EUR.SP00.A"

// sourceFor is the Source of a rate for quote, without allocating for USD.
func sourceFor(quote string) string {
	if quote == "USD" {
		return SourceECB
	}
	return "ECB:EXR.D." + quote + ".EUR.SP00.A"
}

// RateOfTheDay is the instant to look the rate of a supply up at under
// policy p when the supply's calendar day in the taxing state is supplyDate
// (YYYY-MM-DD, the day the engine dates the supply by: vat's
// Determination.SupplyDate in its TimeZone). For ForDayOrPrevious (and the
// zero Policy), the "rate of the day" of Art. 91(2) Directive 2006/112/EC
// (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)
// is that day's, which need not be at's UTC date (23:30 UTC is the next day
// in Helsinki): it answers noon UTC on supplyDate, and other true, when the
// two dates differ. Otherwise (LatestPublishedAt reads the instant itself;
// supplyDate empty or malformed; the same date) it answers at and false.
func RateOfTheDay(p Policy, at time.Time, supplyDate string) (time.Time, bool) {
	if p != "" && p != ForDayOrPrevious {
		return at, false
	}
	d, err := time.Parse(time.DateOnly, supplyDate)
	if err != nil || utcDay(d) == utcDay(at) {
		return at, false
	}
	return dayNoonUTC(utcDay(d)), true
}

// Asked names what a request at under policy p asks for, as a reason
// that waits for it says it: the day (YYYY-MM-DD) whose publication
// ForDayOrPrevious (and the zero Policy) and PeriodEndOrNext look up, the
// UTC date of at (RateOfTheDay gives the instant of a supply's local day);
// for LatestPublishedAt the instant itself (RFC 3339), whose latest
// publication it reads (Art. 91(2) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
func (p Policy) Asked(at time.Time) string {
	if p == LatestPublishedAt {
		return at.UTC().Format(time.RFC3339)
	}
	return utcDay(at).String()
}

// Policy selects which ECB publication answers a request. The policy used is
// recorded on every Rate.
type Policy string

const (
	// ForDayOrPrevious answers with the publication for the UTC calendar date
	// of the instant, or, if there is none that day, the latest one before it.
	// It is the "rate of the day" reading of Art. 91(2), third subparagraph,
	// VAT Directive 2006/112/EC
	// (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112):
	// the ECB rate for the day on which the tax becomes chargeable, or, if
	// there is no publication on that day, the previous day of publication.
	// A payment at 08:00 UTC
	// takes that day's rate, published only in the afternoon. The zero Policy
	// means ForDayOrPrevious, for compatibility; the engine should default to
	// LatestPublishedAt and offer this one as an account option (issue 16).
	ForDayOrPrevious Policy = "for-day-or-previous"

	// LatestPublishedAt answers with what had been published at the instant
	// itself: a reference date D counts from 16:00 Frankfurt time on D (CET
	// in winter, CEST in summer). The ECB says its reference rates "are
	// usually updated at around 16:00 CET every working day, except on TARGET
	// closing days" (ECB, Euro foreign exchange reference rates page,
	// https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html;
	// since 1 July 2016, Bank of Greece notice on the ECB reference rates).
	// A payment at 08:00 UTC therefore takes the previous publication, one at
	// 17:00 Frankfurt time the day's. It is the strict reading of Art. 91(2)
	// ("the latest exchange rate published by the European Central Bank at
	// the time the tax becomes chargeable"), and the policy issue 16 makes
	// the engine's default. Its Rate records PublishedFrom.
	LatestPublishedAt Policy = "latest-published-at"

	// PeriodEndOrNext answers with the publication for the date itself, or, if
	// there is none that day, the next one. It is the rule for OSS and IOSS
	// returns: Art. 366(2) and Art. 369h(2) VAT Directive ("the exchange rates
	// published by the European Central Bank for that day, or, if there is no
	// publication on that day, on the next day of publication";
	// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
	// Ask it with the last day of the tax period.
	PeriodEndOrNext Policy = "period-end-or-next"
)

// Valid reports whether p is one of the three policies (the zero Policy is
// valid and means ForDayOrPrevious).
func (p Policy) Valid() bool {
	switch p {
	case "", ForDayOrPrevious, LatestPublishedAt, PeriodEndOrNext:
		return true
	}
	return false
}

// RecordPolicy checks p as the policy that dates a record's rate (an
// engine's or an account's): LatestPublishedAt or ForDayOrPrevious, and ""
// for LatestPublishedAt. PeriodEndOrNext dates a return, not a record.
func RecordPolicy(p Policy) (Policy, error) {
	switch p {
	case "":
		return LatestPublishedAt, nil
	case LatestPublishedAt, ForDayOrPrevious:
		return p, nil
	}
	return "", fmt.Errorf("%q: want %q or %q", p, LatestPublishedAt, ForDayOrPrevious)
}

// PolicyUsed is the Art. 91(2) policy that chose r (a record's
// fx.usdPerEur): LatestPublishedAt, the engine's default, when r is nil or
// names none. The VAT stated in a national currency is converted under the
// same policy as the EUR amount (Art. 230 Directive 2006/112/EC, "using the
// conversion mechanism provided for in Article 91").
func (r *Rate) PolicyUsed() Policy {
	if r == nil || r.Policy == "" {
		return LatestPublishedAt
	}
	return r.Policy
}

// Rate is one ECB reference rate together with the request it answered and
// the data set it came from. Its JSON form is part of the fiscal record
// ("fx.usdPerEur"): the member names are stable and Value is not written
// (Raw is the value, exactly as published).
type Rate struct {
	Base      string          `json:"base"`          // "EUR": the ECB quotes every currency per 1 EUR
	Quote     string          `json:"quote"`         // "USD": Quote units per 1 Base
	Raw       string          `json:"raw"`           // exactly as published, e.g. "1.1711" (trailing zeros trimmed by the ECB)
	Value     decimal.Decimal `json:"-"`             // parsed from Raw, never from a float
	RateDate  string          `json:"rateDate"`      // YYYY-MM-DD: the ECB reference date whose rate was used
	Requested string          `json:"requestedDate"` // YYYY-MM-DD, or the RFC 3339 UTC instant for LatestPublishedAt
	Policy    Policy          `json:"policy"`        // the policy that chose RateDate
	Source    string          `json:"source"`        // SourceECB for USD
	Snapshot  string          `json:"snapshot"`      // the data set that answered: "embedded:sha256:<hex>", "file:sha256:<hex>", "fetch:sha256:<hex>"

	// PublishedFrom is set for LatestPublishedAt only: the RFC 3339 UTC
	// instant from which the publication used (RateDate) counts as
	// published, 16:00 Frankfurt time on RateDate. With Requested it shows
	// that the publication was out at the chargeable event. Not written
	// when empty, so other policies' records keep their shape.
	PublishedFrom string `json:"publishedFrom,omitempty"`
}

// UnmarshalJSON decodes a Rate and sets Value from Raw, so that a rate read
// back from a stored fiscal record can be used for conversion again. A Raw
// that is not a positive plain decimal is an error.
func (r *Rate) UnmarshalJSON(b []byte) error {
	type plain Rate // no methods: avoids recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	v, err := parseRateValue(p.Raw)
	if err != nil {
		return fmt.Errorf("fx: rate raw %q: %w", p.Raw, err)
	}
	p.Value = v
	*r = Rate(p)
	return nil
}

var (
	// ErrNotYetPublished means the table does not hold the publication that
	// applies: the date is after the last publication the table knows, or
	// falls in a hole of a merged table, and is not provably a day without
	// publication (a TARGET closing day or a day the data covers). The rate
	// is unavailable, not invalid: load newer rates (ParseCSV, ParseXML,
	// LoadFile, Fetch, Merge) and ask again. The engine records such a
	// settlement as PENDING_MANUAL_REVIEW with reason fx_rate_unavailable.
	ErrNotYetPublished = errors.New("fx: rate not yet published")

	// ErrNoRate means the ECB has no rate to give: the date is before the
	// table's first publication, the quote currency is not in the table, or
	// the ECB published nothing for that currency on the reference date
	// (e.g. RUB since March 2022).
	ErrNoRate = errors.New("fx: no rate")

	// ErrPolicy means the Policy is not one of the three this package knows.
	ErrPolicy = errors.New("fx: unknown policy")
)

// Source answers rate requests; *Table and *LiveTable satisfy it. Errors
// wrap ErrNotYetPublished, ErrNoRate or ErrPolicy, or, for sources that do
// I/O, the context's error.
type Source interface {
	Rate(ctx context.Context, quote string, at time.Time, p Policy) (Rate, error)
}

// checkPublishedFrom verifies a decoded LatestPublishedAt provenance: the
// publication used counts from PublishedFrom, which is 16:00 Frankfurt time
// on RateDate and not after the requested instant. Other policies must not
// carry PublishedFrom. Errors wrap ErrInconsistent.
func (r Rate) checkPublishedFrom() error {
	if r.Policy != LatestPublishedAt {
		if r.PublishedFrom != "" {
			return fmt.Errorf("%w: publishedFrom %q with policy %q", ErrInconsistent, r.PublishedFrom, r.Policy)
		}
		return nil
	}
	from, err := PublicationInstant(r.RateDate)
	if err != nil {
		return fmt.Errorf("%w: rateDate: %v", ErrInconsistent, err)
	}
	if r.PublishedFrom != from.Format(time.RFC3339) {
		return fmt.Errorf("%w: publishedFrom %q, the publication of %s counts from %s",
			ErrInconsistent, r.PublishedFrom, r.RateDate, from.Format(time.RFC3339))
	}
	at, err := time.Parse(time.RFC3339Nano, r.Requested)
	if err != nil {
		return fmt.Errorf("%w: requestedDate %q is not an RFC 3339 instant", ErrInconsistent, r.Requested)
	}
	if at.Before(from) {
		return fmt.Errorf("%w: the publication of %s (from %s) was not out at %s",
			ErrInconsistent, r.RateDate, r.PublishedFrom, r.Requested)
	}
	return nil
}
