package httpserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/sandbox"
)

// Default per-account rate limit of the endpoints that need X-Service-Key
// (our own choice; README "Limits, quota and authentication"): a sustained 100 requests a
// second with bursts of 200, far above what one merchant's settlements need
// and low enough that one account cannot starve the others of the ledger's
// single writer.
const (
	DefaultRateLimit rate.Limit = 100
	DefaultRateBurst int        = 200
)

// rateLimits holds one token bucket per account. The accounts are a fixed
// set, so the map is bounded by it and needs no eviction.
type rateLimits struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	byKey map[string]*rate.Limiter
}

func newRateLimits(limit rate.Limit, burst int) *rateLimits {
	if limit == 0 {
		limit = DefaultRateLimit
	}
	if burst <= 0 {
		burst = max(1, int(2*limit))
		if limit == rate.Inf || burst > 1<<20 {
			burst = 1 << 20
		}
	}
	return &rateLimits{limit: limit, burst: burst, byKey: map[string]*rate.Limiter{}}
}

// allow takes one token of the account's bucket, or answers RATE_LIMITED
// with a Retry-After of when the next token will be there.
func (l *rateLimits) allow(accountID string, now time.Time) error {
	if l.limit == rate.Inf {
		return nil
	}
	l.mu.Lock()
	lim, ok := l.byKey[accountID]
	if !ok {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.byKey[accountID] = lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return &fiscal.Error{Code: codeRateLimited, Detail: "the rate limit allows no request", RetryAfter: time.Hour}
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &fiscal.Error{
			Code:       codeRateLimited,
			Detail:     fmt.Sprintf("more than %s requests per second (burst %d) for this account; retry after the Retry-After interval", strconv.FormatFloat(float64(l.limit), 'f', -1, 64), l.burst),
			RetryAfter: d,
		}
	}
	return nil
}

// Defaults of the limit on failed authentication per client address
// (Options.AuthFailureRate, AuthFailureBurst, AuthFailureMaxBackoff): ten
// wrong keys at once, then one every five seconds; each further wrong key
// over that blocks the address for twice as long as the block before (1 s,
// 2 s, 4 s, ...) up to ten minutes. A real client that mistypes its key
// never meets it; a guesser gets a few thousand tries a day against keys of
// 128 random bits.
const (
	DefaultAuthFailureRate       rate.Limit    = 0.2
	DefaultAuthFailureBurst      int           = 10
	DefaultAuthFailureMaxBackoff time.Duration = 10 * time.Minute
	authFailureMinBlock                        = time.Second
	// maxAuthFailureAddrs bounds the addresses remembered; past it the
	// ones whose bucket is full again and whose block is over are
	// forgotten first.
	maxAuthFailureAddrs = 1 << 16
)

// authFailures limits failed authentication per client address (IPv6 per
// /64): a token bucket of failures, and past it a block that doubles with
// each failure over the bucket. A blocked address is answered 429
// RATE_LIMITED before its key is looked at, whatever the key (answering a
// valid key would tell a guesser it found one); the accounts' own buckets
// and every other address are untouched, so a burst of wrong keys slows
// only the address that sends them.
type authFailures struct {
	limit      rate.Limit
	burst      int
	maxBackoff time.Duration
	mu         sync.Mutex
	byAddr     map[netip.Addr]*authFailure
}

type authFailure struct {
	bucket       *rate.Limiter
	strikes      int       // failures over the bucket since it was last full
	blockedUntil time.Time // no authentication from the address before
}

func newAuthFailures(limit rate.Limit, burst int, maxBackoff time.Duration) *authFailures {
	if limit == 0 {
		limit = DefaultAuthFailureRate
	}
	if burst <= 0 {
		burst = DefaultAuthFailureBurst
	}
	if maxBackoff <= 0 {
		maxBackoff = DefaultAuthFailureMaxBackoff
	}
	return &authFailures{limit: limit, burst: burst, maxBackoff: maxBackoff, byAddr: map[netip.Addr]*authFailure{}}
}

