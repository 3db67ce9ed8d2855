package httpserver

import (
	"context"
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
// (spec §8 leaves production rate limits open): a sustained 100 requests a
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

// keyOptional serves endpoints where the key is optional (spec §5.8 leaves
// their authentication open; README "Authentication"): without
// X-Service-Key the caller is anonymous; with one, the key must be valid
// (401 otherwise: a mistyped key should not silently turn the caller
// anonymous and charge its address's quota).
func (s *Server) keyOptional(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sent := r.Header["X-Service-Key"]; !sent {
			h(w, r)
			return
		}
		id, err := s.keys.Load().Authenticate(r.Header.Get(HeaderServiceKey))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
			s.problem(w, r, err)
			return
		}
		requestInfoOf(r).account = id
		h(w, r.WithContext(context.WithValue(r.Context(), accountKey{}, id)))
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
