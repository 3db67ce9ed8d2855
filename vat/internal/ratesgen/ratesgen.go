// Package ratesgen builds the vat package's embedded rate table from the
// ibericode/vat-rates snapshot in vat/ratedata/ibericode plus the corrections file
// vat/ratedata/corrections.json, and renders it as Go source.
//
// It is run by go generate in package vat (see cmd/genrates) and, in memory,
// by the vat tests, which fail when the committed table is stale.
//
// # Inputs
//
// The base file is ibericode's vat-rates.json (format version 4):
// items[CC] is a list of periods {effective_from, rates{standard, reduced,
// reduced1, reduced2, super_reduced, parking, press_publications},
// exceptions[{name, postcode, standard}]}. Its quirks
// (vat/ratedata/ibericode/SOURCE.md; period order per the maintainers in
// https://github.com/ibericode/vat-rates/issues/5) are handled here:
// Greece is keyed GR; period order is not guaranteed, so periods are sorted
// by effective_from; "0000-01-01" means "in force before the file's history";
// an exception with "standard: 0" marks a territory outside EU VAT, which
// the vat package handles as a rule, not as a rate.
//
// The corrections file holds everything the snapshot lacks or gets wrong:
// the table version and the covered date range, the expected sha256 of the
// base file, what each ibericode exception name means, the legal conditions
// some reduced rates depend on ({code: {description, source}}), and rows
// {country, territory, series, from, percent, status, source, note,
// condition}. A row with the same (country, territory, series, from) as a
// base period replaces it; any other row adds a period. A row with a
// condition names one of the conditions: the rate applies only where the
// supply meets it (package vat asks for an attestation).
//
// # Citations
//
// Every source (of a row or a condition) must cite a public source by its
// https address (a law, an official page, a public data file at a pinned
// commit); a file beside the repository is no citation, so sources, notes
// and the coverage text may not point at shared/ or at "the research"
// (CheckCitation). Build rejects a file that breaks this.
//
// # Output
//
// One Go file in package vat with the table version, the coverage, both
// inputs' names and sha256, and one rateRow per period that is in force on
// some day of the coverage (the last period starting on or before the first
// covered day, and every later one up to the last covered day). Consecutive
// periods with the same values, status and territory are merged into the
// earlier one, so every remaining row boundary is a real change.
package ratesgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Names under which the inputs are recorded in the generated file: the base
// file and the corrections file, each
// relative to the module root.
const (
	BaseName        = "vat/ratedata/ibericode/vat-rates.json"
	CorrectionsName = "vat/ratedata/corrections.json"
)

// Input is one input file: the name recorded in the output and its bytes.
type Input struct {
	Name string
	Data []byte
}

// Series names. "reduced" holds every reduced, super-reduced and parking
// rate of a member state as an ascending list; the others hold one percent.
const (
	SeriesStandard     = "standard"
	SeriesReduced      = "reduced"
	SeriesEbook        = "ebook"
	SeriesEpublication = "epublication"
	SeriesStreaming    = "streaming"
)

// Row statuses.
const (
	StatusSource        = "source"         // rate confirmed by the cited source: used
	StatusUnverified    = "unverified"     // no source confirms the rate: manual review
	StatusItemDependent = "item_dependent" // several rates, the item decides: manual review
)

// Countries the table must cover: the EU-27 (Greece keyed GR as in ISO
// 3166-1 and in the base file) and the United Kingdom.
var requiredCountries = []string{
	"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GR", "HR",
	"HU", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
}

// Row is one rate period as generated.
type Row struct {
	Country   string
	Territory string
	Series    string
	From      int // yyyymmdd; 0 when in force before the source's history
	Status    string
	Percents  []decimal.Decimal
	Source    string
	Note      string
	Condition string // code of a Condition the rate depends on, or ""
}

