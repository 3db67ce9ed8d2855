package vies

import (
	"context"
	"testing"

	"golang.org/x/time/rate"
)

// BenchmarkServiceCheckCached is the hot path: a repeat buyer's number
// answered from the cache (syntax, route, cache lookup).
func BenchmarkServiceCheckCached(b *testing.B) {
	srv := newVIESServer(b, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s, err := NewService(ServiceConfig{Syntax: testSyntax, VIES: NewVIES(VIESConfig{BaseURL: srv.URL})})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s.Check(ctx, "DE136695976")
	b.ReportAllocs()
	for b.Loop() {
		if r := s.Check(ctx, "DE136695976"); !r.Cached {
			b.Fatal(r)
		}
	}
}

// BenchmarkParseVIES is the reply parser on a typical valid answer.
func BenchmarkParseVIES(b *testing.B) {
	body := []byte(`{"countryCode":"DE","vatNumber":"136695976","requestDate":"2026-09-14T10:15:30.123+02:00","valid":true,` +
		`"requestIdentifier":"WAPIAAAAZ0001","name":"Example GmbH","address":"Musterstr. 1\n10115 Berlin","traderName":"","traderNameMatch":"NOT_PROCESSED"}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := parseVIES(200, body, "DE", "136695976", fuzzNow); r.Status != StatusValid {
			b.Fatal(r)
		}
	}
}

// BenchmarkServiceCheckUncached is a full lookup over loopback HTTP with
// the cache off: the package's own overhead around one registry call.
func BenchmarkServiceCheckUncached(b *testing.B) {
	srv := newVIESServer(b, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s, err := NewService(ServiceConfig{Syntax: testSyntax, VIES: NewVIES(VIESConfig{BaseURL: srv.URL}),
		ValidTTL: -1, Rate: rate.Inf})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := s.Check(ctx, "DE136695976"); r.Status != StatusValid {
			b.Fatal(r)
		}
	}
}
