package httpserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestListBoundYearOne: a date bound outside the years 1970 to 2200 is a
// 400 naming the parameter, whichever the bound. The first instant of year
// 1 (0001-01-01, 0001-01-01T00:00:00Z) is Go's zero time, which checkYear
// took for "no bound": it was answered 200 with the unfiltered list, while
// 0001-01-02 and 9999-12-31 were refused.
func TestListBoundYearOne(t *testing.T) {
	f := newFixture(t)
	for _, q := range []string{"from=0001-01-01", "settledFrom=0001-01-01T00:00:00Z", "from=0001-01-02", "to=9999-12-31"} {
		field, _, _ := strings.Cut(q, "=")
		for _, path := range []string{"/settlements?", "/v1/fiscal-events?"} {
			r := f.do("GET", path+q, keyA, nil)
			if r.status != http.StatusBadRequest || r.json(t)["field"] != field {
				t.Errorf("%s%s: %d %s, want 400 at %s", path, q, r.status, r.body, field)
			}
		}
	}
}