type corrections struct {
	Version    string                  `json:"version"`
	Conditions map[string]conditionDef `json:"conditions"`
	Coverage   struct {
		From string `json:"from"`
		To   string `json:"to"`
		Why  string `json:"why"`
	} `json:"coverage"`
	Base struct {
		Repository string `json:"repository"`
		Path       string `json:"path"`
		Commit     string `json:"commit"`
		SHA256     string `json:"sha256"`
	} `json:"base"`
	Exceptions map[string]string `json:"exceptions"`
	Rows       []correctionRow   `json:"rows"`
}

// conditionDef is a legal condition of a reduced rate.
type conditionDef struct {
	Description string `json:"description"`
	Source      string `json:"source"`
}

// Condition is a legal condition of a reduced rate, as generated.
type Condition struct {
	Code        string
	Description string
	Source      string
}

type correctionRow struct {
	Country   string   `json:"country"`
	Territory string   `json:"territory,omitempty"`
	Series    string   `json:"series"`
	From      string   `json:"from"`
	Percent   []string `json:"percent"`
	Status    string   `json:"status"`
	Source    string   `json:"source"`
	Note      string   `json:"note,omitempty"`
	Condition string   `json:"condition,omitempty"`
}

type baseFile struct {
	Version int                     `json:"version"`
	Items   map[string][]basePeriod `json:"items"`
}

type basePeriod struct {
	EffectiveFrom string                 `json:"effective_from"`
	Rates         map[string]json.Number `json:"rates"`
	Exceptions    []struct {
		Name     string      `json:"name"`
		Postcode string      `json:"postcode"`
		Standard json.Number `json:"standard"`
	} `json:"exceptions"`
}

// Table is the parsed and merged result before rendering.
type Table struct {
	Version         string
	From, To        int
	CoverageWhy     string
	BaseName        string
	BaseSHA256      string
	CorrectionsName string
	CorrectionsSHA  string
	Conditions      []Condition // sorted by code
	Rows            []Row
}

// Generate parses both inputs, merges them and returns the gofmt-formatted
// Go source of the table.
func Generate(base, corr Input) ([]byte, error) {
	t, err := Build(base, corr)
	if err != nil {
		return nil, err
	}
	return Render(t)
}

// Build parses and merges the inputs.
func Build(base, corr Input) (*Table, error) {
	var c corrections
	if err := decodeStrict(corr.Data, &c); err != nil {
		return nil, fmt.Errorf("ratesgen: %s: %w", corr.Name, err)
	}
	baseSum := sha256Hex(base.Data)
	if c.Base.SHA256 != baseSum {
		return nil, fmt.Errorf("ratesgen: %s: sha256 %s, corrections expect %s (the corrections were written against another snapshot)", base.Name, baseSum, c.Base.SHA256)
	}
	if c.Version == "" || c.Base.Commit == "" {
		return nil, fmt.Errorf("ratesgen: %s: version and base.commit are required", corr.Name)
	}
	from, err := parseDate(c.Coverage.From)
	if err != nil || from == 0 {
		return nil, fmt.Errorf("ratesgen: %s: coverage.from %q: not a date", corr.Name, c.Coverage.From)
	}
	to, err := parseDate(c.Coverage.To)
	if err != nil || to < from {
		return nil, fmt.Errorf("ratesgen: %s: coverage.to %q: not a date on or after coverage.from", corr.Name, c.Coverage.To)
	}

	if err := CheckCitation(c.Coverage.Why, false); err != nil {
		return nil, fmt.Errorf("ratesgen: %s: coverage.why: %w", corr.Name, err)
	}
	conds, err := conditions(c.Conditions)
	if err != nil {
		return nil, fmt.Errorf("ratesgen: %s: %w", corr.Name, err)
	}

	var b baseFile
	if err := json.Unmarshal(base.Data, &b); err != nil {
		return nil, fmt.Errorf("ratesgen: %s: %w", base.Name, err)
	}
	if b.Version != 4 {
		return nil, fmt.Errorf("ratesgen: %s: format version %d, want 4", base.Name, b.Version)
	}
	rows, err := baseRows(b, c)
	if err != nil {
		return nil, fmt.Errorf("ratesgen: %s: %w", base.Name, err)
	}
	rows, err = applyCorrections(rows, c.Rows, c.Conditions)
	if err != nil {
		return nil, fmt.Errorf("ratesgen: %s: %w", corr.Name, err)
	}
	rows = trim(rows, from, to)
	if err := checkComplete(rows, from); err != nil {
		return nil, fmt.Errorf("ratesgen: %w", err)
	}
	return &Table{
		Version:         c.Version,
		From:            from,
		To:              to,
		CoverageWhy:     c.Coverage.Why,
		BaseName:        base.Name,
		BaseSHA256:      baseSum,
		CorrectionsName: corr.Name,
		CorrectionsSHA:  sha256Hex(corr.Data),
		Conditions:      conds,
		Rows:            rows,
	}, nil
}

