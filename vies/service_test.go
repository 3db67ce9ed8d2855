package vies

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestServiceSyntaxFailureMakesNoCall(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	clock := newFakeClock()
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Clock: clock.Now})
	for _, n := range []string{"DE136695978", "DE 011125440", "12", "1234567", "DE1234567890123"} {
		r := s.Check(context.Background(), n)
		if r.Status != StatusInvalid || r.Fault != FaultSyntax || r.Registry != "" || r.Attempts != 0 {
			t.Errorf("%s: %+v", n, r)
		}
		if !r.RequestDate.Equal(clock.Now()) || r.Detail == "" || r.Number == "" {
			t.Errorf("%s: date/detail/number = %v %q %q", n, r.RequestDate, r.Detail, r.Number)
		}
	}
	if srv.calls() != 0 {
		t.Errorf("%d registry calls for syntax failures", srv.calls())
	}
}

func TestServiceRouting(t *testing.T) {
	vs := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	hs := newHMRCServer(t, hmrcFound)
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: vs.URL}), HMRC: hmrcClient(hs, "", nil)})
	tests := []struct {
		in, registry, cc, fault string
		status                  Status
	}{
		{"DE136695976", RegistryVIES, "DE", "", StatusValid},
		{"GR094259216", RegistryVIES, "EL", "", StatusValid},
		{"EL094259216", RegistryVIES, "EL", "", StatusValid},
		{"XI432525179", RegistryVIES, "XI", "", StatusValid},
		{"GB553557881", RegistryHMRC, "GB", "", StatusValid},
		{"GBGD100", RegistryHMRC, "GB", FaultUnsupported, StatusUnavailable},
		{"EU372022452", "", "EU", FaultUnsupported, StatusUnavailable},
		{"US123456789", "", "US", FaultUnsupported, StatusUnavailable},
	}
	for _, tt := range tests {
		r := s.Check(context.Background(), tt.in)
		if r.Status != tt.status || r.Registry != tt.registry || r.CountryCode != tt.cc || r.Fault != tt.fault {
			t.Errorf("%s: %+v", tt.in, r)
		}
	}
	var ccs []string
	for _, q := range vs.requests() {
		ccs = append(ccs, q.CountryCode)
	}
	if !slices.Equal(ccs, []string{"DE", "EL", "XI"}) { // EL once: GR and EL share the cache entry
		t.Errorf("VIES saw %v", ccs)
	}
	if _, lookups := hs.counts(); lookups != 1 {
		t.Errorf("HMRC saw %d lookups, want 1", lookups)
	}
}

func TestServiceRegistriesOff(t *testing.T) {
	s := newTestService(t, ServiceConfig{})
	for _, n := range []string{"DE136695976", "GB553557881"} {
		r := s.Check(context.Background(), n)
		if r.Status != StatusUnavailable || r.Fault != FaultRegistryOff {
			t.Errorf("%s: %+v", n, r)
		}
	}
}

func TestServiceCacheHitAvoidsCall(t *testing.T) {
	clock := newFakeClock()
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		if req.VATNumber == "812847601" {
			return 200, viesInvalid(req)
		}
		return 200, viesValid(req)
	})
	s := newTestService(t, ServiceConfig{
		VIES:  NewVIES(VIESConfig{BaseURL: srv.URL, RequesterCountry: "AT", RequesterNumber: "U13585627"}),
		Clock: clock.Now, Sleep: clock.Sleep, ValidTTL: time.Hour, InvalidTTL: 10 * time.Minute,
	})
	first := s.Check(context.Background(), "DE136695976")
	second := s.Check(context.Background(), "de 136 695 976")
	if srv.calls() != 1 {
		t.Fatalf("%d calls, want 1", srv.calls())
	}
	if first.Cached || !second.Cached {
		t.Errorf("Cached = %t, %t", first.Cached, second.Cached)
	}
	second.Cached = false
	if first != second {
		t.Errorf("cached answer differs:\n%+v\n%+v", first, second)
	}
	if first.RequestIdentifier == "" {
		t.Error("proof missing")
	}

	s.Check(context.Background(), "DE812847601")
	if r := s.Check(context.Background(), "DE812847601"); r.Status != StatusInvalid || !r.Cached {
		t.Errorf("invalid not cached: %+v", r)
	}
	if srv.calls() != 2 {
		t.Fatalf("%d calls, want 2", srv.calls())
	}

	clock.Advance(10 * time.Minute) // invalid expires, valid does not
	s.Check(context.Background(), "DE812847601")
	s.Check(context.Background(), "DE136695976")
	if srv.calls() != 3 {
		t.Fatalf("after 10 min: %d calls, want 3", srv.calls())
	}
	clock.Advance(50 * time.Minute)
	if r := s.Check(context.Background(), "DE136695976"); r.Cached {
		t.Errorf("valid served after its TTL: %+v", r)
	}
	if srv.calls() != 4 {
		t.Fatalf("after 1 h: %d calls, want 4", srv.calls())
	}
}

