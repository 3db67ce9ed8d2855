package fx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFetch(t *testing.T) {
	body := dailyXML("2026-04-14", "USD", "1.1702", "JPY", "187.5")
	var gotAccept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/daily.xml":
			gotAccept = r.Header.Get("Accept")
			w.Header().Set("Content-Type", "text/xml")
			_, _ = w.Write([]byte(body))
		case "/broken.xml":
			_, _ = w.Write([]byte("<gesmes:Envelope xmlns:gesmes='" + nsGesmes + "'>\n<Cube xmlns='" + nsEurofxref + "'>\n<Cube time='2026-13-01'/>"))
		case "/slow.xml":
			<-r.Context().Done()
		default:
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	tb, err := Fetch(ctx, srv.Client(), srv.URL+"/daily.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gotAccept, "xml") {
		t.Errorf("Accept = %q", gotAccept)
	}
	sum := sha256.Sum256([]byte(body))
	r, err := tb.Lookup("USD", noon(t, "2026-04-14"), ForDayOrPrevious)
	if err != nil || r.Raw != "1.1702" || r.Snapshot != "fetch:sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("fetched rate %+v, %v", r, err)
	}

	_, err = Fetch(ctx, srv.Client(), srv.URL+"/gone.xml")
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("503: err = %v", err)
	}

	_, err = Fetch(ctx, srv.Client(), srv.URL+"/broken.xml")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Name != srv.URL+"/broken.xml" {
		t.Errorf("broken feed: err = %v", err)
	}

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := Fetch(cctx, srv.Client(), srv.URL+"/slow.xml"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v", err)
	}
	if _, err := Fetch(ctx, nil, "http://[::1]:namedport/x"); err == nil {
		t.Error("bad URL accepted")
	}
}

// TestLiveTable: an updater merges while lookups run (run with -race).
func TestLiveTable(t *testing.T) {
	live := NewLiveTable(embedded(t))
	var src Source = live
	ctx := context.Background()
	if _, err := src.Rate(ctx, "USD", noon(t, "2026-04-14"), ForDayOrPrevious); !errors.Is(err, ErrNotYetPublished) {
		t.Fatalf("before the update: err = %v", err)
	}
	days := []struct{ date, raw string }{
		{"2026-04-14", "1.1690"}, {"2026-04-15", "1.1701"}, {"2026-04-16", "1.1688"}, {"2026-04-17", "1.165"},
	}
	monday := noon(t, "2026-04-13")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := src.Rate(ctx, "USD", monday, ForDayOrPrevious)
				if err != nil || r.Raw != "1.1684" {
					t.Errorf("concurrent lookup: %+v, %v", r, err)
					return
				}
			}
		}()
	}
	for _, d := range days {
		if _, err := live.Merge(xmlTable(t, "fetch:"+d.date, dailyXML(d.date, "USD", d.raw))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	r, err := src.Rate(ctx, "USD", noon(t, "2026-04-19"), ForDayOrPrevious)
	if err != nil || r.RateDate != "2026-04-17" || r.Snapshot != "fetch:2026-04-17" {
		t.Errorf("after the updates: %+v, %v", r, err)
	}
	if cov := live.Table().Coverage(); len(cov) != 1 || cov[0].Last != "2026-04-17" {
		t.Errorf("Coverage = %v", cov)
	}
	// A contradicting feed changes nothing.
	before := live.Table()
	_, err = live.Merge(xmlTable(t, "fetch:bad", dailyXML("2026-04-17", "USD", "1.2")))
	if !errors.Is(err, ErrConflict) || live.Table() != before {
		t.Errorf("conflicting merge: err = %v, table replaced: %v", err, live.Table() != before)
	}
	var zero LiveTable
	if _, err := zero.Rate(ctx, "USD", noon(t, "2026-04-13"), ForDayOrPrevious); err == nil {
		t.Error("zero LiveTable answered")
	}
}