func decodeStrict(data []byte, v any) error {
	if err := noDuplicateMembers(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// noDuplicateMembers refuses an object that names a member twice:
// encoding/json keeps the last value, a reader of the file the first, and
// a table file must mean one thing to both (RFC 8259, section 4: names
// "SHOULD be unique", https://www.rfc-editor.org/rfc/rfc8259#section-4).
func noDuplicateMembers(data []byte) error {
	type frame struct {
		obj     bool
		wantKey bool            // an object: the next token is a member name or '}'
		seen    map[string]bool // an object's member names so far
		name    string          // an object: the member being read
		index   int             // an array: the element being read
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 {
			if f := stack[n-1]; f.obj {
				f.wantKey = true
			} else {
				f.index++
			}
		}
	}
	where := func() string {
		var parts []string
		for _, f := range stack[:len(stack)-1] {
			if f.obj {
				parts = append(parts, f.name)
			} else {
				parts = append(parts, strconv.Itoa(f.index))
			}
		}
		if len(parts) == 0 {
			return "the file"
		}
		return strings.Join(parts, "/")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or a syntax error the decoding that follows reports
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			f := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			name, _ := tok.(string)
			if f.seen[name] {
				return fmt.Errorf("%s: member %q appears twice (a reader sees the first value, the decoder the last)", where(), name)
			}
			f.seen[name], f.name, f.wantKey = true, name, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, wantKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// parseDate turns YYYY-MM-DD into yyyymmdd; the base file's "0000-01-01"
// ("since before the history") becomes 0.
func parseDate(s string) (int, error) {
	if s == "0000-01-01" {
		return 0, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, err
	}
	return t.Year()*10000 + int(t.Month())*100 + t.Day(), nil
}

func formatDate(d int) string {
	if d == 0 {
		return "0000-01-01"
	}
	return fmt.Sprintf("%04d-%02d-%02d", d/10000, d/100%100, d%100)
}

// reducedKeys are the base file's names for rates below the standard rate
// (Art. 98, 99, 110 and 118 Directive 2006/112/EC).
var reducedKeys = map[string]bool{
	"reduced": true, "reduced1": true, "reduced2": true, "super_reduced": true,
	"parking": true, "press_publications": true,
}

func parsePercent(s string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("percent %q: %w", s, err)
	}
	// Bound the exponent before comparing: "1e999999999" would otherwise
	// be expanded to a billion digits.
	if e := d.Exponent(); e < -4 || e > 2 {
		return decimal.Decimal{}, fmt.Errorf("percent %q: more than 4 decimals, or an exponent above 2", s)
	}
	if d.IsNegative() || d.GreaterThan(decimal.NewFromInt(100)) {
		return decimal.Decimal{}, fmt.Errorf("percent %q: outside 0..100", s)
	}
	return d, nil
}

func baseRows(b baseFile, c corrections) ([]Row, error) {
	src := func(cc, from string) string {
		return fmt.Sprintf("%s/blob/%s/%s (%s, period %s)", c.Base.Repository, c.Base.Commit, c.Base.Path, cc, from)
	}
	var rows []Row
	countries := make([]string, 0, len(b.Items))
	for cc := range b.Items {
		countries = append(countries, cc)
	}
	slices.Sort(countries)
	for _, cc := range countries {
		if !slices.Contains(requiredCountries, cc) {
			return nil, fmt.Errorf("country %q: not EU-27 or GB", cc)
		}
		for _, p := range b.Items[cc] {
			from, err := parseDate(p.EffectiveFrom)
			if err != nil {
				return nil, fmt.Errorf("%s: effective_from %q: %w", cc, p.EffectiveFrom, err)
			}
			std, ok := p.Rates["standard"]
			if !ok {
				return nil, fmt.Errorf("%s %s: no standard rate", cc, p.EffectiveFrom)
			}
			d, err := parsePercent(std.String())
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", cc, p.EffectiveFrom, err)
			}
			rows = append(rows, Row{Country: cc, Series: SeriesStandard, From: from, Status: StatusSource,
				Percents: []decimal.Decimal{d}, Source: src(cc, p.EffectiveFrom)})
			var reduced []decimal.Decimal
			keys := make([]string, 0, len(p.Rates))
			for k := range p.Rates {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k == "standard" {
					continue
				}
				if !reducedKeys[k] {
					return nil, fmt.Errorf("%s %s: unknown rate key %q", cc, p.EffectiveFrom, k)
				}
				d, err := parsePercent(p.Rates[k].String())
				if err != nil {
					return nil, fmt.Errorf("%s %s %s: %w", cc, p.EffectiveFrom, k, err)
				}
				reduced = append(reduced, d)
			}
			if len(reduced) > 0 {
				rows = append(rows, Row{Country: cc, Series: SeriesReduced, From: from, Status: StatusSource,
					Percents: sortedUnique(reduced), Source: src(cc, p.EffectiveFrom)})
			}
			for _, e := range p.Exceptions {
				territory, known := c.Exceptions[e.Name]
				if !known {
					return nil, fmt.Errorf("%s %s: exception %q: not mapped in corrections.exceptions", cc, p.EffectiveFrom, e.Name)
				}
				d, err := parsePercent(e.Standard.String())
				if err != nil {
					return nil, fmt.Errorf("%s %s exception %q: %w", cc, p.EffectiveFrom, e.Name, err)
				}
				if territory == "" {
					continue // outside EU VAT: a rule of package vat, not a rate
				}
				if d.IsZero() {
					return nil, fmt.Errorf("%s exception %q: mapped to territory %q but its standard rate is 0 (outside EU VAT)", cc, e.Name, territory)
				}
				rows = append(rows, Row{Country: cc, Territory: territory, Series: SeriesStandard, From: from,
					Status: StatusSource, Percents: []decimal.Decimal{d}, Source: src(cc, p.EffectiveFrom)})
			}
		}
	}
	return rows, nil
}

func sortedUnique(ds []decimal.Decimal) []decimal.Decimal {
	slices.SortFunc(ds, func(a, b decimal.Decimal) int { return a.Cmp(b) })
	return slices.CompactFunc(ds, func(a, b decimal.Decimal) bool { return a.Equal(b) })
}

type rowKey struct {
	country, territory, series string
	from                       int
}

func applyCorrections(rows []Row, corr []correctionRow, conds map[string]conditionDef) ([]Row, error) {
	index := make(map[rowKey]int, len(rows))
	for i, r := range rows {
		k := rowKey{r.Country, r.Territory, r.Series, r.From}
		if _, dup := index[k]; dup {
			return nil, fmt.Errorf("base file: two periods for %s %s %s %s", r.Country, r.Territory, r.Series, formatDate(r.From))
		}
		index[k] = i
	}
	seen := make(map[rowKey]bool, len(corr))
	for i, c := range corr {
		r, err := correctionToRow(c)
		if err != nil {
			return nil, fmt.Errorf("rows[%d]: %w", i, err)
		}
		if _, ok := conds[r.Condition]; r.Condition != "" && !ok {
			return nil, fmt.Errorf("rows[%d]: %s %s: condition %q is not defined in conditions", i, r.Country, r.Series, r.Condition)
		}
		k := rowKey{r.Country, r.Territory, r.Series, r.From}
		if seen[k] {
			return nil, fmt.Errorf("rows[%d]: duplicate row for %s %s %s %s", i, r.Country, r.Territory, r.Series, c.From)
		}
		seen[k] = true
		if j, ok := index[k]; ok {
			rows[j] = r
			continue
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func correctionToRow(c correctionRow) (Row, error) {
	if !slices.Contains(requiredCountries, c.Country) {
		return Row{}, fmt.Errorf("country %q: not EU-27 (GR for Greece) or GB", c.Country)
	}
	from, err := parseDate(c.From)
	if err != nil {
		return Row{}, fmt.Errorf("from %q: %w", c.From, err)
	}
	if strings.TrimSpace(c.Source) == "" {
		return Row{}, fmt.Errorf("%s %s: a source is required", c.Country, c.Series)
	}
	if err := CheckCitation(c.Source, true); err != nil {
		return Row{}, fmt.Errorf("%s %s source: %w", c.Country, c.Series, err)
	}
	if err := CheckCitation(c.Note, false); err != nil {
		return Row{}, fmt.Errorf("%s %s note: %w", c.Country, c.Series, err)
	}
	var ps []decimal.Decimal
	for _, s := range c.Percent {
		d, err := parsePercent(s)
		if err != nil {
			return Row{}, fmt.Errorf("%s %s: %w", c.Country, c.Series, err)
		}
		ps = append(ps, d)
	}
	switch c.Series {
	case SeriesStandard:
		// Every member state has one standard rate (Art. 96 Directive
		// 2006/112/EC, https://eur-lex.europa.eu/eli/dir/2006/112/oj), and
		// every other rate of a supply is told apart from it: a table that
		// cannot name it (unverified, item-dependent) cannot decide.
		if c.Status != StatusSource || len(ps) != 1 {
			return Row{}, fmt.Errorf("%s standard: needs status source and exactly one percent (the standard rate every other rate is told apart from)", c.Country)
		}
		// A member state's standard rate is at least 15 % (Art. 97 of
		// the Directive); the UK is not bound by it, and Portugal may go
		// lower in the Azores and Madeira (Art. 105(2)).
		if c.Country != "GB" && c.Territory == "" && ps[0].LessThan(decimal.NewFromInt(15)) {
			return Row{}, fmt.Errorf("%s standard %s %%: below the 15 %% minimum standard rate of a member state (Art. 97 Directive 2006/112/EC, https://eur-lex.europa.eu/eli/dir/2006/112/oj)", c.Country, ps[0])
		}
	case SeriesEbook, SeriesEpublication:
		if c.Status == StatusSource && len(ps) != 1 {
			return Row{}, fmt.Errorf("%s %s: a sourced row needs exactly one percent", c.Country, c.Series)
		}
	case SeriesReduced:
		if c.Status != StatusSource || len(ps) == 0 {
			return Row{}, fmt.Errorf("%s reduced: needs status source and at least one percent", c.Country)
		}
		ps = sortedUnique(ps)
	case SeriesStreaming:
		if c.Status == StatusSource {
			return Row{}, fmt.Errorf("%s streaming: only unverified or item_dependent rows (a sourced streaming rate would be the standard rate)", c.Country)
		}
	default:
		return Row{}, fmt.Errorf("%s: unknown series %q", c.Country, c.Series)
	}
	switch c.Status {
	case StatusSource:
	case StatusUnverified:
		if strings.TrimSpace(c.Note) == "" {
			return Row{}, fmt.Errorf("%s %s: an unverified row needs a note saying why", c.Country, c.Series)
		}
	case StatusItemDependent:
		if len(ps) < 2 {
			return Row{}, fmt.Errorf("%s %s: an item-dependent row lists the candidate rates", c.Country, c.Series)
		}
	default:
		return Row{}, fmt.Errorf("%s %s: unknown status %q", c.Country, c.Series, c.Status)
	}
	if c.Condition != "" && (c.Status != StatusSource || c.Series == SeriesReduced || c.Series == SeriesStandard) {
		return Row{}, fmt.Errorf("%s %s: a condition belongs to a sourced e-book or e-publication rate", c.Country, c.Series)
	}
	return Row{Country: c.Country, Territory: c.Territory, Series: c.Series, From: from, Status: c.Status,
		Percents: ps, Source: c.Source, Note: c.Note, Condition: c.Condition}, nil
}

// conditions validates the condition definitions and returns them sorted.
func conditions(defs map[string]conditionDef) ([]Condition, error) {
	out := make([]Condition, 0, len(defs))
	for code, d := range defs {
		if code == "" || strings.IndexFunc(code, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
			return nil, fmt.Errorf("condition %q: the code must be a lower-case token", code)
		}
		if strings.TrimSpace(d.Description) == "" {
			return nil, fmt.Errorf("condition %q: a description is required", code)
		}
		if err := CheckCitation(d.Source, true); err != nil {
			return nil, fmt.Errorf("condition %q source: %w", code, err)
		}
		out = append(out, Condition{Code: code, Description: d.Description, Source: d.Source})
	}
	slices.SortFunc(out, func(a, b Condition) int { return strings.Compare(a.Code, b.Code) })
	return out, nil
}

// notCitable are references that are no public citation: files beside the
// repository (shared/, the research notes) are not published with it.
var notCitable = []string{"shared/", "research section", "vat.md", "per the research", "in the research", "the research"}

// CheckCitation reports whether s may stand in the table. With
// needURL, s is a source and must name at least one public https address;
// in every case it may not point at a file beside the repository.
func CheckCitation(s string, needURL bool) error {
	low := strings.ToLower(s)
	for _, bad := range notCitable {
		if strings.Contains(low, bad) {
			return fmt.Errorf("%q refers to %q, a file beside the repository, which is no public citation", s, bad)
		}
	}
	if needURL && !strings.Contains(s, "https://") {
		return fmt.Errorf("%q names no public https address (law, official page, or a public file at a pinned commit)", s)
	}
	return nil
}

func sameValue(a, b Row) bool {
	return a.Status == b.Status && a.Condition == b.Condition && slices.EqualFunc(a.Percents, b.Percents, decimal.Decimal.Equal)
}

// trim keeps, per series, the periods in force on some covered day and
// merges consecutive periods that do not change anything.
func trim(rows []Row, from, to int) []Row {
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := strings.Compare(a.Country, b.Country); c != 0 {
			return c
		}
		if c := strings.Compare(a.Territory, b.Territory); c != 0 {
			return c
		}
		if c := strings.Compare(a.Series, b.Series); c != 0 {
			return c
		}
		return a.From - b.From
	})
	var out []Row
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Country == rows[i].Country && rows[j].Territory == rows[i].Territory && rows[j].Series == rows[i].Series {
			j++
		}
		// Merge first, so that a period that only restates a rate (a new
		// base period started because another rate changed) does not
		// pretend the rate started then.
		var group []Row
		for _, r := range rows[i:j] {
			if n := len(group); n > 0 && sameValue(group[n-1], r) {
				continue
			}
			group = append(group, r)
		}
		start := 0
		for k, r := range group {
			if r.From <= from {
				start = k
			}
		}
		for _, r := range group[start:] {
			if r.From > to {
				break
			}
			out = append(out, r)
		}
		i = j
	}
	return out
}

// checkComplete requires, for every country, a standard, e-book and
// e-publication period in force on the first covered day.
func checkComplete(rows []Row, from int) error {
	for _, cc := range requiredCountries {
		for _, s := range []string{SeriesStandard, SeriesEbook, SeriesEpublication} {
			ok := false
			for _, r := range rows {
				if r.Country == cc && r.Territory == "" && r.Series == s && r.From <= from {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("%s: no %s rate in force on %s", cc, s, formatDate(from))
			}
		}
	}
	return nil
}

// Render writes the table as Go source in package vat.
func Render(t *Table) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./internal/ratesgen/cmd/genrates; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "// Inputs:\n//   %s sha256 %s\n//   %s sha256 %s\n\n", t.BaseName, t.BaseSHA256, t.CorrectionsName, t.CorrectionsSHA)
	fmt.Fprintf(&b, "package vat\n\nimport \"github.com/shopspring/decimal\"\n\n")
	fmt.Fprintf(&b, "const (\n")
	fmt.Fprintf(&b, "rateTableVersion = %s\n", strconv.Quote(t.Version))
	fmt.Fprintf(&b, "// rateTableWhy says why the table vouches for its coverage.\nrateTableWhy = %s\n", strconv.Quote(t.CoverageWhy))
	fmt.Fprintf(&b, "rateTableFrom = %d\nrateTableTo = %d\n", t.From, t.To)
	fmt.Fprintf(&b, "rateTableBaseName = %s\nrateTableBaseSHA256 = %s\n", strconv.Quote(t.BaseName), strconv.Quote(t.BaseSHA256))
	fmt.Fprintf(&b, "rateTableCorrectionsName = %s\nrateTableCorrectionsSHA256 = %s\n", strconv.Quote(t.CorrectionsName), strconv.Quote(t.CorrectionsSHA))
	fmt.Fprintf(&b, ")\n\n")
	fmt.Fprintf(&b, "// rateConditionDefs are the legal conditions of reduced rates, sorted by\n// code.\nvar rateConditionDefs = [...]rateConditionDef{\n")
	for _, c := range t.Conditions {
		fmt.Fprintf(&b, "{code: %s, description: %s, source: %s},\n", strconv.Quote(c.Code), strconv.Quote(c.Description), strconv.Quote(c.Source))
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// rateRows holds every period in force on some covered day, sorted by\n// country, territory, series and start date.\nvar rateRows = [...]rateRow{\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "{country: %s, territory: %s, series: %s, from: %d, status: %s, percents: %s, source: %s, note: %s, condition: %s},\n",
			strconv.Quote(r.Country), strconv.Quote(r.Territory), strconv.Quote(r.Series), r.From,
			strconv.Quote(r.Status), percentsLiteral(r.Percents), strconv.Quote(r.Source), strconv.Quote(r.Note), strconv.Quote(r.Condition))
	}
	fmt.Fprintf(&b, "}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("ratesgen: format: %w", err)
	}
	return out, nil
}