// authKey is the unit an address is limited in: an IPv4 address, an IPv6
// /64 (one subscriber's usual allocation).
func authKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// blocked answers RATE_LIMITED while the address is blocked.
func (l *authFailures) blocked(addr netip.Addr, now time.Time) error {
	if l.limit == rate.Inf {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.byAddr[authKey(addr)]
	if f == nil || !now.Before(f.blockedUntil) {
		return nil
	}
	return &fiscal.Error{Code: codeRateLimited, Detail: "too many failed authentications from this address; retry after the Retry-After interval", RetryAfter: f.blockedUntil.Sub(now)}
}

// failed counts a failed authentication from addr; over the bucket it
// blocks the address (doubling) and returns the block's RATE_LIMITED.
func (l *authFailures) failed(addr netip.Addr, now time.Time) error {
	if l.limit == rate.Inf {
		return nil
	}
	key := authKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.byAddr[key]
	if f == nil {
		if len(l.byAddr) >= maxAuthFailureAddrs {
			l.forget(now)
		}
		f = &authFailure{bucket: rate.NewLimiter(l.limit, l.burst)}
		l.byAddr[key] = f
	}
	if f.bucket.TokensAt(now) >= float64(l.burst) {
		f.strikes = 0 // quiet long enough: the backoff starts again
	}
	if f.bucket.AllowN(now, 1) {
		return nil
	}
	f.strikes++
	block := l.maxBackoff
	if f.strikes < 40 {
		block = min(authFailureMinBlock<<(f.strikes-1), l.maxBackoff)
	}
	f.blockedUntil = now.Add(block)
	return &fiscal.Error{Code: codeRateLimited, Detail: "too many failed authentications from this address; retry after the Retry-After interval", RetryAfter: block}
}

// forget drops the addresses that are neither blocked nor owe tokens, and
// if none is, an arbitrary half (the map stays bounded under a flood of
// made-up addresses).
func (l *authFailures) forget(now time.Time) {
	for k, f := range l.byAddr {
		if !now.Before(f.blockedUntil) && f.bucket.TokensAt(now) >= float64(l.burst) {
			delete(l.byAddr, k)
		}
	}
	for k := range l.byAddr {
		if len(l.byAddr) < maxAuthFailureAddrs/2 {
			break
		}
		delete(l.byAddr, k)
	}
}

// authenticate checks an account key under the failure limit of the
// client's address: RATE_LIMITED while the address is blocked (before the
// key is looked at), AUTHENTICATION_FAILED for a wrong key (counted).
func (s *Server) authenticate(r *http.Request, key string) (string, error) {
	addr := s.clientAddr(r)
	now := time.Now()
	if err := s.authFails.blocked(addr, now); err != nil {
		return "", err
	}
	if n := len(r.Header.Values(HeaderServiceKey)); n > 1 {
		// Which one would be meant? Neither is taken (nor counted: it
		// guesses nothing a single key would not).
		return "", &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Field: HeaderServiceKey, Detail: fmt.Sprintf("%s is sent %d times; send one key", HeaderServiceKey, n)}
	}
	id, err := s.keys.Load().Authenticate(key)
	if err != nil {
		if key != "" { // a missing key guesses nothing: not counted
			if blockErr := s.authFails.failed(addr, now); blockErr != nil {
				return "", blockErr
			}
		}
		return "", err
	}
	return id, nil
}

// keyOptional serves endpoints where the key is optional (README "Who
// needs a key"): without
// X-Service-Key the caller is anonymous; with one, the key must be valid
// (401 otherwise: a mistyped key should not silently turn the caller
// anonymous and charge its address's quota).
func (s *Server) keyOptional(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sent := r.Header["X-Service-Key"]; !sent {
			h(w, r)
			return
		}
		id, err := s.authenticate(r, r.Header.Get(HeaderServiceKey))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
			s.problem(w, r, err)
			return
		}
		requestInfoOf(r).account = id
		h(w, actingFor(r, id))
	})
}

// agent is whom a sandbox call counts against: the account when a valid key
// was sent, otherwise the client address.
func (s *Server) agent(r *http.Request) sandbox.Agent {
	if id := accountID(r); id != "" {
		return sandbox.AccountAgent(id)
	}
	return sandbox.AddressAgent(s.clientAddr(r))
}

// clientAddr is the client's address: the connection's peer, or, when the
// peer is a trusted proxy (Options.TrustedProxies), the nearest address in
// X-Forwarded-For that is not a trusted proxy. Addresses are read from the
// right, where the trusted proxies appended them; anything further left was
// written by the client and could be forged. An unreadable entry stops the
// walk at the last proxy.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		// Not a TCP peer (a test transport, a unix socket): one agent.
		return netip.IPv6Unspecified()
	}
	addr := peer.Addr().Unmap()
	if !s.trusted(addr) {
		return addr
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, hop := range strings.Split(v, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			ap, err := netip.ParseAddrPort(hops[i]) // some proxies append the port
			if err != nil {
				break
			}
			a = ap.Addr()
		}
		addr = a.Unmap()
		if !s.trusted(addr) {
			break
		}
	}
	return addr
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// writeQuota states the agent's sandbox quota after a counted call.
func writeQuota(w http.ResponseWriter, q *sandbox.Quota) {
	if q == nil {
		return
	}
	w.Header().Set("X-Quota-Limit", strconv.Itoa(q.Limit))
	w.Header().Set("X-Quota-Remaining", strconv.Itoa(q.Remaining))
	w.Header().Set("X-Quota-Reset", q.ResetAt.UTC().Format(time.RFC3339))
}

// quotaReset returns the reset time of a QUOTA_EXCEEDED error ("" for any
// other error) and states it in the X-Quota-* headers.
func quotaReset(w http.ResponseWriter, err error) string {
	var qe *sandbox.QuotaExceededError
	if !errors.As(err, &qe) {
		return ""
	}
	reset := qe.ResetAt.UTC().Format(time.RFC3339)
	w.Header().Set("X-Quota-Limit", strconv.Itoa(qe.Limit))
	w.Header().Set("X-Quota-Remaining", "0")
	w.Header().Set("X-Quota-Reset", reset)
	return reset
}
