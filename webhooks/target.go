package webhooks

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Errors of TargetPolicy.
var (
	// ErrBadURL: an endpoint URL that is malformed or uses a scheme other
	// than https (http only to loopback, when allowed).
	ErrBadURL = errors.New("webhooks: endpoint URL not acceptable")
	// ErrAddressNotAllowed: the endpoint's address (literal, or as resolved
	// at connect time) is loopback, private, link-local or otherwise not a
	// public unicast address, and the policy does not allow it.
	ErrAddressNotAllowed = errors.New("webhooks: endpoint address not allowed")
)

// TargetPolicy says which endpoint addresses deliveries may reach. The zero
// value allows public unicast addresses only: a webhook URL is chosen by a
// merchant, and without this check it could make the service call into its
// own network (SSRF; Standard Webhooks, "Server side request forgery (SSRF)",
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
type TargetPolicy struct {
	// AllowLoopback allows 127.0.0.0/8, ::1 and "localhost", and plain
	// http:// to them (tests, local development). false refuses them.
	AllowLoopback bool
	// AllowPrivate allows private and shared address space (10/8,
	// 172.16/12, 192.168/16, 100.64/10, fc00::/7), for receivers on the
	// operator's own network. false refuses them.
	AllowPrivate bool
}

// AddressClass names why an address is special (RFC 6890 and the IANA
// special-purpose address registries).
type AddressClass string

// The address classes. Link-local, unspecified, multicast and reserved
// addresses are refused under every policy: link-local holds the cloud
// metadata services (169.254.169.254), and none of the others can host a
// webhook receiver.
const (
	ClassPublic      AddressClass = "public"
	ClassLoopback    AddressClass = "loopback"    // RFC 1122 §3.2.1.3, RFC 4291 §2.5.3
	ClassPrivate     AddressClass = "private"     // RFC 1918, RFC 6598, RFC 4193, RFC 8215
	ClassLinkLocal   AddressClass = "link-local"  // RFC 3927, RFC 4291 §2.5.6
	ClassUnspecified AddressClass = "unspecified" // RFC 1122 "this host", RFC 4291 §2.5.2
	ClassMulticast   AddressClass = "multicast"   // RFC 5771, RFC 4291 §2.7
	ClassReserved    AddressClass = "reserved"    // documentation, benchmarking, future use, broadcast, discard
	ClassInvalid     AddressClass = "invalid"     // not an IP address
)

// special lists the non-public prefixes that netip's predicates do not
// cover, with their source (IANA IPv4/IPv6 Special-Purpose Address
// Registries, RFC 6890).
var special = []struct {
	prefix netip.Prefix
	class  AddressClass
}{
	{netip.MustParsePrefix("0.0.0.0/8"), ClassUnspecified},    // RFC 1122 §3.2.1.3 "this network"
	{netip.MustParsePrefix("100.64.0.0/10"), ClassPrivate},    // RFC 6598 shared address space (CGN)
	{netip.MustParsePrefix("192.0.0.0/24"), ClassReserved},    // RFC 6890 IETF protocol assignments
	{netip.MustParsePrefix("192.0.2.0/24"), ClassReserved},    // RFC 5737 TEST-NET-1
	{netip.MustParsePrefix("198.18.0.0/15"), ClassReserved},   // RFC 2544 benchmarking
	{netip.MustParsePrefix("198.51.100.0/24"), ClassReserved}, // RFC 5737 TEST-NET-2
	{netip.MustParsePrefix("203.0.113.0/24"), ClassReserved},  // RFC 5737 TEST-NET-3
	{netip.MustParsePrefix("240.0.0.0/4"), ClassReserved},     // RFC 1112 §4 reserved, incl. 255.255.255.255
	{netip.MustParsePrefix("64:ff9b:1::/48"), ClassPrivate},   // RFC 8215 local-use IPv4/IPv6 translation
	{netip.MustParsePrefix("100::/64"), ClassReserved},        // RFC 6666 discard-only
	{netip.MustParsePrefix("2001::/32"), ClassReserved},       // RFC 4380 Teredo: tunnels to an embedded IPv4 address
	{netip.MustParsePrefix("2001:2::/48"), ClassReserved},     // RFC 5180 benchmarking
	{netip.MustParsePrefix("2001:db8::/32"), ClassReserved},   // RFC 3849 documentation
	{netip.MustParsePrefix("3fff::/20"), ClassReserved},       // RFC 9637 documentation
}

// Prefixes whose addresses embed an IPv4 address: the embedded address is
// classified instead, so 64:ff9b::7f00:1 is loopback, not public.
var (
	// globalUnicast is the only IPv6 space IANA allocates for global
	// unicast (IANA IPv6 Address Space registry; RFC 4291 §2.4); what lies
	// outside it and outside the ULA, link-local and multicast prefixes is
	// reserved by the IETF: the deprecated IPv4-compatible ::a.b.c.d (RFC
	// 4291 §2.5.5.1), which embeds any IPv4 address (::127.0.0.1), and
	// 5f00::/16 (SRv6 SIDs, RFC 9602) among them.
	globalUnicast = netip.MustParsePrefix("2000::/3")
	nat64Prefix   = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 §2.1 well-known prefix
	sixToFour     = netip.MustParsePrefix("2002::/16")    // RFC 3056 §2
)

