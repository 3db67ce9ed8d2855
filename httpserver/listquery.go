package httpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/listing"
)

// listParams are the query parameters parseListQuery knows; any other is a
// BAD_REQUEST, so that a misspelt filter is not silently ignored.
var listParams = []string{"cursor", "from", "limit", "reviewStatus", "settledFrom", "settledTo", "status", "taxingCountry", "to"}

// parseListQuery reads a listing.Query from URL query parameters (limit, cursor,
// from, to, settledFrom, settledTo, reviewStatus, status, taxingCountry).
// Unknown and repeated parameters are BAD_REQUEST errors whose Field is the
// parameter name.
func parseListQuery(v url.Values) (listing.Query, error) {
	var q listing.Query
	if err := onlyParams(v, listParams...); err != nil {
		return q, err
	}
	// An empty cursor is the first page (as on GET /v1/events).
	if err := refuseEmpty(v, slices.DeleteFunc(slices.Clone(listParams), func(n string) bool { return n == "cursor" })...); err != nil {
		return q, err
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !canonicalUint(s) || n < 1 || n > maxListLimit {
			return q, badRequestf("limit", "must be an integer from 1 to %d", maxListLimit)
		}
		q.Limit = n
	}
	q.Cursor = v.Get("cursor")
	var err error
	if q.From, err = parseBound("from", v.Get("from"), false); err != nil {
		return q, err
	}
	if q.To, err = parseBound("to", v.Get("to"), true); err != nil {
		return q, err
	}
	if q.SettledFrom, err = parseBound("settledFrom", v.Get("settledFrom"), false); err != nil {
		return q, err
	}
	if q.SettledTo, err = parseBound("settledTo", v.Get("settledTo"), true); err != nil {
		return q, err
	}
	q.ReviewStatus, q.Status = v.Get("reviewStatus"), v.Get("status")
	if c := v.Get("taxingCountry"); c != "" {
		if q.TaxingCountry, err = wire.Country("taxingCountry", c); err != nil {
			return q, fiscal.InputError(err)
		}
	}
	return q, nil
}

// parseBound reads a date (YYYY-MM-DD: the whole UTC day) or an RFC 3339
// instant. An upper bound on a date is the day's last nanosecond.
func parseBound(field, v string, upper bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.AddDate(0, 0, 1).Add(-time.Nanosecond)
		}
		return checkYear(field, d)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badRequestf(field, "must be a date (2026-04-10) or an RFC 3339 instant (2026-04-10T12:00:00Z); in a URL write + as %%2B")
	}
	if msg := wire.SecFrac(v); msg != "" { // a decimal comma, or a tenth digit time.Parse would drop
		return time.Time{}, badRequestf(field, "%s (RFC 3339 section 5.6)", msg)
	}
	return checkYear(field, t.UTC())
}

// checkYear keeps a bound where nanosecond Unix time is defined. A bound
// given is checked even when it is Go's zero time (0001-01-01T00:00:00Z),
// which is the year 1 like any other, not "no bound".
func checkYear(field string, t time.Time) (time.Time, error) {
	if t.Year() < 1970 || t.Year() > 2200 {
		return time.Time{}, badRequestf(field, "must lie between the years 1970 and 2200")
	}
	return t, nil
}

// onlyParams refuses query parameters other than known, and repeated ones,
// with a BAD_REQUEST whose Field is the parameter, naming the first in
// order (the same error for the same query). It is the one check of every
// GET's query: the listings' (parseListQuery), the other endpoints that
// read parameters, and noParams for those that read none.
func onlyParams(v url.Values, known ...string) error {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if !slices.Contains(known, name) {
			field := shown.Bare(name)
			if field == "" {
				field = "query" // "?=x": a parameter without a name
			}
			if len(known) == 0 {
				return badRequestf(field, "unknown query parameter %s: this endpoint reads no query parameter", shown.Quote(name))
			}
			return badRequestf(field, "unknown query parameter %s; known: %s", shown.Quote(name), strings.Join(known, ", "))
		}
		if len(v[name]) > 1 {
			return badRequestf(shown.Bare(name), "query parameter %s is repeated", shown.Quote(name))
		}
	}
	return nil
}

// noParams serves h only when the request has no query parameter: an
// endpoint that reads none refuses them as the listings refuse an unknown
// one, so that a misspelt parameter is never silently ignored.
func (s *Server) noParams(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			if err := onlyParams(r.URL.Query()); err != nil {
				s.problem(w, r, err)
				return
			}
		}
		h(w, r)
	}
}

// noBody serves h only when the request's body says nothing: none,
// whitespace, or an empty JSON object. An endpoint that reads no body
// refuses one that says something, as it refuses a query parameter it does
// not read, so that a filter sent in the body is never silently dropped (a
// redelivery to every endpoint instead of one): a member is a BAD_REQUEST
// naming it, anything else a BAD_REQUEST, and a body that is not declared
// JSON is an UNSUPPORTED_MEDIA_TYPE.
func (s *Server) noBody(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 { // -1: a body of unknown length
			body, err := s.readBody(w, r)
			if err == nil && len(bytes.TrimSpace(body)) > 0 {
				r.Body = io.NopCloser(bytes.NewReader(body))
				err = s.decodeJSON(w, r, &struct{}{})
			}
			if fe := (*fiscal.Error)(nil); errors.As(err, &fe) && fe.Code == fiscal.CodeBadRequest && fe.Err == nil {
				named := *fe
				named.Detail = "this endpoint reads no request body (send none): " + fe.Detail
				err = &named
			}
			if err != nil {
				s.problem(w, r, err)
				return
			}
		}
		h(w, r)
	}
}

// refuseEmpty refuses the parameters of names given empty, in their
// order: a filter or a choice given empty is not read as absent, or the
// answer would come back unfiltered (a whole export, the default return)
// as if that had been asked for.
func refuseEmpty(v url.Values, names ...string) error {
	for _, name := range names {
		if v.Has(name) && v.Get(name) == "" {
			return badRequestf(name, "query parameter %q is empty: give a value or leave the parameter out", name)
		}
	}
	return nil
}

// maxListLimit is the largest page a list serves (listing.Query.Limit).
const maxListLimit = 200

func badRequestf(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// canonicalUint reports whether s is a non-negative integer in its one
// spelling: decimal digits, without a sign or a leading zero ("0" itself
// excepted). strconv accepts "+5" and "01" too; the API's numbers in
// strings are plain (amounts, rates), and its query integers are alike.
func canonicalUint(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
