package webhooks_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		addr string
		want webhooks.AddressClass
	}{
		{"93.184.215.14", webhooks.ClassPublic},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", webhooks.ClassPublic},
		{"1.1.1.1", webhooks.ClassPublic},
		{"127.0.0.1", webhooks.ClassLoopback},
		{"127.255.255.254", webhooks.ClassLoopback},
		{"::1", webhooks.ClassLoopback},
		{"::ffff:127.0.0.1", webhooks.ClassLoopback}, // IPv4-mapped
		{"64:ff9b::7f00:1", webhooks.ClassLoopback},  // NAT64 of 127.0.0.1
		{"2002:7f00:1::", webhooks.ClassLoopback},    // 6to4 of 127.0.0.1
		{"2002:5db8:d70e::1", webhooks.ClassPublic},  // 6to4 of 93.184.215.14
		{"10.1.2.3", webhooks.ClassPrivate},
		{"172.16.0.1", webhooks.ClassPrivate},
		{"172.31.255.255", webhooks.ClassPrivate},
		{"172.32.0.1", webhooks.ClassPublic},
		{"192.168.1.1", webhooks.ClassPrivate},
		{"100.64.0.1", webhooks.ClassPrivate},
		{"100.128.0.1", webhooks.ClassPublic},
		{"fd00::1", webhooks.ClassPrivate},
		{"::ffff:10.0.0.1", webhooks.ClassPrivate},
		{"64:ff9b::a00:1", webhooks.ClassPrivate},
		{"64:ff9b:1::1", webhooks.ClassPrivate},
		{"169.254.169.254", webhooks.ClassLinkLocal}, // cloud metadata
		{"fe80::1", webhooks.ClassLinkLocal},
		{"fe80::1%eth0", webhooks.ClassLinkLocal},
		{"::ffff:169.254.169.254", webhooks.ClassLinkLocal},
		{"0.0.0.0", webhooks.ClassUnspecified},
		{"0.1.2.3", webhooks.ClassUnspecified},
		{"::", webhooks.ClassUnspecified},
		{"224.0.0.1", webhooks.ClassLinkLocal}, // 224.0.0.0/24 is link-local multicast (RFC 5771 §4)
		{"233.252.0.1", webhooks.ClassMulticast},
		{"239.1.1.1", webhooks.ClassMulticast},
		{"ff02::1", webhooks.ClassLinkLocal},
		{"ff05::1", webhooks.ClassMulticast},
		{"255.255.255.255", webhooks.ClassReserved},
		{"240.0.0.1", webhooks.ClassReserved},
		{"192.0.2.10", webhooks.ClassReserved},
		{"198.18.0.1", webhooks.ClassReserved},
		{"2001:db8::1", webhooks.ClassReserved},
		{"2001:0:4136:e378::1", webhooks.ClassReserved}, // Teredo
		{"100::1", webhooks.ClassReserved},
	}
	for _, tc := range cases {
		if got := webhooks.Classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Classify(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
	if got := webhooks.Classify(netip.Addr{}); got != webhooks.ClassInvalid {
		t.Errorf("Classify(zero) = %s", got)
	}
}

func TestCheckAddrPolicies(t *testing.T) {
	addrs := []string{"93.184.215.14", "127.0.0.1", "10.0.0.1", "169.254.169.254", "224.0.0.1"}
	cases := []struct {
		policy webhooks.TargetPolicy
		allow  []bool
	}{
		{webhooks.TargetPolicy{}, []bool{true, false, false, false, false}},
		{webhooks.TargetPolicy{AllowLoopback: true}, []bool{true, true, false, false, false}},
		{webhooks.TargetPolicy{AllowPrivate: true}, []bool{true, false, true, false, false}},
		{webhooks.TargetPolicy{AllowLoopback: true, AllowPrivate: true}, []bool{true, true, true, false, false}},
	}
	for _, tc := range cases {
		for i, a := range addrs {
			err := tc.policy.CheckAddr(netip.MustParseAddr(a))
			if (err == nil) != tc.allow[i] {
				t.Errorf("%+v %s: %v, want allowed=%v", tc.policy, a, err, tc.allow[i])
			}
			if err != nil && !errors.Is(err, webhooks.ErrAddressNotAllowed) {
				t.Errorf("%s: error %v does not wrap ErrAddressNotAllowed", a, err)
			}
		}
	}
}

func TestCheckURL(t *testing.T) {
	strict := webhooks.TargetPolicy{}
	local := webhooks.TargetPolicy{AllowLoopback: true}
	cases := []struct {
		url    string
		policy webhooks.TargetPolicy
		want   error
	}{
		{"https://hooks.example.com/fiscal402", strict, nil},
		{"https://hooks.example.com:8443/a?b=c", strict, nil},
		{"https://93.184.215.14/x", strict, nil},
		{"https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/x", strict, nil},
		{"https://xn--bcher-kva.example/", strict, nil},
		{"http://hooks.example.com/", strict, webhooks.ErrBadURL},
		{"http://hooks.example.com/", local, webhooks.ErrBadURL}, // http only to loopback
		{"http://127.0.0.1:9000/hook", local, nil},
		{"http://localhost:9000/hook", local, nil},
		{"http://[::1]:9000/hook", local, nil},
		{"https://127.0.0.1/hook", local, nil},
		{"http://127.0.0.1:9000/hook", strict, webhooks.ErrAddressNotAllowed},
		{"https://127.0.0.1/hook", strict, webhooks.ErrAddressNotAllowed},
		{"https://localhost/hook", strict, webhooks.ErrAddressNotAllowed},
		{"https://api.localhost/hook", strict, webhooks.ErrAddressNotAllowed},
		{"https://10.0.0.5/hook", strict, webhooks.ErrAddressNotAllowed},
		{"https://10.0.0.5/hook", webhooks.TargetPolicy{AllowPrivate: true}, nil},
		{"https://169.254.169.254/latest/meta-data", webhooks.TargetPolicy{AllowLoopback: true, AllowPrivate: true}, webhooks.ErrAddressNotAllowed},
		{"https://[::ffff:127.0.0.1]/", strict, webhooks.ErrAddressNotAllowed},
		{"https://[fe80::1%25eth0]/", local, webhooks.ErrBadURL},
		{"ftp://hooks.example.com/", strict, webhooks.ErrBadURL},
		{"hooks.example.com/x", strict, webhooks.ErrBadURL},
		{"https:///x", strict, webhooks.ErrBadURL},
		{"https://user:pw@hooks.example.com/", strict, webhooks.ErrBadURL},
		{"https://hooks.example.com/#frag", strict, webhooks.ErrBadURL},
		{"https://hooks.example.com:0/", strict, webhooks.ErrBadURL},
		{"https://hooks.example.com:70000/", strict, webhooks.ErrBadURL},
		{"https://bad host.example/", strict, webhooks.ErrBadURL},
		{"https://-bad.example/", strict, webhooks.ErrBadURL},
		{"https://bücher.example/", strict, webhooks.ErrBadURL},
		{"https://127.1/", strict, webhooks.ErrBadURL},      // inet_aton form of 127.0.0.1
		{"https://2130706433/", strict, webhooks.ErrBadURL}, // 127.0.0.1 as one number
		{"https://0x7f.1/", strict, webhooks.ErrBadURL},
		{"https://a.0x7f/", strict, webhooks.ErrBadURL},
		{"https://hooks.example.123/", strict, webhooks.ErrBadURL},
		{"https://123.example.com/", strict, nil}, // numeric labels are fine below the TLD
		{"https://" + strings.Repeat("a", 64) + ".example/", strict, webhooks.ErrBadURL},
		{"https://hooks.example.com/" + strings.Repeat("a", 2048), strict, webhooks.ErrBadURL},
		{"mailto:x@example.com", strict, webhooks.ErrBadURL},
		{"", strict, webhooks.ErrBadURL},
	}
	for _, tc := range cases {
		_, err := tc.policy.CheckURL(tc.url)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckURL(%q, %+v) = %v, want %v", tc.url, tc.policy, err, tc.want)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://127.0.0.1:1/", "https://[::1]/", "https://a@b/", "https://x%00/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := webhooks.TargetPolicy{}.CheckURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "https" || u.Host == "" || u.User != nil {
			t.Fatalf("accepted %q as %#v", raw, u)
		}
		if a, perr := netip.ParseAddr(u.Hostname()); perr == nil && webhooks.Classify(a) != webhooks.ClassPublic {
			t.Fatalf("accepted non-public literal %q", raw)
		}
	})
}
