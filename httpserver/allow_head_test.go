package httpserver_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAllowListsHEADWhereGETIs: every route served with GET also answers
// HEAD (net/http's ServeMux matches HEAD to a GET pattern, and RFC 9110
// section 9.3.2 has HEAD answer as GET does without the content), so the
// Allow header of a 405 on that path lists HEAD too: RFC 9110 section
// 10.2.1, Allow "lists the set of methods advertised as supported by the
// target resource" (net/http's own 405 adds HEAD for GET in the same way).
// A path without GET neither answers nor lists HEAD.
func TestAllowListsHEADWhereGETIs(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		path  string
		allow []string
	}{
		{"/settlements", []string{"POST", "GET", "HEAD"}},
		{"/v1/capabilities", []string{"GET", "HEAD"}},
		{"/v1/webhook-endpoints/we_x", []string{"GET", "HEAD", "DELETE"}},
		{"/v1/fiscal-events/x402-x/resolve", []string{"POST"}},
	} {
		r := f.do("PUT", tc.path, keyA, nil)
		assertProblem(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
		var got []string
		for m := range strings.SplitSeq(r.header.Get("Allow"), ",") {
			got = append(got, strings.TrimSpace(m))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.allow))
		if !slices.Equal(got, want) {
			t.Errorf("PUT %s: Allow %q, want the methods %v", tc.path, r.header.Get("Allow"), want)
		}
		head := f.do("HEAD", tc.path, keyA, nil)
		if served := head.status != http.StatusMethodNotAllowed; served != slices.Contains(tc.allow, "HEAD") {
			t.Errorf("HEAD %s: %d, while Allow (want) is %v", tc.path, head.status, tc.allow)
		}
	}
}