func TestServiceNegativeTTLDisablesCaching(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), ValidTTL: -1})
	s.Check(context.Background(), "DE136695976")
	s.Check(context.Background(), "DE136695976")
	if srv.calls() != 2 {
		t.Errorf("%d calls, want 2", srv.calls())
	}
}

func TestServiceCacheEvictsLeastRecentlyUsed(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), CacheSize: 2, Rate: rate.Inf})
	n := deNumbers(3)
	s.Check(context.Background(), n[0])
	s.Check(context.Background(), n[1])
	s.Check(context.Background(), n[0]) // n[0] most recently used
	s.Check(context.Background(), n[2]) // evicts n[1]
	if s.cache.len() != 2 {
		t.Errorf("cache holds %d", s.cache.len())
	}
	before := srv.calls()
	if r := s.Check(context.Background(), n[0]); !r.Cached {
		t.Error("n[0] evicted")
	}
	if r := s.Check(context.Background(), n[1]); r.Cached {
		t.Error("n[1] kept")
	}
	if srv.calls() != before+1 {
		t.Errorf("calls %d → %d", before, srv.calls())
	}
}

func TestServiceUnavailableNeverCached(t *testing.T) {
	for _, code := range append(slices.Clone(viesFaultCodes), "HTTP_500", FaultMalformed) {
		t.Run(code, func(t *testing.T) {
			srv := newVIESServer(t, func(viesRequest) (int, string) {
				switch code {
				case "HTTP_500":
					return 500, "oops"
				case FaultMalformed:
					return 200, "{"
				}
				return 200, viesFault(code)
			})
			clock := newFakeClock()
			s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), MaxAttempts: 1,
				Clock: clock.Now, Sleep: clock.Sleep})
			for i := 0; i < 3; i++ {
				r := s.Check(context.Background(), "DE136695976")
				if r.Status != StatusUnavailable || r.Fault != code || r.Cached {
					t.Fatalf("check %d: %+v", i, r)
				}
			}
			if srv.calls() != 3 {
				t.Errorf("%d calls, want 3", srv.calls())
			}
			if s.cache.len() != 0 {
				t.Errorf("cache holds %d entries", s.cache.len())
			}
		})
	}
}

func TestServiceRetriesTransientFaults(t *testing.T) {
	var n atomic.Int32
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		switch n.Add(1) {
		case 1:
			return 200, viesFault("MS_MAX_CONCURRENT_REQ")
		case 2:
			return 503, ""
		}
		return 200, viesValid(req)
	})
	clock := newFakeClock()
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf,
		Clock: clock.Now, Sleep: clock.Sleep, Rand: func() float64 { return 0.5 }})
	r := s.Check(context.Background(), "DE136695976")
	if r.Status != StatusValid || r.Attempts != 3 {
		t.Fatalf("result = %+v", r)
	}
	// Full jitter with Rand = 0.5: half of 1 s, then half of 2 s.
	if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Errorf("backoff = %v", got)
	}
	if r := s.Check(context.Background(), "DE136695976"); !r.Cached || r.Attempts != 3 {
		t.Errorf("cached after retries: %+v", r)
	}
}

func TestServiceGivesUpAfterMaxAttempts(t *testing.T) {
	srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, viesFault("MS_UNAVAILABLE") })
	clock := newFakeClock()
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf, MaxAttempts: 4,
		BaseBackoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond,
		Clock: clock.Now, Sleep: clock.Sleep, Rand: func() float64 { return 0.999 }})
	r := s.Check(context.Background(), "DE136695976")
	if r.Status != StatusUnavailable || r.Fault != "MS_UNAVAILABLE" || r.Attempts != 4 || srv.calls() != 4 {
		t.Fatalf("result = %+v, %d calls", r, srv.calls())
	}
	// Ceilings 100, 200, 300 (capped) ms.
	want := []time.Duration{99900 * time.Microsecond, 199800 * time.Microsecond, 299700 * time.Microsecond}
	if got := clock.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("backoff = %v, want %v", got, want)
	}
}

