package fx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/shopspring/decimal"
)

func ExampleEmbedded() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	first, last := rates.Range()
	fmt.Println(first, last, rates.Len(), rates.Quotes())
	// Output: 1999-01-04 2026-04-13 6983 [USD]
}

// A settlement on Saturday 11 April 2026 takes Friday's rate for the
// invoice; the OSS return for a period ending that day takes Monday's.
func ExampleTable_Lookup() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	settled := time.Date(2026, 4, 11, 9, 30, 0, 0, time.UTC)
	for _, p := range []fx.Policy{fx.ForDayOrPrevious, fx.PeriodEndOrNext} {
		r, err := rates.Lookup("USD", settled, p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Policy, r.RateDate, r.Raw)
	}
	// Output:
	// for-day-or-previous 2026-04-10 1.1711
	// period-end-or-next 2026-04-13 1.1684
}

// At 15:00 in Frankfurt on 13 April the day's rate is not yet out.
func ExampleTable_Lookup_latestPublishedAt() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	for _, at := range []string{"2026-04-13T15:00:00+02:00", "2026-04-13T16:00:00+02:00"} {
		t, _ := time.Parse(time.RFC3339, at)
		r, err := rates.Lookup("USD", t, fx.LatestPublishedAt)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Requested, r.RateDate, r.Raw)
	}
	// Output:
	// 2026-04-13T13:00:00Z 2026-04-10 1.1711
	// 2026-04-13T14:00:00Z 2026-04-13 1.1684
}

// A settlement after the last known publication is not converted with an
// older rate: the engine marks it for manual review.
func ExampleTable_Lookup_notYetPublished() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	_, err = rates.Lookup("USD", time.Date(2026, 4, 14, 10, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	if errors.Is(err, fx.ErrNotYetPublished) {
		fmt.Println("PENDING_MANUAL_REVIEW fx_rate_unavailable")
	}
	fmt.Println(err)
	// Output:
	// PENDING_MANUAL_REVIEW fx_rate_unavailable
	// fx: rate not yet published: USD for 2026-04-14: the table ends at 2026-04-13 and 2026-04-14 is a TARGET business day
}

func ExampleConvertUSDC() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	amount, err := fx.ParseUSDC("100")
	if err != nil {
		log.Fatal(err)
	}
	r, err := rates.Lookup("USD", time.Date(2026, 4, 13, 18, 5, 0, 0, time.UTC), fx.ForDayOrPrevious)
	if err != nil {
		log.Fatal(err)
	}
	conv := fx.ConvertUSDC(amount, r)
	fmt.Println(conv.AmountUSDC, "USDC =", conv.GrossEURString, "EUR at", conv.USDPerEUR.Raw, "USD/EUR of", conv.USDPerEUR.RateDate)
	b, _ := json.Marshal(conv.USDCUSD)
	fmt.Println(string(b))
	// Output:
	// 100 USDC = 85.59 EUR at 1.1684 USD/EUR of 2026-04-13
	// {"rate":"1","source":"peg","note":"1 USDC = 1 USD assumed (issuer redemption peg)"}
}

// Newer publications are merged onto the embedded snapshot; a value that
// contradicts a published one is refused.
func ExampleTable_Merge() {
	base, err := fx.ParseCSV(strings.NewReader("date,usd_per_eur\n2026-04-09,1.1685\n2026-04-10,1.1711\n"), "file:example")
	if err != nil {
		log.Fatal(err)
	}
	daily, err := fx.ParseXML(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<Cube>
		<Cube time='2026-04-13'>
			<Cube currency='USD' rate='1.1684'/>
		</Cube>
	</Cube>
</gesmes:Envelope>`), "fetch:example")
	if err != nil {
		log.Fatal(err)
	}
	merged, err := base.Merge(daily)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(merged.Range())
	fmt.Println(merged.Coverage())

	wrong, _ := fx.ParseCSV(strings.NewReader("date,usd_per_eur\n2026-04-10,1.1712\n"), "file:wrong")
	_, err = merged.Merge(wrong)
	fmt.Println(err)
	// Output:
	// 2026-04-09 2026-04-13
	// [{2026-04-09 2026-04-10} {2026-04-13 2026-04-13}]
	// fx: conflicting publications for USD on 2026-04-10: base "1.1711", overlay "1.1712"
}

// An operator's -fx-file: the snapshot names the file's SHA-256.
func ExampleLoadFile() {
	dir, err := os.MkdirTemp("", "fx-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "eurofxref-hist.csv")
	if err := os.WriteFile(path, []byte("Date,USD,JPY,\n2026-04-13,1.1684,N/A,\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	rates, err := fx.LoadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	r, err := rates.Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Raw, r.Snapshot[:len("file:sha256:")+8])
	// Output: 1.1684 file:sha256:113c9d26
}

// An updater fetches the ECB's daily feed (here a stand-in server) and
// extends the table the engine reads.
func ExampleFetch() {
	ecb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<Cube><Cube time='2026-04-13'><Cube currency='USD' rate='1.1684'/></Cube></Cube>
</gesmes:Envelope>`)
	}))
	defer ecb.Close()

	base, _ := fx.ParseCSV(strings.NewReader("date,usd_per_eur\n2026-04-10,1.1711\n"), "file:example")
	live := fx.NewLiveTable(base)
	daily, err := fx.Fetch(context.Background(), ecb.Client(), ecb.URL) // fx.URLDaily in production
	if err != nil {
		log.Fatal(err)
	}
	if _, err := live.Merge(daily); err != nil {
		log.Fatal(err)
	}
	r, err := live.Rate(context.Background(), "USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.RateDate, r.Raw)
	// Output: 2026-04-13 1.1684
}

