package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// rateTableFile writes the embedded VAT rate table as a file, changed by
// edit (version, coverage, rows), and returns its path. Test data: a row
// edit adds cites a made-up source.
func rateTableFile(t *testing.T, edit func(d map[string]any)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vat-rates.json")
	if err := os.WriteFile(path, fiscaltest.RateTableFile(t, edit), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// coveringRateTable is the embedded table carried on to a year after
// today (test data), for the tests that need a server ready on any day:
// after the embedded table's last day /readyz fails its vat_rates check.
func coveringRateTable(t *testing.T) string {
	return rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-covering.1"
		cov := d["coverage"].(map[string]any)
		cov["to"] = time.Now().UTC().AddDate(1, 0, 0).Format(time.DateOnly)
		cov["why"] = "test fixture: the embedded rows carried on past today"
	})
}

// TestVATRatesCommands: "vat-rates export" writes the embedded table (and
// never replaces a file), "vat-rates check" reads it back as the embedded
// table, and of an edited file names the version, the coverage and every
// change after the embedded table's last day.
func TestVATRatesCommands(t *testing.T) {
	out := filepath.Join(t.TempDir(), "embedded.json")
	if _, stderr, err := runCommand(t, nil, "vat-rates", "export", "-o", out); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	if _, _, err := runCommand(t, nil, "vat-rates", "export", "-o", out); err == nil {
		t.Errorf("export over an existing file succeeded")
	}
	stdout, stderr, err := runCommand(t, nil, "vat-rates", "check", out)
	if err != nil || !strings.Contains(stdout, vat.Rates().Version()) || !strings.Contains(stdout, "it is the embedded table") {
		t.Fatalf("check of the exported file: %v\n%s%s", err, stdout, stderr)
	}
	_, embeddedTo := vat.Rates().Coverage()
	first := embeddedTo.AddDate(0, 0, 1).Format(time.DateOnly)
	to := embeddedTo.AddDate(1, 0, 0).Format(time.DateOnly)
	edited := rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-next.1"
		d["coverage"].(map[string]any)["to"] = to
		d["rows"] = append(d["rows"].([]any), map[string]any{"country": "FR", "series": "standard", "from": first,
			"percent": []string{"21.5"}, "status": "source", "source": "https://example.invalid/made-up"})
	})
	stdout, stderr, err = runCommand(t, nil, "vat-rates", "check", edited)
	if err != nil {
		t.Fatalf("check of an edited file: %v\n%s", err, stderr)
	}
	fr, _, _ := vat.Rates().Standard("FR", embeddedTo)
	for _, want := range []string{"version test-next.1", "to " + to, "on the days it covers: 0", "after the embedded table's last day (" + embeddedTo.Format(time.DateOnly) + "): 1",
		first + " FR standard: " + fr.String() + " % -> 21.5 %"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
	if _, _, err := runCommand(t, nil, "vat-rates", "nonsense"); err == nil {
		t.Errorf("an unknown vat-rates command succeeded")
	}
}