func percentsLiteral(ps []decimal.Decimal) string {
	if len(ps) == 0 {
		return "nil"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("decimal.New(%d, %d)", p.Coefficient().Int64(), p.Exponent())
	}
	return "[]decimal.Decimal{" + strings.Join(parts, ", ") + "}"
}

// # Table files
//
// A table file is a whole rate table in one JSON document, for loading at
// run time (package vat, ParseRateTable) without a new build: an operator
// extends the coverage when member states publish the next year's rates.
// Its rows have the corrections file's row format, and each is checked as
// a correction row is (a public https source, a note on an unverified row,
// the series' rules); together they must be complete on the first covered
// day, as a generated table must.
//
//	{"format": "fiscal402-vat-rate-table/1", "version": "...",
//	 "coverage": {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD", "why": "..."},
//	 "conditions": {code: {"description": "...", "source": "https://..."}},
//	 "rows": [{"country": "AT", "territory": "", "series": "standard",
//	           "from": "YYYY-MM-DD", "percent": ["20"], "status": "source",
//	           "source": "https://...", "note": "", "condition": ""}, ...]}
//
// "from" is "0000-01-01" for a period in force before the source's history.

// FileFormat names the table-file format in its "format" member.
const FileFormat = "fiscal402-vat-rate-table/1"