func TestServiceDoesNotRetryPermanentFaults(t *testing.T) {
	for _, code := range []string{"IP_BLOCKED", "VAT_BLOCKED", "INVALID_REQUESTER_INFO", FaultMalformed, "HTTP_404"} {
		srv := newVIESServer(t, func(viesRequest) (int, string) {
			switch code {
			case FaultMalformed:
				return 200, "{}"
			case "HTTP_404":
				return 404, ""
			}
			return 200, viesFault(code)
		})
		clock := newFakeClock()
		s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Clock: clock.Now, Sleep: clock.Sleep})
		r := s.Check(context.Background(), "DE136695976")
		if r.Fault != code || r.Attempts != 1 || srv.calls() != 1 || len(clock.Sleeps()) != 0 {
			t.Errorf("%s: %+v, %d calls, sleeps %v", code, r, srv.calls(), clock.Sleeps())
		}
	}
}

func TestServiceCancelDuringBackoff(t *testing.T) {
	srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, viesFault("SERVER_BUSY") })
	ctx, cancel := context.WithCancel(context.Background())
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf,
		Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }})
	r := s.Check(ctx, "DE136695976")
	if r.Status != StatusUnavailable || r.Fault != "SERVER_BUSY" || srv.calls() != 1 {
		t.Fatalf("result = %+v, %d calls", r, srv.calls())
	}
}

func TestServiceNoRetryPastDeadline(t *testing.T) {
	srv := newVIESServer(t, func(viesRequest) (int, string) { return 200, viesFault("MS_UNAVAILABLE") })
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf,
		BaseBackoff: time.Hour, MaxBackoff: time.Hour, Rand: func() float64 { return 0.5 }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	r := s.Check(ctx, "DE136695976")
	if r.Fault != "MS_UNAVAILABLE" || srv.calls() != 1 || !strings.Contains(r.Detail, "deadline") {
		t.Fatalf("result = %+v, %d calls", r, srv.calls())
	}
	if time.Since(start) > 5*time.Second {
		t.Error("slept toward the deadline")
	}
}

func TestServiceCanceledContext(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL})})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := s.Check(ctx, "DE136695976")
	if r.Status != StatusUnavailable || r.Fault != FaultCanceled || srv.calls() != 0 {
		t.Fatalf("result = %+v, %d calls", r, srv.calls())
	}
}

// TestServiceRateLimitDeterministic checks the limiter's waits with a fake
// clock: rate 10/s, burst 2 → two free calls, then one every 100 ms, per
// country.
func TestServiceRateLimitDeterministic(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	clock := newFakeClock()
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: 10, Burst: 2,
		Clock: clock.Now, Sleep: clock.Sleep})
	for _, n := range deNumbers(5) {
		if r := s.Check(context.Background(), n); r.Status != StatusValid {
			t.Fatal(r)
		}
	}
	want := []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if got := clock.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	// Another member state has its own budget.
	s.Check(context.Background(), "AT U13585627")
	s.Check(context.Background(), "ATU46080404")
	if got := clock.Sleeps(); len(got) != 3 {
		t.Errorf("AT waited on DE's limiter: %v", got)
	}
}

func TestServiceRateLimitedBeforeDeadline(t *testing.T) {
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	clock := newFakeClock()
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: 1, Burst: 1,
		Clock: clock.Now, Sleep: clock.Sleep})
	n := deNumbers(3)
	s.Check(context.Background(), n[0])
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := s.Check(ctx, n[1])
	if r.Status != StatusUnavailable || r.Fault != FaultRateLimited || srv.calls() != 1 {
		t.Fatalf("result = %+v, %d calls", r, srv.calls())
	}
	// The slot was given back: the next lookup waits 1 s, not 2 s.
	s.Check(context.Background(), n[2])
	if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Second}) {
		t.Errorf("waits = %v", got)
	}
}

