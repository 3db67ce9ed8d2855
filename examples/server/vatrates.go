package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// The VAT rate table (README "VAT rate table"). The embedded table covers
// a fixed range of days; after its last one every new settlement waits
// for review (date_outside_rate_table). -vat-rates loads a newer table
// from a file without a new build; "vat-rates export" writes the embedded
// table as such a file, where a new one starts, and "vat-rates check"
// reads a file as the server would and says what it covers, where it
// differs from the embedded table and what it changes after it.

// rateTableWarnDays: within this many days of the table's last day the
// server warns at start (a /readyz check fails after it).
const rateTableWarnDays = 45

// readRateTable reads and checks a rate table file.
func readRateTable(path string) (*vat.RateTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return vat.ParseRateTable(data)
}

// logRateTable logs the table the server decides with, and warns when its
// coverage ends soon or has ended.
func logRateTable(log *slog.Logger, t *vat.RateTable, now time.Time) {
	from, to := t.Coverage()
	attrs := []any{"version", t.Version(), "from", from.Format(time.DateOnly), "to", to.Format(time.DateOnly), "sha256", t.Digest()}
	_, until := t.CoveredEverywhere() // the first local midnight after the last day
	left := int(until.Sub(now.UTC()).Hours() / 24)
	switch {
	case left <= 0:
		log.Error("VAT rate table: today is after its last day; every new settlement waits for review (date_outside_rate_table) until a newer table is loaded with -vat-rates", attrs...)
	case left <= rateTableWarnDays:
		log.Warn(fmt.Sprintf("VAT rate table: its coverage ends in %d days; load a newer table with -vat-rates before then", left), attrs...)
	default:
		log.Info("VAT rate table", attrs...)
	}
}

// bucketReplicas is the server's side bucket in a log that several
// replicas share; "vat_rate_table" holds the version and sha256 of the
// table the replica that started last decides with.
const bucketReplicas = "replicas"

// compareRateTable, on a shared log, warns when this replica's VAT rate
// table is not the one the replica started before it recorded (README
// "Several replicas on PostgreSQL", "One rate table": the replicas must
// decide with one table; during a rolling update to a newer one the first
// updated replica warns, and so does an old one started after it), then
// records this replica's. A log of one server has nothing to compare.
func compareRateTable(l *ledger.Ledger, log *slog.Logger, t *vat.RateTable) {
	if !l.Shared() {
		return
	}
	mine := t.Version() + " " + t.Digest()
	var prev []byte
	err := l.Update(func(tx ledger.Tx) error {
		prev = tx.Get(bucketReplicas, []byte("vat_rate_table"))
		return tx.Put(bucketReplicas, []byte("vat_rate_table"), []byte(mine))
	})
	if err != nil {
		log.Warn("VAT rate table: the table of the other replicas could not be read to compare", "err", err)
		return
	}
	if prev == nil || string(prev) == mine {
		return
	}
	version, digest, _ := strings.Cut(string(prev), " ")
	log.Warn("VAT rate table: another replica of this log started with another table; replicas must decide with one (give every replica the same -vat-rates), else a supply is taxed by the table of the replica that answers; expected only during a rolling update",
		"version", t.Version(), "sha256", t.Digest(), "other_version", version, "other_sha256", digest)
}

// runVATRates is "server vat-rates export [-o FILE]" and "server
// vat-rates check FILE".
func runVATRates(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, vatRatesUsage)
		return usagef("vat-rates: a command is required")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, vatRatesUsage)
		return flag.ErrHelp
	case "export":
		fs := flag.NewFlagSet("vat-rates export", flag.ContinueOnError)
		fs.SetOutput(stderr)
		out := fs.String("o", "", "write the file here (default: stdout); an existing file is not replaced")
		if err := parseArgs(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef("vat-rates export: unexpected argument %q", fs.Arg(0))
		}
		data, err := vat.Rates().File()
		if err != nil {
			return err
		}
		if *out == "" {
			_, err = stdout.Write(data)
			return err
		}
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("vat-rates export -o %s: %w", *out, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case "check":
		if len(args) == 2 && slices.Contains([]string{"-h", "-help", "--help"}, args[1]) {
			fmt.Fprintln(stderr, vatRatesUsage) // a file of that name is ./-h
			return flag.ErrHelp
		}
		if len(args) != 2 {
			return usagef("usage: server vat-rates check FILE")
		}
		t, err := readRateTable(args[1])
		if err != nil {
			return fmt.Errorf("vat-rates check %s: %w", args[1], err)
		}
		from, to := t.Coverage()
		fmt.Fprintf(stdout, "%s: version %s, covers %s to %s, sha256 %s\n", args[1], t.Version(), from.Format(time.DateOnly), to.Format(time.DateOnly), t.Digest())
		if t == vat.Rates() {
			fmt.Fprintln(stdout, "it is the embedded table")
			return nil
		}
		diff := t.Differences(vat.Rates())
		fmt.Fprintf(stdout, "differences from the embedded table on the days it covers: %d\n", len(diff))
		for _, d := range diff {
			fmt.Fprintf(stdout, "  from %s %s %s: embedded %s, this file %s (%s)\n", d.Day, place(d.Country, d.Territory), d.Series, period(d.Base), period(d.This), d.This.Source)
		}
		_, embeddedTo := vat.Rates().Coverage()
		last := embeddedTo.Format(time.DateOnly)
		var later []vat.RateChange
		for _, c := range t.Changes() {
			if c.Day > last {
				later = append(later, c)
			}
		}
		fmt.Fprintf(stdout, "rate changes after the embedded table's last day (%s): %d\n", last, len(later))
		for _, c := range later {
			fmt.Fprintf(stdout, "  %s %s %s: %s -> %s (%s)\n", c.Day, place(c.Country, c.Territory), c.Series, period(c.Before), period(c.After), c.After.Source)
		}
		return nil
	}
	fmt.Fprintln(stderr, vatRatesUsage)
	return usagef("vat-rates: unknown command %q", args[0])
}

const vatRatesUsage = `usage: server vat-rates export [-o FILE]   write the embedded VAT rate table as a file (stdout by default; never replaces a file)
       server vat-rates check FILE         read a file as -vat-rates would: its version, coverage, sha256 and every change after the embedded table`

// period shows a period's rates, the condition they depend on and, unless
// a source confirms them, why a supply of the series waits for review.
func period(p vat.RatePeriod) string {
	if p.Condition != "" {
		return percents(p.Percents) + " if " + p.Condition
	}
	switch p.Status {
	case vat.RateStatusUnverified:
		return percents(p.Percents) + " unverified (supplies wait for review)"
	case vat.RateStatusItemDependent:
		return percents(p.Percents) + " depends on the item (supplies wait for review)"
	}
	return percents(p.Percents)
}

func percents(ps []decimal.Decimal) string {
	if len(ps) == 0 {
		return "none"
	}
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += "/"
		}
		out += p.String() + " %"
	}
	return out
}

// place is a country, with its territory when the rate is the territory's.
func place(country, territory string) string {
	if territory == "" {
		return country
	}
	return country + " " + territory
}
