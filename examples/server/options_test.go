package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/internal/testtool"
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

// TestREADMEConfigurationTable: every flag of the server, with its
// FISCAL402_* variable, is in the one table of README "Configuration", and
// the table names no flag the server does not have.
func TestREADMEConfigurationTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testtool.RepoDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## Configuration\n")
	end := strings.Index(readme[start:], "\n### ")
	if start < 0 || end < 0 {
		t.Fatal("README has no Configuration section")
	}
	section := readme[start : start+end]
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	serverFlags(fs, &o, &vf)
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(section, "`-"+f.Name+"`") {
			t.Errorf("README Configuration lacks -%s", f.Name)
		}
		if !envExcluded[f.Name] && !strings.Contains(section, "`"+envName(f.Name)+"`") {
			t.Errorf("README Configuration lacks %s (the variable of -%s)", envName(f.Name), f.Name)
		}
	})
	for _, m := range regexp.MustCompile("`-([a-z0-9-]+)`").FindAllStringSubmatch(section, -1) {
		if fs.Lookup(m[1]) == nil {
			t.Errorf("README Configuration names -%s, which the server does not have", m[1])
		}
	}
}

// TestApplyEnv: a variable sets its flag, the command line wins, a bad
// value names the variable, and an action has no variable.
func TestApplyEnv(t *testing.T) {
	env := map[string]string{"FISCAL402_RATE_LIMIT": "7", "FISCAL402_LISTEN": "127.0.0.1:9", "FISCAL402_ROTATE_RECEIPT_KEY": "true", "FISCAL402_FX_REFRESH": "false"}
	var o options
	var vf viesFlags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	serverFlags(fs, &o, &vf)
	if err := applyEnv(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"-listen", "127.0.0.1:10"}); err != nil {
		t.Fatal(err)
	}
	if o.rateLimit != 7 || o.listen != "127.0.0.1:10" || o.rotate || o.fxRefresh {
		t.Errorf("rate %v listen %s rotate %v fx-refresh %v", o.rateLimit, o.listen, o.rotate, o.fxRefresh)
	}
	fs = flag.NewFlagSet("server", flag.ContinueOnError)
	serverFlags(fs, &o, &vf)
	err := applyEnv(fs, func(k string) string {
		if k == "FISCAL402_SANDBOX_QUOTA" {
			return "ten"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "FISCAL402_SANDBOX_QUOTA") {
		t.Errorf("bad value: %v", err)
	}
}