// TestServiceBurstOf50RespectsRateLimit fires 50 concurrent lookups of
// distinct DE numbers at a VIES-shaped server with the real clock and checks
// the arrival times against the token bucket: at most burst + rate·T calls
// in any window of length T.
func TestServiceBurstOf50RespectsRateLimit(t *testing.T) {
	const (
		r     = 50 // per second
		burst = 5
		slack = 60 * time.Millisecond // arrival jitter on a shared machine
	)
	srv := newVIESServer(t, func(req viesRequest) (int, string) { return 200, viesValid(req) })
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: r, Burst: burst})
	numbers := deNumbers(50)
	var wg sync.WaitGroup
	results := make([]Result, len(numbers))
	for i, n := range numbers {
		wg.Go(func() { results[i] = s.Check(context.Background(), n) })
	}
	wg.Wait()
	for i, res := range results {
		if res.Status != StatusValid {
			t.Fatalf("%s: %+v", numbers[i], res)
		}
	}
	srv.mu.Lock()
	times := slices.Clone(srv.times)
	srv.mu.Unlock()
	if len(times) != 50 {
		t.Fatalf("%d calls, want 50", len(times))
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := range times {
		for j := i + burst; j < len(times); j++ {
			// Calls i..j are j-i+1 grants: they need (j-i+1-burst)/r seconds.
			need := time.Duration(float64(j-i+1-burst) / r * float64(time.Second))
			if got := times[j].Sub(times[i]); got < need-slack {
				t.Fatalf("calls %d..%d within %s, the limit needs %s", i, j, got, need)
			}
		}
	}
}

func TestServiceCollapsesConcurrentIdenticalLookups(t *testing.T) {
	release := make(chan struct{})
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		<-release
		return 200, viesValid(req)
	})
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf})
	var wg sync.WaitGroup
	results := make([]Result, 20)
	for i := range results {
		wg.Go(func() { results[i] = s.Check(context.Background(), "DE136695976") })
	}
	waitFor(t, func() bool { return srv.calls() >= 1 })
	time.Sleep(50 * time.Millisecond) // let the others join the call in flight
	close(release)
	wg.Wait()
	if srv.calls() != 1 {
		t.Errorf("%d registry calls, want 1", srv.calls())
	}
	for _, r := range results {
		if r.Status != StatusValid {
			t.Errorf("result = %+v", r)
		}
	}
}

func TestServiceWaiterOutlivesCallerThatGaveUp(t *testing.T) {
	for _, how := range []string{"cancel", "deadline"} {
		t.Run(how, func(t *testing.T) {
			var n atomic.Int32
			first := make(chan struct{})
			srv := newVIESServer(t, func(req viesRequest) (int, string) {
				if n.Add(1) == 1 {
					close(first)
					time.Sleep(300 * time.Millisecond) // the caller gives up meanwhile
				}
				return 200, viesValid(req)
			})
			s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf})
			ctx, cancel := context.WithCancel(context.Background())
			if how == "deadline" {
				ctx, cancel = context.WithTimeout(context.Background(), 150*time.Millisecond)
			}
			defer cancel()
			leader := make(chan Result)
			go func() { leader <- s.Check(ctx, "DE136695976") }()
			<-first
			waiter := make(chan Result)
			go func() { waiter <- s.Check(context.Background(), "DE136695976") }()
			time.Sleep(30 * time.Millisecond)
			if how == "cancel" {
				cancel()
			}
			want := map[string]string{"cancel": FaultCanceled, "deadline": FaultTimeout}[how]
			if r := <-leader; r.Status != StatusUnavailable || r.Fault != want {
				t.Errorf("leader: %+v", r)
			}
			if r := <-waiter; r.Status != StatusValid {
				t.Errorf("waiter: %+v", r)
			}
			if n.Load() != 2 {
				t.Errorf("%d calls, want 2", n.Load())
			}
		})
	}
}

