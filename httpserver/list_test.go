package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/httpserver"
)

// listedRecord is what the list test knows about each record it made,
// independently of the server.
type listedRecord struct {
	id        string
	created   time.Time
	settled   time.Time
	status    string // reviewStatus
	country   string // taxing country; "" when pending for want of a country
	otherAcct bool
}

// TestListSettlements makes records at different times and checks every
// filter and the pagination against the expected ids, computed here from
// what was posted.
func TestListSettlements(t *testing.T) {
	clock := &testClock{now: testNow}
	f := newCustomFixture(t, customSettings{clock: clock})
	var made []listedRecord
	countries := []string{"DE", "FR", "", "DE", "IT", "FR", "", "DE", "AT", "DE", "FR"}
	for i, cc := range countries {
		created := testNow.Add(time.Duration(i) * time.Hour)
		settled := time.Date(2026, 4, 1+i, 9, 0, 0, 0, time.UTC)
		clock.Set(created)
		key, other := keyA, i%4 == 3 // every fourth record belongs to account B
		if other {
			key = keyB
		}
		body := settlement(map[string]any{"txHash": txHash(100 + i), "timestamp": settled.Format(time.RFC3339), "consumerCountry": cc})
		if cc == "" {
			delete(body, "consumerCountry")
		}
		resp := f.do("POST", "/settlements", key, mustJSON(t, body))
		if resp.status != 201 {
			t.Fatalf("settle %d: %d %s", i, resp.status, resp.body)
		}
		status := "PROCESSED"
		if cc == "" {
			status = "PENDING_MANUAL_REVIEW"
		}
		made = append(made, listedRecord{id: resp.json(t)["id"].(string), created: created, settled: settled, status: status, country: cc, otherAcct: other})
	}
	// Two records in the same nanosecond: ties are broken by id, both listed.
	clock.Set(testNow.Add(20 * time.Hour))
	for i := 0; i < 2; i++ {
		resp := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(300 + i)})))
		if resp.status != 201 {
			t.Fatal(resp.status)
		}
		made = append(made, listedRecord{id: resp.json(t)["id"].(string), created: testNow.Add(20 * time.Hour), settled: time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC), status: "PROCESSED", country: "DE"})
	}
	// A fiscal event is not a settlement.
	if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(nil))); r.status != 201 {
		t.Fatal(r.status)
	}

	want := func(keep func(listedRecord) bool) []string {
		var rs []listedRecord
		for _, r := range made {
			if !r.otherAcct && keep(r) {
				rs = append(rs, r)
			}
		}
		slices.SortFunc(rs, func(a, b listedRecord) int {
			if c := b.created.Compare(a.created); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
		ids := []string{}
		for _, r := range rs {
			ids = append(ids, r.id)
		}
		return ids
	}
	all := func(listedRecord) bool { return true }
	at := func(h int) time.Time { return testNow.Add(time.Duration(h) * time.Hour) }
	cases := []struct {
		name  string
		query string
		want  []string
	}{
		{"everything, newest first", "", want(all)},
		{"pending review", "reviewStatus=PENDING_MANUAL_REVIEW", want(func(r listedRecord) bool { return r.status == "PENDING_MANUAL_REVIEW" })},
		{"processed", "reviewStatus=PROCESSED", want(func(r listedRecord) bool { return r.status == "PROCESSED" })},
		{"taxed in France", "taxingCountry=FR", want(func(r listedRecord) bool { return r.country == "FR" })},
		{"taxing country in lower case", "taxingCountry=de", want(func(r listedRecord) bool { return r.country == "DE" })},
		{"created from an instant", "from=" + url.QueryEscape(at(5).Format(time.RFC3339)), want(func(r listedRecord) bool { return !r.created.Before(at(5)) })},
		{"created up to an instant, inclusive", "to=" + url.QueryEscape(at(4).Format(time.RFC3339)), want(func(r listedRecord) bool { return !r.created.After(at(4)) })},
		{"created in a window with an offset", "from=" + url.QueryEscape(at(2).In(time.FixedZone("CEST", 2*3600)).Format(time.RFC3339)) + "&to=" + url.QueryEscape(at(6).Format(time.RFC3339)),
			want(func(r listedRecord) bool { return !r.created.Before(at(2)) && !r.created.After(at(6)) })},
		{"created on a day", "from=2026-11-22&to=2026-11-22", want(func(r listedRecord) bool { return r.created.Format(time.DateOnly) == "2026-11-22" })},
		{"settled in a window of days", "settledFrom=2026-04-03&settledTo=2026-04-07", want(func(r listedRecord) bool {
			return !r.settled.Before(time.Date(2026, 4, 3, 0, 0, 0, 0, time.UTC)) && r.settled.Before(time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC))
		})},
		{"filters combined", "reviewStatus=PROCESSED&taxingCountry=DE&settledTo=2026-04-09", want(func(r listedRecord) bool {
			return r.status == "PROCESSED" && r.country == "DE" && r.settled.Before(time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
		})},
		{"nothing matches", "taxingCountry=PL", want(func(listedRecord) bool { return false })},
		{"a window before every record", "to=2026-01-01", want(func(listedRecord) bool { return false })},
	}
	for _, tc := range cases {
		for _, limit := range []int{0, 1, 2, 3, 200} {
			t.Run(fmt.Sprintf("%s/limit=%d", tc.name, limit), func(t *testing.T) {
				q := tc.query
				if limit > 0 {
					q += fmt.Sprintf("&limit=%d", limit)
				}
				got, pages := listAll(t, f, "/settlements", keyA, q)
				if !slices.Equal(got, tc.want) {
					t.Fatalf("got  %v\nwant %v", got, tc.want)
				}
				if limit > 0 && len(tc.want) > 0 {
					if wantPages := (len(tc.want) + limit - 1) / limit; pages != wantPages {
						t.Errorf("%d pages, want %d: has_more must be false exactly on the last page", pages, wantPages)
					}
				}
			})
		}
	}
	// Account B sees its own records only.
	gotB, _ := listAll(t, f, "/settlements", keyB, "")
	var wantB []string
	for i := len(made) - 1; i >= 0; i-- {
		if made[i].otherAcct {
			wantB = append(wantB, made[i].id)
		}
	}
	if !slices.Equal(gotB, wantB) {
		t.Errorf("account B: %v, want %v", gotB, wantB)
	}
	// Each item is the record exactly as GET /settlements/{id} serves it.
	p := decodePage(t, f.do("GET", "/settlements?limit=1", keyA, nil))
	var one struct{ ID string }
	_ = json.Unmarshal(p.Data[0], &one)
	if got := f.do("GET", "/settlements/"+one.ID, keyA, nil); strings.TrimSpace(string(got.body)) != string(p.Data[0]) {
		t.Errorf("listed record differs from GET /settlements/%s", one.ID)
	}
	// A record created after the first page does not shift the pages.
	first := decodePage(t, f.do("GET", "/settlements?limit=2", keyA, nil))
	clock.Set(testNow.Add(48 * time.Hour))
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(400)}))); r.status != 201 {
		t.Fatal(r.status)
	}
	second := decodePage(t, f.do("GET", "/settlements?limit=2&cursor="+first.NextCursor, keyA, nil))
	if ids := pageIDs(t, second); !slices.Equal(ids, want(all)[2:4]) {
		t.Errorf("second page after a new record: %v, want %v", ids, want(all)[2:4])
	}
}