// Classify returns the class of an IP address. IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses
// are classified by the IPv4 address they carry.
func Classify(a netip.Addr) AddressClass {
	if !a.IsValid() {
		return ClassInvalid
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a):
			return Classify(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return Classify(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case a.IsUnspecified():
		return ClassUnspecified
	case a.IsLoopback():
		return ClassLoopback
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return ClassLinkLocal
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return ClassMulticast
	case a.IsPrivate():
		return ClassPrivate
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.class
		}
	}
	if a.Is6() && !globalUnicast.Contains(a) {
		return ClassReserved
	}
	return ClassPublic
}

// AddressError is the error of CheckAddr: the address refused and its
// class. It wraps ErrAddressNotAllowed.
type AddressError struct {
	Addr  netip.Addr
	Class AddressClass
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("%v: %s is a %s address", ErrAddressNotAllowed, e.Addr, e.Class)
}

func (e *AddressError) Unwrap() error { return ErrAddressNotAllowed }

// CheckAddr returns nil when deliveries may connect to a, and otherwise an
// *AddressError (wrapping ErrAddressNotAllowed) that names the address's
// class.
func (p TargetPolicy) CheckAddr(a netip.Addr) error {
	switch c := Classify(a); {
	case c == ClassPublic,
		c == ClassLoopback && p.AllowLoopback,
		c == ClassPrivate && p.AllowPrivate:
		return nil
	default:
		return &AddressError{Addr: a, Class: c}
	}
}

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// CheckURL parses and checks an endpoint URL when it is registered: https
// (or http to a loopback host when AllowLoopback), a host, no credentials,
// no fragment, and a literal IP address or "localhost" the policy allows.
// Host names are checked again where it matters, at connect time, against
// the addresses they resolve to (see HTTPSender).
func (p TargetPolicy) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadURL, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Not net/url's message as it is: it quotes the whole URL,
		// user:password and query token included, and this error reaches
		// the operator's log (a refused accounts file; shownURL). What
		// went wrong (a bad port, escape or host character) is enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: the URL does not parse: %v", ErrBadURL, err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("%w: the scheme must be https", ErrBadURL)
	case u.Opaque != "" || u.Host == "":
		return nil, fmt.Errorf("%w: an absolute URL with a host is required", ErrBadURL)
	case u.User != nil:
		return nil, fmt.Errorf("%w: credentials in the URL are not accepted (deliveries are authenticated by their signature)", ErrBadURL)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("%w: a fragment is not sent to servers", ErrBadURL)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: port %q", ErrBadURL, port)
		}
	}
	host := u.Hostname()
	loopback := false
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return nil, fmt.Errorf("%w: zoned IPv6 address", ErrBadURL)
		}
		if err := p.CheckAddr(a); err != nil {
			return nil, err
		}
		loopback = Classify(a) == ClassLoopback
	} else {
		if !validHostname(host) || numericTLD(host) {
			return nil, fmt.Errorf("%w: host %q is neither a DNS name nor an IP address", ErrBadURL, host)
		}
		// RFC 6761 §6.3: localhost and its subdomains are loopback.
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		if name == "localhost" || strings.HasSuffix(name, ".localhost") {
			if !p.AllowLoopback {
				return nil, fmt.Errorf("%w: %s is a loopback name", ErrAddressNotAllowed, host)
			}
			loopback = true
		}
	}
	if u.Scheme == "http" && !loopback {
		return nil, fmt.Errorf("%w: the scheme must be https (http only to a loopback host, and only when the configuration allows it)", ErrBadURL)
	}
	if u.Scheme == "http" && !p.AllowLoopback {
		return nil, fmt.Errorf("%w: the scheme must be https", ErrBadURL)
	}
	return u, nil
}

// sameTarget reports whether the endpoint URLs a and b (both accepted by
// CheckURL) name one target: equal once normalised as RFC 3986 section
// 6.2.2 and 6.2.3 (https://www.rfc-editor.org/rfc/rfc3986#section-6.2)
// allow: the scheme and host in lower case, percent-encoded unreserved
// characters decoded and other escapes in upper case, the scheme's default
// port and an empty path ("/") dropped. Path case, query and reserved
// escapes still tell URLs apart.
func sameTarget(a, b string) bool { return a == b || targetKey(a) == targetKey(b) }

func targetKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	path := normalEscapes(u.EscapedPath())
	if path == "" {
		path = "/"
	}
	query := ""
	if u.ForceQuery || u.RawQuery != "" {
		query = "?" + normalEscapes(u.RawQuery)
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + "\x00" + port + path + query
}

// normalEscapes decodes the percent-encoded unreserved characters of s
// (ALPHA, DIGIT, "-", ".", "_", "~"; RFC 3986 section 2.3) and writes the
// other escapes' hex digits in upper case (section 6.2.2.1).
func normalEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			b.WriteByte(s[i])
			continue
		}
		c := byte(v)
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			b.WriteString(strings.ToUpper(s[i : i+3]))
		}
		i += 2
	}
	return b.String()
}

// numericTLD reports whether the last label of h is numeric (decimal, or
// hex with 0x). No top-level domain is (RFC 3696 §2), but resolvers read
// such names as the legacy IPv4 forms of inet_aton ("127.1", "0x7f.1",
// "2130706433"), a classic way to hide a loopback address from a check.
func numericTLD(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if rest, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		last = rest
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// validHostname reports whether h is an ASCII DNS name (RFC 1123 §2.1
// labels; internationalised names are given in their A-label form).
func validHostname(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
