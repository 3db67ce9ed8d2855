package sandbox

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// quotaKeys is every counter key of the sandbox quota, with its count.
func quotaKeys(t *testing.T, s *Sandbox) map[string]int {
	t.Helper()
	eng, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	err = eng.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan(bucketSandboxQuota, nil, nil, false, func(k, v []byte) bool {
			keys[string(k)] = int(binary.BigEndian.Uint64(v))
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// A client's network address is personal data (CJEU C-582/14 Breyer,
// ECLI:EU:C:2016:779): the quota counters, kept in the sandbox ledger's
// side data and in every backup of the data directory, must not hold it
// in clear. The counter of an unauthenticated client is keyed by a keyed
// hash of its address, which reveals nothing without the service's
// record-id key; two addresses still count apart, and an IPv6 /64 counts
// as one.
func TestQuotaCounterKeepsNoAddressInClear(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := New(fiscaltest.Engine(t, fiscaltest.Config(t, now)), Options{QuotaPerDay: 5})
	eng, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		ip   string
		used int
	}{{"203.0.113.7", 1}, {"2001:db8:1234:5678::9", 1}, {"203.0.113.7", 2}, {"2001:db8:1234:5678::abcd", 2}, {"198.51.100.1", 1}}
	for _, c := range calls {
		q, err := s.takeQuota(eng, AddressAgent(netip.MustParseAddr(c.ip)), now)
		if err != nil {
			t.Fatal(err)
		}
		if q.Used != c.used {
			t.Errorf("call from %s: used %d, want %d", c.ip, q.Used, c.used)
		}
	}
	keys := quotaKeys(t, s)
	if len(keys) != 3 {
		t.Errorf("%d counters for three agents: %v", len(keys), keys)
	}
	for k := range keys {
		for _, shown := range []string{"203.0.113.7", "198.51.100.1", "2001:db8", "203.0.113", "address:"} {
			if strings.Contains(k, shown) {
				t.Errorf("the quota counter key %q holds the client's address (%s) in clear", k, shown)
			}
		}
	}
}

// Counters written under the former key ("day" \x00 "address:<ip>"),
// before the address was hashed, are honoured on the day of the change (a
// client's count is neither reset nor doubled: the old counter is moved
// under the new key) and pruned with their day like any other.
func TestQuotaFormerAddressKeys(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := New(fiscaltest.Engine(t, fiscaltest.Config(t, now)), Options{QuotaPerDay: 3})
	eng, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	agent := AddressAgent(netip.MustParseAddr("203.0.113.7"))
	old := func(day string) []byte { return []byte(day + "\x00" + string(agent)) }
	err = eng.Ledger().Update(func(tx ledger.Tx) error {
		if err := tx.Put(bucketSandboxQuota, old("2026-11-20"), binary.BigEndian.AppendUint64(nil, 3)); err != nil {
			return err
		}
		return tx.Put(bucketSandboxQuota, old("2026-11-21"), binary.BigEndian.AppendUint64(nil, 2))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.checkQuota(eng, agent, now); err != nil {
		t.Fatalf("check with 2 of 3 calls used under the former key: %v", err)
	}
	q, err := s.takeQuota(eng, agent, now)
	if err != nil {
		t.Fatal(err)
	}
	if q.Used != 3 {
		t.Errorf("used %d after 2 counted under the former key and one more, want 3", q.Used)
	}
	if err := s.checkQuota(eng, agent, now); err == nil {
		t.Error("check after the quota was used up across the change: allowed")
	}
	if _, err := s.takeQuota(eng, agent, now); err == nil {
		t.Error("a fourth call of a quota of 3 across the change: allowed")
	}
	for k := range quotaKeys(t, s) {
		if bytes.Contains([]byte(k), []byte("203.0.113.7")) {
			t.Errorf("a counter under the former key is left: %q", k)
		}
	}
	s.giveBackQuota(eng, agent, now)
	if err := s.checkQuota(eng, agent, now); err != nil {
		t.Errorf("check after a unit was given back: %v", err)
	}
}