// listAll follows next_cursor from the first page to the last and returns
// the ids in order and the number of pages.
func listAll(t *testing.T, f *fixture, path, key, query string) ([]string, int) {
	t.Helper()
	ids := []string{}
	cursor := ""
	for pages := 1; ; pages++ {
		q := query
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		p := decodePage(t, f.do("GET", path+"?"+strings.TrimPrefix(q, "&"), key, nil))
		ids = append(ids, pageIDs(t, p)...)
		if !p.HasMore {
			return ids, pages
		}
		if len(p.Data) == 0 {
			t.Fatalf("an empty page with has_more")
		}
		cursor = p.NextCursor
		if pages > 100 {
			t.Fatal("too many pages")
		}
	}
}

func pageIDs(t *testing.T, p pageView) []string {
	t.Helper()
	var ids []string
	for _, raw := range p.Data {
		var r struct{ ID string }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// TestListBadInput: every malformed query names its parameter.
func TestListBadInput(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, path, key, query string
		status                 int
		code, field            string
	}{
		{"no key", "/settlements", "", "", 401, "AUTHENTICATION_FAILED", ""},
		{"wrong key", "/settlements", "sk_wrong", "", 401, "AUTHENTICATION_FAILED", ""},
		{"limit zero", "/settlements", keyA, "limit=0", 400, "BAD_REQUEST", "limit"},
		{"limit over the maximum", "/settlements", keyA, "limit=201", 400, "BAD_REQUEST", "limit"},
		{"limit not a number", "/settlements", keyA, "limit=ten", 400, "BAD_REQUEST", "limit"},
		{"limit with a leading zero", "/settlements", keyA, "limit=01", 400, "BAD_REQUEST", "limit"},
		{"limit with a sign", "/settlements", keyA, "limit=%2B5", 400, "BAD_REQUEST", "limit"},
		{"fiscal events limit with a leading zero", "/v1/fiscal-events", keyA, "limit=010", 400, "BAD_REQUEST", "limit"},
		{"events limit with a leading zero", "/v1/events", keyA, "limit=01", 400, "BAD_REQUEST", "limit"},
		{"events limit with a sign", "/v1/events", keyA, "limit=%2B1", 400, "BAD_REQUEST", "limit"},
		{"cursor not issued by the service", "/settlements", keyA, "cursor=abc", 400, "BAD_REQUEST", "cursor"},
		{"cursor of another version", "/settlements", keyA, "cursor=AgAAAAAAAAAA", 400, "BAD_REQUEST", "cursor"},
		{"from not a date", "/settlements", keyA, "from=yesterday", 400, "BAD_REQUEST", "from"},
		{"to with a space for +", "/settlements", keyA, "to=2026-04-10T00:00:00%2002:00", 400, "BAD_REQUEST", "to"},
		{"to before from", "/settlements", keyA, "from=2026-04-10&to=2026-04-09", 400, "BAD_REQUEST", "to"},
		{"settledTo before settledFrom", "/settlements", keyA, "settledFrom=2026-04-10&settledTo=2026-04-09", 400, "BAD_REQUEST", "settledTo"},
		{"year out of range", "/settlements", keyA, "from=1900-01-01", 400, "BAD_REQUEST", "from"},
		{"from with a decimal comma", "/settlements", keyA, "from=2026-04-10T12:00:00,5Z", 400, "BAD_REQUEST", "from"},
		{"to with ten fractional digits", "/settlements", keyA, "to=2026-04-10T12:00:00.0000000001Z", 400, "BAD_REQUEST", "to"},
		{"settledFrom with a decimal comma", "/v1/fiscal-events", keyA, "settledFrom=2026-04-10T12:00:00,5Z", 400, "BAD_REQUEST", "settledFrom"},
		{"review status unknown", "/settlements", keyA, "reviewStatus=DONE", 400, "BAD_REQUEST", "reviewStatus"},
		{"status is for fiscal events", "/settlements", keyA, "status=DETERMINED", 400, "BAD_REQUEST", "status"},
		{"reviewStatus is for settlements", "/v1/fiscal-events", keyA, "reviewStatus=PROCESSED", 400, "BAD_REQUEST", "reviewStatus"},
		{"fiscal event status unknown", "/v1/fiscal-events", keyA, "status=PROCESSED", 400, "BAD_REQUEST", "status"},
		{"taxing country not ISO", "/settlements", keyA, "taxingCountry=Germany", 400, "BAD_REQUEST", "taxingCountry"},
		{"misspelt parameter", "/settlements", keyA, "reviewstatus=PROCESSED", 400, "BAD_REQUEST", "reviewstatus"},
		{"repeated parameter", "/settlements", keyA, "limit=1&limit=2", 400, "BAD_REQUEST", "limit"},
		{"fiscal events without a key", "/v1/fiscal-events", "", "", 401, "AUTHENTICATION_FAILED", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertProblem(t, f.do("GET", tc.path+"?"+tc.query, tc.key, nil), tc.status, tc.code, tc.field)
		})
	}
}