type tableFile struct {
	Format     string                  `json:"format"`
	Version    string                  `json:"version"`
	Coverage   fileCoverage            `json:"coverage"`
	Conditions map[string]conditionDef `json:"conditions"`
	Rows       []correctionRow         `json:"rows"`
}

type fileCoverage struct {
	From string `json:"from"`
	To   string `json:"to"`
	Why  string `json:"why"`
}

// ParseFile reads and checks a table file. The result has no input names
// or hashes (Table.BaseName and the others are empty).
func ParseFile(data []byte) (*Table, error) {
	var f tableFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, err
	}
	if f.Format != FileFormat {
		return nil, fmt.Errorf("format %q: want %q", f.Format, FileFormat)
	}
	if err := checkVersion(f.Version); err != nil {
		return nil, err
	}
	from, err := parseDate(f.Coverage.From)
	if err != nil || from == 0 {
		return nil, fmt.Errorf("coverage.from %q: not a date", f.Coverage.From)
	}
	to, err := parseDate(f.Coverage.To)
	if err != nil || to < from {
		return nil, fmt.Errorf("coverage.to %q: not a date on or after coverage.from", f.Coverage.To)
	}
	if strings.TrimSpace(f.Coverage.Why) == "" {
		return nil, errors.New("coverage.why: say why the table vouches for this range (what was checked, as of when)")
	}
	if err := CheckCitation(f.Coverage.Why, false); err != nil {
		return nil, fmt.Errorf("coverage.why: %w", err)
	}
	conds, err := conditions(f.Conditions)
	if err != nil {
		return nil, err
	}
	if len(f.Rows) == 0 {
		return nil, errors.New("rows: the table has no rows")
	}
	rows, err := applyCorrections(nil, f.Rows, f.Conditions)
	if err != nil {
		return nil, err
	}
	// A row after the coverage is a rate the file does not vouch for
	// (mostly a new year's rate without a new coverage.to): refused, not
	// dropped.
	for i, r := range rows {
		if r.From > to {
			return nil, fmt.Errorf("rows[%d]: %s from %s starts after coverage.to %s: extend the coverage or leave the row out", i, strings.Join(strings.Fields(r.Country+" "+r.Territory+" "+r.Series), " "), formatDate(r.From), formatDate(to))
		}
	}
	rows = trim(rows, from, to)
	if err := checkComplete(rows, from); err != nil {
		return nil, err
	}
	return &Table{Version: f.Version, From: from, To: to, CoverageWhy: f.Coverage.Why, Conditions: conds, Rows: rows}, nil
}

