package httpserver

import (
	"regexp"
	"strings"
	"testing"
)

// TestRequestIDRule: the hand-written check of an inbound X-Request-Id
// accepts exactly what the rule's regular expression accepts, and a made-up
// id has its documented form.
func TestRequestIDRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	inputs := []string{"", "a", "req_1", strings.Repeat("x", 128), strings.Repeat("x", 129), "a b", "a\nb", "é", "trace-01.02_x", "a/b", "a\x00"}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string(rune(c)), "ok"+string([]byte{byte(c)}))
	}
	for _, in := range inputs {
		if got, want := wellFormedRequestID(in), rule.MatchString(in); got != want {
			t.Errorf("wellFormedRequestID(%q) = %v, want %v", in, got, want)
		}
		if got := requestID(in); rule.MatchString(in) != (got == in) {
			t.Errorf("requestID(%q) = %q", in, got)
		}
	}
	made := regexp.MustCompile(`^req_[0-9a-f]{24}$`)
	a, b := requestID(""), requestID("")
	if !made.MatchString(a) || !made.MatchString(b) || a == b {
		t.Errorf("made-up ids %q, %q", a, b)
	}
}