// TestVATRatesFlag: the server decides with the table -vat-rates names
// (GET /v1/capabilities shows it, /readyz passes while today is covered),
// refuses at start, naming the flag and writing nothing, a file that
// reuses the embedded version for other rows, and with a table whose
// coverage ended is not ready and logs why.
func TestVATRatesFlag(t *testing.T) {
	table := coveringRateTable(t)
	p := startServer(t, t.TempDir(), "-vat-rates", table, "-ready-fx-max-age", "0")
	_, _, raw := p.request(t, "GET", "/v1/capabilities", nil)
	var caps struct {
		Table struct {
			Version string `json:"version"`
			To      string `json:"coverage_to"`
		} `json:"vat_rate_table"`
	}
	if err := json.Unmarshal(raw, &caps); err != nil {
		t.Fatal(err)
	}
	if caps.Table.Version != "test-covering.1" || caps.Table.To != time.Now().UTC().AddDate(1, 0, 0).Format(time.DateOnly) {
		t.Errorf("capabilities name table %+v, want test-covering.1", caps.Table)
	}
	if status, rd := readiness(t, p); status != 200 {
		t.Errorf("readyz with a covering table: %d %+v", status, rd)
	}

	frJune, _, err := vat.Rates().Standard("FR", time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	edited := rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-fix.1"
		d["rows"] = append(d["rows"].([]any), map[string]any{"country": "FR", "series": "standard", "from": "2026-06-01",
			"percent": []string{"19"}, "status": "source", "source": "https://example.invalid/made-up"})
	})
	if stdout, stderr, err := runCommand(t, nil, "vat-rates", "check", edited); err != nil ||
		!strings.Contains(stdout, "on the days it covers: 1") || !strings.Contains(stdout, "from 2026-06-01 FR standard: embedded "+frJune.String()+" %, this file 19 %") {
		t.Errorf("check of a file that changes an embedded rate: %v\n%s%s", err, stdout, stderr)
	}

	forged := rateTableFile(t, func(d map[string]any) {
		d["rows"] = append(d["rows"].([]any), map[string]any{"country": "FR", "series": "standard", "from": "2026-06-01",
			"percent": []string{"19"}, "status": "source", "source": "https://example.invalid/made-up"})
	})
	data := filepath.Join(t.TempDir(), "data")
	_, stderr, err := runCommand(t, nil, "-data", data, "-listen", "127.0.0.1:0", "-vat-rates", forged)
	if err == nil || !strings.Contains(stderr, "-vat-rates "+forged+":") || !strings.Contains(stderr, "version of its own") {
		t.Errorf("a file under the embedded version with other rows: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the refused start made %s (%v)", data, err)
	}

	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	ended := rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-ended.1"
		d["coverage"].(map[string]any)["to"] = yesterday
	})
	logs := &syncBuffer{}
	q := startServerWith(t, t.TempDir(), nil, logs, "-vat-rates", ended, "-ready-fx-max-age", "0")
	status, rd := readiness(t, q)
	var check httpserver.CheckState
	for _, c := range rd.Checks {
		if c.Name == "vat_rates" {
			check = c
		}
	}
	if status != 503 || check.OK || !strings.Contains(check.Detail, "test-ended.1") || !strings.Contains(check.Detail, yesterday) {
		t.Errorf("readyz with an ended table: %d %+v", status, rd)
	}
	if !strings.Contains(logs.String(), "after its last day") {
		t.Errorf("the start log does not say the table ended:\n%s", logs.String())
	}
}

// TestVATRatesCheckShowsStatus: a row that is unverified or depends on the
// item sends every supply of its series to review (rate_unverified,
// rate_depends_on_item), whatever percents it lists, so "vat-rates check"
// says so: a sourced 7 % turned unverified 7 % is a difference an
// operator must see as one, and an item-dependent 5.5 or 20 % is no rate
// set a supply is charged from; a rate that holds only under a legal
// condition names it.
func TestVATRatesCheckShowsStatus(t *testing.T) {
	_, embeddedTo := vat.Rates().Coverage()
	first := embeddedTo.AddDate(0, 0, 1).Format(time.DateOnly)
	inside := embeddedTo.AddDate(0, -6, 0).Format(time.DateOnly)
	de, _, err := vat.Rates().Standard("DE", embeddedTo)
	if err != nil {
		t.Fatal(err)
	}
	file := rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-status.1"
		d["coverage"].(map[string]any)["to"] = embeddedTo.AddDate(1, 0, 0).Format(time.DateOnly)
		d["rows"] = append(d["rows"].([]any),
			map[string]any{"country": "DE", "series": "standard", "from": inside, "percent": []string{de.String()}, "status": "source", "source": "https://example.invalid/restated"},
			map[string]any{"country": "DE", "series": "ebook", "from": inside, "percent": []string{"7"}, "status": "unverified", "note": "in doubt", "source": "https://example.invalid/doubt"},
			map[string]any{"country": "FR", "series": "ebook", "from": first, "percent": []string{"5.5", "20"}, "status": "item_dependent", "note": "depends", "source": "https://example.invalid/depends"},
			map[string]any{"country": "IT", "series": "ebook", "from": inside, "percent": []string{"4"}, "status": "source", "source": "https://example.invalid/no-condition"})
	})
	stdout, stderr, err := runCommand(t, nil, "vat-rates", "check", file)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, stderr)
	}
	var deLine, frLine, itLine string
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.Contains(l, "IT ebook"):
			itLine = l
		case strings.Contains(l, "DE ebook"):
			deLine = l
		case strings.Contains(l, first+" FR ebook"):
			frLine = l
		}
	}
	if !strings.Contains(deLine, "unverified") {
		t.Errorf("the DE e-book difference does not say the file's rate is unverified: %q\n%s", deLine, stdout)
	}
	if !strings.Contains(frLine, "depends on the item") {
		t.Errorf("the FR e-book change does not say the rate depends on the item: %q\n%s", frLine, stdout)
	}
	// The embedded IT e-book rate holds under a condition; the file's
	// holds without one.
	if !strings.Contains(itLine, "if it_isbn_issn") {
		t.Errorf("the IT e-book difference does not name the condition the embedded rate depends on: %q\n%s", itLine, stdout)
	}
	// The merely restated standard rate is no difference.
	if strings.Contains(stdout, "DE standard") {
		t.Errorf("a restated rate is listed as a difference:\n%s", stdout)
	}
}

