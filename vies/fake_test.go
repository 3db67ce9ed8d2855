package vies

import (
	"context"
	"sync"
	"testing"
)

func TestFake(t *testing.T) {
	f := NewFake()
	valid := Result{Status: StatusValid, Registry: RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI1"}
	f.Set("DE 136 695 976", valid)
	f.Set("DE812847601", Result{Status: StatusInvalid, Registry: RegistryVIES, CountryCode: "DE", Number: "812847601", Fault: FaultInvalid})

	if r := f.Check(context.Background(), "de136695976"); r != valid {
		t.Errorf("set answer: %+v", r)
	}
	if r := f.Check(context.Background(), "DE812847601"); r.Status != StatusInvalid {
		t.Errorf("invalid: %+v", r)
	}
	r := f.Check(context.Background(), "GR 094259216")
	if r.Status != StatusUnavailable || r.Fault != FaultRegistryOff || r.CountryCode != "EL" || r.Number != "094259216" {
		t.Errorf("unset: %+v", r)
	}
	if n := f.Calls("DE136695976"); n != 1 {
		t.Errorf("Calls = %d", n)
	}
	if n := f.Calls("FR40303265045"); n != 0 {
		t.Errorf("Calls of an unasked number = %d", n)
	}

	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Go(func() { f.Check(context.Background(), "DE136695976") })
	}
	wg.Wait()
	if n := f.Calls("DE136695976"); n != 51 {
		t.Errorf("Calls after 50 concurrent = %d", n)
	}
}

// The Fake satisfies Checker, like Service.
var _, _ Checker = (*Fake)(nil), (*Service)(nil)
