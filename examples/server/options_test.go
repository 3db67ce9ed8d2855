package main

import (
	"fmt"
	"testing"

	"golang.org/x/time/rate"
)

// TestHTTPOptions: the limit flags become httpserver options.
func TestHTTPOptions(t *testing.T) {
	cases := []struct {
		o       options
		limit   rate.Limit
		proxies string
		err     bool
	}{
		{o: options{rateLimit: 100}, limit: 100, proxies: "[]"},
		{o: options{rateLimit: 0}, limit: rate.Inf, proxies: "[]"},
		{o: options{rateLimit: 5, rateBurst: 7, trustedProxies: "10.0.0.1, 192.168.0.0/16,::1,2001:db8::/32"}, limit: 5, proxies: "[10.0.0.1/32 192.168.0.0/16 ::1/128 2001:db8::/32]"},
		{o: options{rateLimit: 1, trustedProxies: "10.0.0.7/8"}, limit: 1, proxies: "[10.0.0.0/8]"},
		{o: options{rateLimit: 1, trustedProxies: "proxy.internal"}, err: true},
		{o: options{rateLimit: -1}, err: true},
		{o: options{rateLimit: 1, rateBurst: -1}, err: true},
	}
	for _, tc := range cases {
		got, err := httpOptions(tc.o, nil)
		if (err != nil) != tc.err {
			t.Errorf("%+v: error %v, want error %v", tc.o, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if got.RateLimit != tc.limit || got.RateBurst != tc.o.rateBurst || fmt.Sprint(got.TrustedProxies) != tc.proxies {
			t.Errorf("%+v: limit %v burst %d proxies %v", tc.o, got.RateLimit, got.RateBurst, got.TrustedProxies)
		}
	}
}
