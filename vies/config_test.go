package vies

import (
	"context"
	"errors"
	"testing"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeOff, "off": ModeOff, "OFF": ModeOff, " live ": ModeLive, "Live": ModeLive} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"on", "true", "fake"} {
		if _, err := ParseMode(in); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseMode(%q) err = %v", in, err)
		}
	}
}

func TestNewOffChecksSyntaxOnly(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s, err := New(Config{VIES: VIESConfig{BaseURL: srv.URL}, Service: ServiceConfig{Syntax: testSyntax}})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Check(context.Background(), "DE136695978"); r.Status != StatusInvalid || r.Fault != FaultSyntax {
		t.Errorf("bad check digit: %+v", r)
	}
	for _, n := range []string{"DE136695976", "GB553557881"} {
		if r := s.Check(context.Background(), n); r.Status != StatusUnavailable || r.Fault != FaultRegistryOff {
			t.Errorf("%s: %+v", n, r)
		}
	}
	if srv.calls() != 0 {
		t.Errorf("off mode made %d calls", srv.calls())
	}
	if got := s.Registries(); len(got) != 0 {
		t.Errorf("off mode Registries() = %v", got)
	}
}

func TestNewLive(t *testing.T) {
	vs := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	hs := newHMRCServer(t, hmrcFound)
	s, err := New(Config{
		Mode:    ModeLive,
		VIES:    VIESConfig{BaseURL: vs.URL, RequesterCountry: "AT", RequesterNumber: "ATU13585627"},
		HMRC:    HMRCConfig{BaseURL: hs.URL, ClientID: "id-1", ClientSecret: "secret-1", RequesterVRN: "GB146295999727"},
		Service: ServiceConfig{Syntax: testSyntax},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Check(context.Background(), "DE136695976"); r.Status != StatusValid || r.RequestIdentifier == "" {
		t.Errorf("VIES: %+v", r)
	}
	if r := s.Check(context.Background(), "GB553557881"); r.Status != StatusValid || r.RequestIdentifier != "ypAeKRPlW" {
		t.Errorf("HMRC: %+v", r)
	}
	if got := s.Registries(); len(got) != 2 || got[0] != RegistryVIES || got[1] != RegistryHMRC {
		t.Errorf("live Registries() = %v", got)
	}

	// Live without HMRC credentials: GB is off, EU is live.
	s, err = New(Config{Mode: ModeLive, VIES: VIESConfig{BaseURL: vs.URL}, Service: ServiceConfig{Syntax: testSyntax}})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Check(context.Background(), "GB553557881"); r.Fault != FaultRegistryOff {
		t.Errorf("GB without credentials: %+v", r)
	}
	if got := s.Registries(); len(got) != 1 || got[0] != RegistryVIES {
		t.Errorf("live without HMRC Registries() = %v", got)
	}
}

func TestNewConfigErrors(t *testing.T) {
	base := ServiceConfig{Syntax: testSyntax}
	tests := []Config{
		{Mode: "on", Service: base},
		{Mode: ModeLive},
		{Mode: ModeLive, VIES: VIESConfig{RequesterCountry: "AT"}, Service: base},
		{Mode: ModeLive, HMRC: HMRCConfig{RequesterVRN: "12345"}, Service: base},
		{Mode: ModeLive, HMRC: HMRCConfig{ClientID: "x"}, Service: base},
		{Mode: ModeLive, Service: ServiceConfig{Syntax: testSyntax, VIES: NewVIES(VIESConfig{})}},
	}
	for i, c := range tests {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%d: err = %v", i, err)
		}
	}
}
