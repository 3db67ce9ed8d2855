package vies

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of [ServiceConfig]; each field's doc says why.
const (
	DefaultValidTTL    = 12 * time.Hour
	DefaultInvalidTTL  = time.Hour
	DefaultCacheSize   = 10000
	DefaultRate        = rate.Limit(1)
	DefaultBurst       = 5
	DefaultMaxAttempts = 3
	DefaultBaseBackoff = time.Second
	DefaultMaxBackoff  = 8 * time.Second
)

// ErrConfig is wrapped by every configuration error of [NewService] and [New].
var ErrConfig = errors.New("vies: invalid configuration")

// ServiceConfig configures a [Service]. Every zero value has a default
// except Syntax.
type ServiceConfig struct {
	// Syntax checks format and check digits first (the engine injects
	// vat.ValidateNumber); a number it rejects is invalid (SYNTAX) without
	// a network call. Required.
	Syntax SyntaxFunc
	// VIES answers EU numbers (EU-27 with EL for Greece, and XI for
	// Northern Ireland); nil = those lookups are off (REGISTRY_OFF).
	VIES *VIESClient
	// HMRC answers GB numbers; nil = those lookups are off (REGISTRY_OFF).
	HMRC *HMRCClient

	// ValidTTL and InvalidTTL are how long definitive answers are reused;
	// zero = DefaultValidTTL (12 h) / DefaultInvalidTTL (1 h), negative =
	// not cached. A cached answer keeps its own RequestDate and
	// RequestIdentifier, so the record shows the age of the proof (Art. 18
	// and 25 of Reg. 282/2011 want it contemporaneous with the sale: keep
	// the TTL short). Invalid expires sooner because a new registration
	// turns an invalid number valid. Unavailable is never cached.
	ValidTTL   time.Duration
	InvalidTTL time.Duration
	// CacheSize bounds the number of cached answers (least recently used
	// out first); zero = DefaultCacheSize, negative = no cache.
	CacheSize int

	// Rate and Burst limit calls per registry country code (DE, EL, XI, GB,
	// …): VIES caps concurrency per member state and DE trips
	// MS_MAX_CONCURRENT_REQ daily (https://github.com/ibericode/vat/issues/79,
	// https://github.com/laravel/vat-calculator/issues/192). Zero = DefaultRate (1/s) and
	// DefaultBurst (5); rate.Inf = unlimited. Each attempt takes a slot.
	Rate  rate.Limit
	Burst int

	// MaxAttempts is the number of calls per lookup, the first included;
	// zero = DefaultMaxAttempts (3). Only transient faults ([Transient])
	// are retried.
	MaxAttempts int
	// BaseBackoff and MaxBackoff shape the wait before retry n (n ≥ 1):
	// uniformly random in [0, min(MaxBackoff, BaseBackoff·2ⁿ⁻¹)) ("full
	// jitter"); zero = DefaultBaseBackoff (1 s) / DefaultMaxBackoff (8 s).
	// The member-state throttles clear in seconds
	// (https://github.com/django-getpaid/django-plans/pull/249 retries them
	// after 2 s and 4 s).
	BaseBackoff time.Duration
	MaxBackoff  time.Duration

	// Clock dates results and drives cache expiry and the rate limiter;
	// zero = time.Now.
	Clock func() time.Time
	// Rand returns a number in [0, 1) for the jitter; zero = math/rand/v2.
	Rand func() float64
	// Sleep waits d or until ctx ends (returning ctx.Err()); zero = a real
	// timer. Tests inject one that advances a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Service is the [Checker] the engine uses: syntax → route (GB → HMRC; EU
// prefixes incl. EL and XI → VIES) → cache → per-country rate limit → call
// with retries on transient faults → cache valid and invalid answers.
// Concurrent lookups of the same number share one registry call. It is safe
// for concurrent use.
type Service struct {
	syntax      SyntaxFunc
	vies        *VIESClient
	hmrc        *HMRCClient
	validTTL    time.Duration
	invalidTTL  time.Duration
	rate        rate.Limit
	burst       int
	maxAttempts int
	baseBackoff time.Duration
	maxBackoff  time.Duration
	clock       func() time.Time
	rand        func() float64
	sleep       func(context.Context, time.Duration) error

	cache  *cache
	flight flight

	mu       sync.Mutex // guards limiters
	limiters map[string]*rate.Limiter
}

// NewService checks c and returns a Service.
func NewService(c ServiceConfig) (*Service, error) {
	if c.Syntax == nil {
		return nil, fmt.Errorf("%w: Syntax is required", ErrConfig)
	}
	switch {
	case c.Rate < 0:
		return nil, fmt.Errorf("%w: Rate %v is negative", ErrConfig, c.Rate)
	case c.Burst < 0:
		return nil, fmt.Errorf("%w: Burst %d is negative", ErrConfig, c.Burst)
	case c.MaxAttempts < 0:
		return nil, fmt.Errorf("%w: MaxAttempts %d is negative", ErrConfig, c.MaxAttempts)
	case c.BaseBackoff < 0 || c.MaxBackoff < 0:
		return nil, fmt.Errorf("%w: negative backoff", ErrConfig)
	}
	s := &Service{
		syntax: c.Syntax, vies: c.VIES, hmrc: c.HMRC,
		validTTL: orDefault(c.ValidTTL, DefaultValidTTL), invalidTTL: orDefault(c.InvalidTTL, DefaultInvalidTTL),
		rate: c.Rate, burst: c.Burst, maxAttempts: c.MaxAttempts,
		baseBackoff: orDefault(c.BaseBackoff, DefaultBaseBackoff), maxBackoff: orDefault(c.MaxBackoff, DefaultMaxBackoff),
		clock: c.Clock, rand: c.Rand, sleep: c.Sleep,
		limiters: make(map[string]*rate.Limiter),
	}
	if s.maxBackoff < s.baseBackoff {
		return nil, fmt.Errorf("%w: MaxBackoff %s is below BaseBackoff %s", ErrConfig, s.maxBackoff, s.baseBackoff)
	}
	if s.rate == 0 {
		s.rate = DefaultRate
	}
	if s.burst == 0 {
		s.burst = DefaultBurst
	}
	if s.maxAttempts == 0 {
		s.maxAttempts = DefaultMaxAttempts
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Float64
	}
	if s.sleep == nil {
		s.sleep = sleepContext
	}
	size := c.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	s.cache = newCache(size)
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// viesCountries are the country codes VIES answers for: the EU-27 with EL
// for Greece, and XI for Northern Ireland (the VIES country codes, as
// https://github.com/zapadi/vies-dotnet lists them). GB has not been
// served since 2021-01-01.
var viesCountries = map[string]bool{
	"AT": true, "BE": true, "BG": true, "CY": true, "CZ": true, "DE": true, "DK": true,
	"EE": true, "EL": true, "ES": true, "FI": true, "FR": true, "HR": true, "HU": true,
	"IE": true, "IT": true, "LT": true, "LU": true, "LV": true, "MT": true, "NL": true,
	"PL": true, "PT": true, "RO": true, "SE": true, "SI": true, "SK": true, "XI": true,
}

// registryCall is one call to the registry a number routes to.
type registryCall func(ctx context.Context, cc, body string) Result

// Check looks vatNumber up. It never returns invalid for an outage: see the
// package doc for the decision table.
func (s *Service) Check(ctx context.Context, vatNumber string) Result {
	prefix, body, err := s.syntax(vatNumber)
	if err != nil {
		if body == "" {
			body = compact(vatNumber)
			if len(body) > 64 {
				body = body[:64]
			}
		}
		return Result{Status: StatusInvalid, CountryCode: viesCountry(prefix), Number: body,
			RequestDate: s.clock(), Fault: FaultSyntax, Detail: "vies: " + clip(err.Error())}
	}
	cc := viesCountry(prefix)
	registry, ask, f := s.route(cc)
	if f != nil {
		return unavailable(registry, cc, body, s.clock(), f.fault, "vies: "+cc+": "+f.detail)
	}
	key := cc + compact(body)
	for {
		if r, ok := s.cache.get(key, s.clock()); ok {
			return r
		}
		res, joined, err := s.flight.do(ctx, key, func() flightResult {
			r := s.lookup(ctx, key, cc, body, ask)
			return flightResult{r: r, abandoned: r.Status == StatusUnavailable && ctx.Err() != nil}
		})
		switch {
		case err != nil:
			f := stopped(ctx, err)
			return unavailable(registry, cc, body, s.clock(), f.fault, "vies: "+cc+": "+f.detail)
		case joined && res.abandoned:
			// The caller that made the shared call gave up; this one has
			// not: look again (it may become the one that calls).
			continue
		}
		return res.r
	}
}

// Registries returns the registries this Service asks, in a fixed order:
// RegistryVIES when a VIES client is configured, RegistryHMRC when an HMRC
// client is. Empty means lookups are off: every number that passes the
// syntax check is unavailable (REGISTRY_OFF). It lets a caller say
// truthfully which lookups a deployment performs (the engine's published
// capabilities).
func (s *Service) Registries() []string {
	var out []string
	if s.vies != nil {
		out = append(out, RegistryVIES)
	}
	if s.hmrc != nil {
		out = append(out, RegistryHMRC)
	}
	return out
}

// route picks the registry for a country code.
func (s *Service) route(cc string) (string, registryCall, *failure) {
	switch {
	case cc == "GB":
		if s.hmrc == nil {
			return RegistryHMRC, nil, &failure{FaultRegistryOff, "HMRC lookups are off (no HMRC client configured)"}
		}
		return RegistryHMRC, func(ctx context.Context, _, body string) Result { return s.hmrc.Check(ctx, body) }, nil
	case viesCountries[cc]:
		if s.vies == nil {
			return RegistryVIES, nil, &failure{FaultRegistryOff, "VIES lookups are off (no VIES client configured)"}
		}
		return RegistryVIES, s.vies.Check, nil
	case cc == "EU":
		return "", nil, &failure{FaultUnsupported, "non-Union OSS (EU) numbers are not in VIES; manual review"}
	}
	return "", nil, &failure{FaultUnsupported, "no registry for this prefix; manual review"}
}

// lookup asks the registry, retrying transient faults, and caches a
// definitive answer.
func (s *Service) lookup(ctx context.Context, key, cc, body string, ask registryCall) Result {
	// Another call may have stored the answer since Check looked.
	if r, ok := s.cache.get(key, s.clock()); ok {
		return r
	}
	var last Result
	for attempt := 1; ; attempt++ {
		if f := s.wait(ctx, cc); f != nil {
			if attempt == 1 {
				return unavailable(registryName(cc), cc, body, s.clock(), f.fault, "vies: "+cc+": "+f.detail)
			}
			last.Detail += "; " + f.detail
			return last
		}
		last = ask(ctx, cc, body)
		last.Attempts = attempt
		if last.Status != StatusUnavailable {
			if last.Status != StatusValid || last.RequestIdentifier != "" || !s.proofExpected(cc) {
				// A valid answer that lacks the identifier the configured
				// requester should have brought is not reused: the next
				// sale asks again and may get its proof.
				s.store(key, last)
			}
			return last
		}
		if attempt >= s.maxAttempts || !Transient(last.Fault) || ctx.Err() != nil {
			return last
		}
		d := s.backoff(attempt)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
			last.Detail += fmt.Sprintf("; no retry: backoff %s ends after the caller's deadline", d)
			return last
		}
		if err := s.sleep(ctx, d); err != nil {
			return last
		}
	}
}

// proofExpected reports whether the registry cc routes to is asked with
// the requester's own number, so that a valid answer should carry a
// requestIdentifier (VIES) or consultationNumber (HMRC).
func (s *Service) proofExpected(cc string) bool {
	if cc == "GB" {
		return s.hmrc != nil && s.hmrc.requester != ""
	}
	return s.vies != nil && s.vies.hasRequester
}

func registryName(cc string) string {
	if cc == "GB" {
		return RegistryHMRC
	}
	return RegistryVIES
}

// store caches a definitive answer for its TTL.
func (s *Service) store(key string, r Result) {
	ttl := s.validTTL
	if r.Status == StatusInvalid {
		ttl = s.invalidTTL
	}
	if ttl > 0 {
		s.cache.put(key, r, s.clock().Add(ttl))
	}
}

// backoff is the full-jitter wait before retry n: uniform in
// [0, min(max, base·2ⁿ⁻¹)).
func (s *Service) backoff(n int) time.Duration {
	ceiling := s.baseBackoff
	for i := 1; i < n && ceiling < s.maxBackoff; i++ {
		if ceiling > s.maxBackoff/2 {
			ceiling = s.maxBackoff
			break
		}
		ceiling *= 2
	}
	ceiling = min(ceiling, s.maxBackoff)
	f := s.rand()
	if !(f >= 0 && f < 1) { // also NaN: a broken Rand must not stretch the wait
		f = 0
	}
	return time.Duration(f * float64(ceiling))
}

// wait takes a rate-limit slot for cc, sleeping with the injected Sleep.
// A slot that would only come after the caller's deadline is given back at
// once: the lookup is RATE_LIMITED, not left to time out.
func (s *Service) wait(ctx context.Context, cc string) *failure {
	if err := ctx.Err(); err != nil {
		return stopped(ctx, err)
	}
	lim := s.limiter(cc)
	now := s.clock()
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return &failure{FaultRateLimited, "local rate limit admits no calls"}
	}
	d := res.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		res.CancelAt(now)
		return &failure{FaultRateLimited, fmt.Sprintf("local rate limit: next slot in %s, after the caller's deadline", d)}
	}
	if err := s.sleep(ctx, d); err != nil {
		res.CancelAt(s.clock())
		return stopped(ctx, err)
	}
	return nil
}

func (s *Service) limiter(cc string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.limiters[cc]
	if !ok {
		l = rate.NewLimiter(s.rate, s.burst)
		s.limiters[cc] = l
	}
	return l
}

// stopped is the failure of a lookup the caller's context ended (err is
// ctx.Err() or what Sleep returned).
func stopped(ctx context.Context, err error) *failure {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &failure{FaultTimeout, "caller's deadline passed before the registry answered"}
	}
	return &failure{FaultCanceled, "caller canceled the lookup"}
}

// sleepContext waits d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