// TestVATRatesFlagRedecidesWhatWaited: a settlement made while the
// server's table ended before its day is stored pending review
// (date_outside_rate_table); the README's remedy is to load a newer table
// with -vat-rates. Restarted with a table that covers the day, the server
// decides the settlement again by the rules, as a new revision (cause
// rate_table_loaded): it must not wait for a person.
func TestVATRatesFlagRedecidesWhatWaited(t *testing.T) {
	now := time.Now().UTC()
	ended := rateTableFile(t, func(d map[string]any) {
		d["version"] = "test-ended.1"
		d["coverage"].(map[string]any)["to"] = now.AddDate(0, 0, -1).Format(time.DateOnly)
	})
	// SYNTHETIC USD rates (not ECB data) for the last fortnight's weekdays,
	// so that the settlement waits for nothing but the table.
	var csv strings.Builder
	csv.WriteString("date,usd_per_eur\n")
	for d := now.AddDate(0, 0, -14); !d.After(now); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			csv.WriteString(d.Format(time.DateOnly) + ",1.1500\n")
		}
	}
	fxFile := filepath.Join(t.TempDir(), "rates.csv")
	if err := os.WriteFile(fxFile, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startServer(t, dir, "-vat-rates", ended, "-fx-file", fxFile)
	body := `{"amountUsdc":"11.90","txHash":"0x5b2e4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a3c5e7b9d2f4a6c8e0b1d3f5a7c9e2b","timestamp":"` +
		now.Add(-time.Minute).Format(time.RFC3339) + `",` +
		`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",` +
		`"network":"eip155:8453","consumerCountry":"DE"}`
	status, _, raw := p.request(t, "POST", "/settlements", []byte(body), "X-Service-Key", demoKey)
	if status != 201 {
		t.Fatalf("settle: %d %s", status, raw)
	}
	type reason struct {
		Code string `json:"code"`
	}
	var rec struct {
		ID            string   `json:"id"`
		ReviewStatus  string   `json:"reviewStatus"`
		ReviewReasons []reason `json:"reviewReasons"`
		Revision      int      `json:"revision"`
		History       []struct {
			Cause     string `json:"cause"`
			EventType string `json:"eventType"`
		} `json:"history"`
		Classification struct {
			RateSource *struct {
				Table string `json:"table"`
			} `json:"rateSource"`
		} `json:"classification"`
		Invoice *struct {
			ID string `json:"id"`
		} `json:"invoice"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ReviewStatus != "PENDING_MANUAL_REVIEW" || !slices.Contains(rec.ReviewReasons, reason{vat.ReasonDateOutsideRateTable}) {
		t.Fatalf("with the ended table: %s %+v", rec.ReviewStatus, rec.ReviewReasons)
	}
	p.stop(t)

	p = startServer(t, dir, "-vat-rates", coveringRateTable(t), "-fx-file", fxFile)
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _, raw = p.request(t, "GET", "/settlements/"+rec.ID, nil, "X-Service-Key", demoKey)
		if status != 200 {
			t.Fatalf("read: %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Revision >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rec.Revision != 2 || rec.ReviewStatus != "PROCESSED" || rec.Invoice == nil || rec.Classification.RateSource == nil || rec.Classification.RateSource.Table != "test-covering.1" ||
		len(rec.History) != 2 || rec.History[1].Cause != "rate_table_loaded" || rec.History[1].EventType != "settlement.processed" {
		t.Fatalf("with a covering table: revision %d %s %+v, history %+v: the settlement still waits", rec.Revision, rec.ReviewStatus, rec.ReviewReasons, rec.History)
	}
}
