package vies

import (
	"context"
	"sync"
)

// Fake is an in-memory [Checker] for tests and for running without a
// registry: Set gives the answer for a number, Calls counts lookups. A
// number with no answer set is unavailable with REGISTRY_OFF, never
// invalid. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	answers map[string]Result
	calls   map[string]int
}

// NewFake returns a Fake with no answers.
func NewFake() *Fake {
	return &Fake{answers: make(map[string]Result), calls: make(map[string]int)}
}

// fakeKey is the upper-cased number without separators, so "de 136 695 976"
// and "DE136695976" are the same number.
func fakeKey(vatNumber string) string { return compact(vatNumber) }

// Set makes Check return r for vatNumber (prefix included).
func (f *Fake) Set(vatNumber string, r Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[fakeKey(vatNumber)] = r
}

// Calls is how many times Check was asked about vatNumber.
func (f *Fake) Calls(vatNumber string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[fakeKey(vatNumber)]
}

// Check returns the answer set for vatNumber, or unavailable REGISTRY_OFF.
func (f *Fake) Check(ctx context.Context, vatNumber string) Result {
	key := fakeKey(vatNumber)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[key]++
	if r, ok := f.answers[key]; ok {
		return r
	}
	cc, body := "", key
	if len(key) >= 2 {
		cc, body = viesCountry(key[:2]), key[2:]
	}
	return Result{Status: StatusUnavailable, CountryCode: cc, Number: body,
		Fault: FaultRegistryOff, Detail: "vies: fake: no answer set for this number"}
}