func TestServiceWaiterCanGiveUp(t *testing.T) {
	release := make(chan struct{})
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		<-release
		return 200, viesValid(req)
	})
	s := newTestService(t, ServiceConfig{VIES: NewVIES(VIESConfig{BaseURL: srv.URL}), Rate: rate.Inf})
	leader := make(chan Result)
	go func() { leader <- s.Check(context.Background(), "DE136695976") }()
	waitFor(t, func() bool { return srv.calls() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r := s.Check(ctx, "DE136695976")
	if r.Status != StatusUnavailable || r.Fault != FaultTimeout || r.Registry != RegistryVIES || r.Number != "136695976" {
		t.Errorf("waiter: %+v", r)
	}
	close(release)
	if r := <-leader; r.Status != StatusValid {
		t.Errorf("leader: %+v", r)
	}
}

func TestNewServiceConfigErrors(t *testing.T) {
	tests := []ServiceConfig{
		{},
		{Syntax: testSyntax, Rate: -1},
		{Syntax: testSyntax, Burst: -1},
		{Syntax: testSyntax, MaxAttempts: -1},
		{Syntax: testSyntax, BaseBackoff: -time.Second},
		{Syntax: testSyntax, BaseBackoff: 2 * time.Second, MaxBackoff: time.Second},
	}
	for i, c := range tests {
		if _, err := NewService(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%d: err = %v", i, err)
		}
	}
	s, err := NewService(ServiceConfig{Syntax: testSyntax})
	if err != nil {
		t.Fatal(err)
	}
	if s.validTTL != DefaultValidTTL || s.invalidTTL != DefaultInvalidTTL || s.rate != DefaultRate || s.burst != DefaultBurst ||
		s.maxAttempts != DefaultMaxAttempts || s.baseBackoff != DefaultBaseBackoff || s.maxBackoff != DefaultMaxBackoff || s.cache.max != DefaultCacheSize {
		t.Errorf("defaults = %+v", s)
	}
}

func TestTransient(t *testing.T) {
	yes := []string{"NETWORK", "TIMEOUT", "SERVICE_UNAVAILABLE", "MS_UNAVAILABLE", "SERVER_BUSY", "HTTP_429", "HTTP_500", "HTTP_503", "HTTP_599",
		"MS_MAX_CONCURRENT_REQ", "MS_MAX_CONCURRENT_REQ_TIME", "GLOBAL_MAX_CONCURRENT_REQ", "GLOBAL_MAX_CONCURRENT_REQ_TIME"}
	no := []string{"", "INVALID", "INVALID_INPUT", "SYNTAX", "NOT_FOUND", "IP_BLOCKED", "VAT_BLOCKED", "INVALID_REQUESTER_INFO",
		"MALFORMED_RESPONSE", "CANCELED", "RATE_LIMITED", "AUTH_FAILED", "REGISTRY_OFF", "UNSUPPORTED_NUMBER",
		"HTTP_400", "HTTP_403", "HTTP_404", "HTTP_5XX", "HTTP_5000", "HTTP_50"}
	for _, f := range yes {
		if !Transient(f) {
			t.Errorf("Transient(%q) = false", f)
		}
	}
	for _, f := range no {
		if Transient(f) {
			t.Errorf("Transient(%q) = true", f)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestServiceValidWithoutExpectedProofNotCached: with a requester number
// configured, a valid answer is proof only with its requestIdentifier or
// consultationNumber (Art. 18(1)(a) and 25 Implementing Regulation
// 282/2011: the confirmation obtained for the sale is the supplier's
// evidence). A registry that once left the identifier out must not have
// that proof-less answer served from the cache to every sale of the next
// ValidTTL: the next lookup asks again and gets the proof.
func TestServiceValidWithoutExpectedProofNotCached(t *testing.T) {
	clock := newFakeClock()
	var n int
	var mu sync.Mutex
	srv := newVIESServer(t, func(req viesRequest) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 1 {
			req.RequesterNumber = "" // viesValid then sends no requestIdentifier
		}
		return 200, viesValid(req)
	})
	s := newTestService(t, ServiceConfig{
		VIES:  NewVIES(VIESConfig{BaseURL: srv.URL, RequesterCountry: "AT", RequesterNumber: "U13585627"}),
		Clock: clock.Now, Sleep: clock.Sleep,
	})
	first := s.Check(context.Background(), "DE136695976")
	if first.Status != StatusValid || first.RequestIdentifier != "" {
		t.Fatalf("first = %+v, want valid without an identifier", first)
	}
	second := s.Check(context.Background(), "DE136695976")
	if srv.calls() != 2 || second.Cached {
		t.Fatalf("%d calls, second cached %t: a proof-less valid answer was reused", srv.calls(), second.Cached)
	}
	if second.Status != StatusValid || second.RequestIdentifier == "" {
		t.Fatalf("second = %+v, want valid with its identifier", second)
	}
	// With its proof the answer is cached as usual.
	if third := s.Check(context.Background(), "DE136695976"); !third.Cached || third.RequestIdentifier != second.RequestIdentifier || srv.calls() != 2 {
		t.Errorf("third = %+v after %d calls, want the cached answer with its proof", third, srv.calls())
	}
}