// TestListFiscalEvents filters fiscal events by determination status and
// taxing country. The clock is fixed, so every event has the same createdAt
// and the order is by descending id.
func TestListFiscalEvents(t *testing.T) {
	f := newFixture(t)
	bodies := []map[string]any{
		fiscalEventBody(map[string]any{"payment.txHash": txHash(1)}),
		fiscalEventBody(map[string]any{"payment.txHash": txHash(2), "buyer.country": "FR"}),
		fiscalEventBody(map[string]any{"payment.txHash": txHash(3), "buyer.country": nil}),
		fiscalEventBody(map[string]any{"payment.txHash": txHash(4), "buyer.country": "FR", "supply.kind": "consulting"}),
	}
	for _, b := range bodies {
		if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, b)); r.status != 201 {
			t.Fatal(r.status, string(r.body))
		}
	}
	ids := func(keep ...int) []string {
		out := []string{}
		for _, k := range keep {
			out = append(out, f.engine.RecordID("eip155:8453", txHash(k+1)))
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", ids(0, 1, 2, 3)},
		{"status=DETERMINED", ids(0, 1)},
		{"status=MANUAL_REVIEW_REQUIRED", ids(2, 3)},
		{"taxingCountry=FR", ids(1)},
		{"limit=1", ids(0, 1, 2, 3)},
		{"limit=1&status=DETERMINED", ids(0, 1)},
		{"settledFrom=2026-04-11", ids()},
	}
	for _, tc := range cases {
		got, _ := listAll(t, f, "/v1/fiscal-events", keyA, tc.query)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
	}
	if got, _ := listAll(t, f, "/v1/fiscal-events", keyB, ""); len(got) != 0 {
		t.Errorf("account B lists A's events: %v", got)
	}
}

