package vat

import (
	"encoding/json"
	"testing"
)

func TestPercentJSON(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"25.5", "25.5"}, {"20", "20"}, {"0", "0"}, {"13.50", "13.5"}, {"4.8", "4.8"}, {"100", "100"}, {"2.5e1", "25"},
	} {
		p, err := ParsePercent(c.in)
		if err != nil {
			t.Fatalf("ParsePercent(%q): %v", c.in, err)
		}
		b, err := json.Marshal(struct {
			R Percent  `json:"r"`
			P *Percent `json:"p"`
		}{p, &p})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"r":` + c.out + `,"p":` + c.out + `}`; string(b) != want {
			t.Errorf("Marshal(%s) = %s, want %s", c.in, b, want)
		}
		var back struct{ R Percent }
		if err := json.Unmarshal([]byte(`{"R":`+c.out+`}`), &back); err != nil || !back.R.Decimal().Equal(p.Decimal()) {
			t.Errorf("Unmarshal(%s) = %s, %v", c.out, back.R, err)
		}
	}
	// A float64 round trip would turn 0.1+0.2-like values into noise; the
	// decimal path keeps every digit.
	var p Percent
	if err := json.Unmarshal([]byte("12.345678901234567890"), &p); err != nil || p.String() != "12.34567890123456789" {
		t.Errorf("long decimal: %s %v", p, err)
	}
}

func TestPercentRejects(t *testing.T) {
	for _, in := range []string{`"25.5"`, `true`, `{}`, `[]`, `-1`, `100.01`, `1e99999999`, `0x10`, `+5`, `.5`, `NaN`, `25.5.5`, `1e-99999999`, ``} {
		var p Percent
		if err := p.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted: %s", in, p)
		}
	}
	var p Percent
	if err := json.Unmarshal([]byte("null"), &p); err != nil || !p.IsZero() {
		t.Errorf("null: %v %s", err, p)
	}
	for _, in := range []string{"", "abc", "-0.5", "101", "1e40", "1" + string(make([]byte, 50))} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) accepted", in)
		}
	}
}

func FuzzPercentJSON(f *testing.F) {
	for _, s := range []string{"25.5", "0", "1e2", "-0", "100", "99.999999", "\"1\"", "1e999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Percent
		if err := p.UnmarshalJSON(b); err != nil {
			return
		}
		if p.Decimal().IsNegative() || p.Decimal().GreaterThan(hundred) {
			t.Fatalf("accepted %s out of range", b)
		}
		out, err := p.MarshalJSON()
		if err != nil || !json.Valid(out) {
			t.Fatalf("marshal of %s: %s %v", b, out, err)
		}
		var back Percent
		if err := back.UnmarshalJSON(out); err != nil || !back.Decimal().Equal(p.Decimal()) {
			t.Fatalf("round trip %s -> %s -> %s (%v)", b, out, back, err)
		}
	})
}
