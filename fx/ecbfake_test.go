package fx

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// SYNTHETIC test data. Nothing below is ECB data: the rates are invented by
// synthRate so that tests can serve multi-currency feeds offline (no
// multi-currency ECB history is committed; fx/data holds the USD series
// only). Every synthetic value has a fifth or sixth significant digit that
// the formula makes, so none can be mistaken for a real publication.

// synthBase is the starting point of each synthetic series.
var synthBase = map[string]string{
	"USD": "1.17", "BGN": "1.9558", "CZK": "24.3", "DKK": "7.46", "GBP": "0.86",
	"HUF": "390.5", "PLN": "4.26", "RON": "5.08", "SEK": "10.9", "JPY": "187.2",
}

var synthCurrencies = []string{"BGN", "CZK", "DKK", "GBP", "HUF", "JPY", "PLN", "RON", "SEK", "USD"}

// synthRate is the synthetic rate of cur on date: the base plus a few
// ten-thousandths that depend on the day, written as the ECB writes rates
// (no trailing zeros).
func synthRate(cur, date string) string {
	d, ok := parseISODate(date)
	if !ok {
		panic(date)
	}
	base := dec(synthBase[cur])
	v := base.Add(dec(fmt.Sprintf("0.00%02d", int64(d)%97)))
	return canonicalDecimal(v)
}

// businessDays lists the TARGET business days from first to last.
func businessDays(first, last string) []string {
	a, _ := parseISODate(first)
	b, _ := parseISODate(last)
	var out []string
	for d := a; d <= b; d++ {
		if !targetClosingDay(d) {
			out = append(out, d.String())
		}
	}
	return out
}

// synthFeed is an ECB-shaped XML feed (newest first, like the ECB's) of the
// given dates. USD appears only on dates after the embedded series ends
// (2026-04-13), so merging onto Embedded never contradicts real data; an
// entry in override replaces a synthetic value ("date/CUR" → raw).
func synthFeed(dates []string, override map[string]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- SYNTHETIC test feed: not ECB data -->
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>SYNTHETIC test server</gesmes:name></gesmes:Sender>
	<Cube>
`)
	ds := slices.Clone(dates)
	slices.Sort(ds)
	slices.Reverse(ds)
	for _, date := range ds {
		fmt.Fprintf(&b, "\t\t<Cube time='%s'>\n", date)
		for _, cur := range synthCurrencies {
			if cur == "USD" && date <= "2026-04-13" {
				continue
			}
			if cur == "BGN" && date >= "2026-01-01" {
				continue // the ECB stopped quoting the lev when Bulgaria adopted the euro
			}
			raw := synthRate(cur, date)
			if o, ok := override[date+"/"+cur]; ok {
				raw = o
			}
			fmt.Fprintf(&b, "\t\t\t<Cube currency='%s' rate='%s'/>\n", cur, raw)
		}
		b.WriteString("\t\t</Cube>\n")
	}
	b.WriteString("\t</Cube>\n</gesmes:Envelope>\n")
	return b.String()
}

// fakeECB is an httptest stand-in for www.ecb.europa.eu/stats/eurofxref:
// /daily.xml, /hist-90d.xml (the last 64 publications) and /hist.xml. The
// test decides what has been published, how many requests fail first and
// which values contradict earlier ones.
type fakeECB struct {
	mu        sync.Mutex
	published []string          // ascending reference dates
	override  map[string]string // "date/CUR" → raw
	failNext  int               // answer this many requests with 503
	failCode  int               // the status of those answers (0: 503)
	header    http.Header       // sent with those answers (Retry-After, Date)
	down      bool              // refuse every request
	gone      map[string]bool   // paths answered 404 Not Found
	requests  []string          // paths asked, in order
	srv       *httptest.Server
}

func newFakeECB(t *testing.T, published ...string) *fakeECB {
	f := &fakeECB{published: published, override: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeECB) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.URL.Path)
	if f.down {
		http.Error(w, "down", http.StatusBadGateway)
		return
	}
	if f.gone[r.URL.Path] {
		http.NotFound(w, r)
		return
	}
	if f.failNext > 0 {
		f.failNext--
		for k, v := range f.header {
			w.Header()[k] = v
		}
		http.Error(w, "try later", cmp.Or(f.failCode, http.StatusServiceUnavailable))
		return
	}
	var dates []string
	switch r.URL.Path {
	case "/daily.xml":
		if n := len(f.published); n > 0 {
			dates = f.published[n-1:]
		}
	case "/hist-90d.xml":
		dates = f.published[max(0, len(f.published)-64):]
	case "/hist.xml":
		dates = f.published
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(synthFeed(dates, f.override)))
}

func (f *fakeECB) publish(dates ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, dates...)
}

func (f *fakeECB) set(fn func(*fakeECB)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeECB) paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeECB) feeds() Feeds {
	return Feeds{Daily: f.srv.URL + "/daily.xml", Hist90d: f.srv.URL + "/hist-90d.xml", Hist: f.srv.URL + "/hist.xml"}
}
