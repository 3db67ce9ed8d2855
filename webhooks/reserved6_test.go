package webhooks_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestClassifyIPv6OutsideGlobalUnicast: IANA allocates only 2000::/3 as
// IPv6 global unicast (IANA IPv6 Address Space registry); the rest of the
// space outside the ULA, link-local and multicast prefixes is reserved by
// the IETF. The deprecated IPv4-compatible addresses ::a.b.c.d (RFC 4291
// §2.5.5.1) embed an IPv4 address, a loopback or cloud-metadata one
// included, and were classified public, so an endpoint such as
// https://[::127.0.0.1]/ or https://[::169.254.169.254]/ was accepted.
// The IETF special-purpose prefixes 2001:2::/48 (benchmarking, RFC 5180)
// and 5f00::/16 (SRv6 SIDs, RFC 9602) are not globally reachable either
// (IANA IPv6 Special-Purpose Address Registry).
func TestClassifyIPv6OutsideGlobalUnicast(t *testing.T) {
	for _, a := range []string{"::127.0.0.1", "::169.254.169.254", "::10.0.0.1", "::8.8.8.8", "::2", "1::1", "4000::1", "5f00::1", "2001:2::1", "e000::1"} {
		addr := netip.MustParseAddr(a)
		if got := webhooks.Classify(addr); got == webhooks.ClassPublic {
			t.Errorf("Classify(%s) = %s: it is not an IPv6 global unicast address", a, got)
		}
		if err := (webhooks.TargetPolicy{}).CheckAddr(addr); !errors.Is(err, webhooks.ErrAddressNotAllowed) {
			t.Errorf("CheckAddr(%s) = %v, want ErrAddressNotAllowed", a, err)
		}
		if _, err := (webhooks.TargetPolicy{AllowPrivate: true}).CheckURL("https://[" + a + "]/hook"); !errors.Is(err, webhooks.ErrAddressNotAllowed) {
			t.Errorf("CheckURL(https://[%s]/hook) = %v, want ErrAddressNotAllowed", a, err)
		}
	}
	for _, a := range []string{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "2a00:1450:4001:80b::200e"} {
		if got := webhooks.Classify(netip.MustParseAddr(a)); got != webhooks.ClassPublic {
			t.Errorf("Classify(%s) = %s, want public (global unicast)", a, got)
		}
	}
}