// checkVersion: a version names the data in every record decided with it
// (vat.RateSource.Table), so it is a short printable token.
func checkVersion(v string) error {
	if v == "" || len(v) > 64 || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
	}) >= 0 {
		return fmt.Errorf("version %q: 1 to 64 letters, digits, '.', '-' or '_'", v)
	}
	return nil
}

// EncodeFile writes t as a table file: indented JSON, rows in the table's
// order, conditions by code. ParseFile(EncodeFile(t)) gives t's version,
// coverage, conditions and rows back.
func EncodeFile(t *Table) ([]byte, error) {
	f := tableFile{
		Format:     FileFormat,
		Version:    t.Version,
		Coverage:   fileCoverage{From: formatDate(t.From), To: formatDate(t.To), Why: t.CoverageWhy},
		Conditions: make(map[string]conditionDef, len(t.Conditions)),
		Rows:       make([]correctionRow, len(t.Rows)),
	}
	for _, c := range t.Conditions {
		f.Conditions[c.Code] = conditionDef{Description: c.Description, Source: c.Source}
	}
	for i, r := range t.Rows {
		ps := make([]string, len(r.Percents))
		for j, p := range r.Percents {
			ps[j] = p.String()
		}
		f.Rows[i] = correctionRow{Condition: r.Condition, Country: r.Country, Territory: r.Territory, Series: r.Series,
			From: formatDate(r.From), Percent: ps, Status: r.Status, Source: r.Source, Note: r.Note}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