func ExampleRoundEUR() {
	for _, s := range []string{"0.125", "-0.125", "85.5871276959945224"} {
		fmt.Println(fx.RoundEUR(decimal.RequireFromString(s)).StringFixed(2))
	}
	// Output:
	// 0.13
	// -0.13
	// 85.59
}

// The exact figures of one settlement: the gross kept at 12 decimals, split
// into net and VAT without loss, rounded once for display.
func ExampleSplitGross() {
	rates, err := fx.Embedded()
	if err != nil {
		log.Fatal(err)
	}
	paid := time.Date(2026, 4, 13, 17, 0, 0, 0, time.UTC) // 19:00 in Frankfurt
	r, err := rates.Lookup("USD", paid, fx.LatestPublishedAt)
	if err != nil {
		log.Fatal(err)
	}
	conv := fx.ConvertUSDCExact(decimal.RequireFromString("100"), r)
	net, vat := fx.SplitGross(conv.GrossEURExact, decimal.RequireFromString("19"))
	fmt.Println(r.RateDate, r.PublishedFrom)
	fmt.Println(conv.GrossEURString, conv.GrossEURExactString)
	fmt.Println(net, vat, fx.RoundEUR(net).StringFixed(2), fx.RoundEUR(vat).StringFixed(2))
	// Output:
	// 2026-04-13 2026-04-13T14:00:00Z
	// 85.59 85.587127695995
	// 71.921956047055 13.66517164894 71.92 13.67
}

// VAT taxed in Poland is also stated in złoty at the ECB rate of the day
// before the tax point (art. 31a ust. 2 ustawy o VAT). The feed here is a
// SYNTHETIC stand-in, not ECB data.
func ExampleConvertEURToNational() {
	feed, err := fx.ParseXML(strings.NewReader(`<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<Cube><Cube time='2026-04-13'><Cube currency='PLN' rate='4.2689'/></Cube></Cube>
</gesmes:Envelope>`), "fetch:synthetic-example")
	if err != nil {
		log.Fatal(err)
	}
	rates, _ := fx.Embedded()
	rates, err = rates.Merge(feed)
	if err != nil {
		log.Fatal(err)
	}
	paid := time.Date(2026, 4, 14, 10, 0, 0, 0, time.UTC)
	pl, ok, err := fx.NationalCurrencyFor("PL", paid)
	if err != nil || !ok {
		log.Fatal(ok, err)
	}
	n, err := fx.ConvertEURToNational(context.Background(), rates, decimal.RequireFromString("13.66517164894"), pl, paid, fx.LatestPublishedAt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.Currency, n.AmountStr, "at", n.Rate.Raw, "of", n.Rate.RateDate, "rule", n.Rule.ID)

	gb, _, _ := fx.NationalCurrencyFor("GB", paid)
	_, err = fx.ConvertEURToNational(context.Background(), rates, decimal.RequireFromString("1"), gb, paid, fx.LatestPublishedAt)
	fmt.Println(errors.Is(err, fx.ErrNationalRateRequired))
	_, euro, _ := fx.NationalCurrencyFor("BG", paid)
	fmt.Println("BG needs a second currency in 2026:", euro)
	// Output:
	// PLN 58.34 at 4.2689 of 2026-04-13 rule pl-vat-31a-2-ecb
	// true
	// BG needs a second currency in 2026: false
}

// fixedClock is a Clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// A Refresher fetches the day's publication after 16:00 Frankfurt time,
// keeps the document in its Store and tells the engine. The server is a
// SYNTHETIC stand-in for the ECB.
func ExampleRefresher() {
	ecb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<Cube><Cube time='2026-04-14'><Cube currency='USD' rate='1.17'/><Cube currency='PLN' rate='4.27'/></Cube></Cube>
</gesmes:Envelope>`)
	}))
	defer ecb.Close()
	base, _ := fx.Embedded()
	live := fx.NewLiveTable(base)
	store := &fx.MemoryStore{} // the engine stores in its ledger
	ref, err := fx.NewRefresher(fx.RefresherConfig{
		Live:   live,
		Store:  store,
		Client: ecb.Client(),
		Feeds:  fx.Feeds{Daily: ecb.URL + "/daily.xml", Hist90d: ecb.URL + "/hist-90d.xml"},
		Clock:  fixedClock{time.Date(2026, 4, 14, 16, 30, 0, 0, time.FixedZone("CEST", 2*3600))},
		Logger: slog.New(slog.DiscardHandler),
		OnUpdate: func(_ context.Context, t *fx.Table) {
			_, last := t.Range()
			fmt.Println("re-process pending records; rates up to", last)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := ref.Restore(ctx); err != nil { // before serving: works offline
		log.Fatal(err)
	}
	next, err := ref.RunOnce(ctx) // Run(ctx) loops on this
	if err != nil {
		log.Fatal(err)
	}
	st := ref.Status()
	fmt.Println(st.Newest, st.Age, st.Behind, next.UTC().Format(time.RFC3339))
	// Output:
	// re-process pending records; rates up to 2026-04-14
	// 2026-04-14 30m0s false 2026-04-15T14:10:00Z
}