// TestEveryRouteRefusesUnknownParameters: every route of the API, GET or
// not, not only the listings, answers an unknown query parameter with the listings'
// 400 BAD_REQUEST naming it, so that a misspelt parameter is never
// silently ignored (POST /settlements?dryRun=true must not record a
// settlement). The routes are the server's own table, so a new route is
// covered without touching this test.
func TestEveryRouteRefusesUnknownParameters(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	ops := []string{"GET /healthz", "GET /readyz", "GET /metrics", "GET /v1/admin/backup"} // not in the OpenAPI table
	for _, key := range append(httpserver.RouteKeys(f.handler), ops...) {
		method, pattern, _ := strings.Cut(key, " ")
		if key == "GET /verify" {
			continue // a page for people: below
		}
		path := pathParam.ReplaceAllString(pattern, "x")
		t.Run(key, func(t *testing.T) {
			r := f.fixture.do(method, path+"?colour=red", keyA, nil, "Authorization", "Bearer "+operatorKey)
			assertProblem(t, r, 400, "BAD_REQUEST", "colour")
			if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, `unknown query parameter "colour"`) {
				t.Errorf("the detail does not name the parameter: %s", r.body)
			}
		})
	}
	// The verification page is for people, whose links carry parameters
	// the page does not read (a cache-buster, a campaign's utm_source):
	// it is served whatever they are (TestVerifyPageInBrowser opens it as
	// /verify?case=n); its script reads ?id=.
	for _, q := range []string{"?id=rcpt_x", "?case=2", "?utm_source=mail&id=rcpt_x"} {
		if r := f.fixture.do("GET", "/verify"+q, "", nil); r.status != 200 {
			t.Errorf("GET /verify%s: %d %s", q, r.status, r.body)
		}
	}
}

// pathParam is a {name} segment of a route pattern.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)
