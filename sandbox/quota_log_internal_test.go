package sandbox

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// A client's network address is personal data: the sandbox meters an
// unauthenticated caller by it, but no log line may carry it (README
// "Logs": the request line names the account, never the caller's
// address). The failure to give back a simulation's quota is logged
// without the address it was counted against; an account's is named.
func TestQuotaGiveBackFailureLogsNoAddress(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	cfg := fiscaltest.Config(t, now)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := New(fiscaltest.Engine(t, cfg), Options{})
	eng, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"203.0.113.7", "2001:db8:1234:5678::9"} {
		agent := AddressAgent(netip.MustParseAddr(ip))
		if _, err := s.takeQuota(eng, agent, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil { // every write fails from here on
		t.Fatal(err)
	}
	for _, ip := range []string{"203.0.113.7", "2001:db8:1234:5678::9"} {
		logs.Reset()
		agent := AddressAgent(netip.MustParseAddr(ip))
		s.giveBackQuota(eng, agent, now)
		out := logs.String()
		if !strings.Contains(out, "giving back the quota") {
			t.Fatalf("the failed give-back of %s is not logged: %q", ip, out)
		}
		shown := strings.TrimPrefix(string(agent), "address:")
		shown = strings.TrimSuffix(shown, "::/64")
		if strings.Contains(out, shown) {
			t.Errorf("the log line carries the client's address %s (agent %s): %s", ip, agent, out)
		}
	}
	logs.Reset()
	s.giveBackQuota(eng, AccountAgent("acct_quota"), now)
	if out := logs.String(); !strings.Contains(out, "account:acct_quota") {
		t.Errorf("the failed give-back of an account's quota does not name the account: %q", out)
	}
}
