package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// An Agent is who a sandbox call counts against (the sandbox quota: evaluate and
// simulate, together, Options.QuotaPerDay calls "per agent per day"): the
// account when the caller sent a valid key, otherwise its network address.
// The zero Agent is not metered; it is for in-process callers of the
// library, which pay for their own machine.
type Agent string

// AccountAgent is the agent of an authenticated account.
func AccountAgent(accountID string) Agent { return Agent("account:" + accountID) }

// AddressAgent is the agent of an unauthenticated client address. An IPv6
// address counts as its /64 prefix: a single subscriber usually holds a
// whole /64 (RFC 6177 §2) and could otherwise rotate addresses to reset its
// quota. IPv4-mapped IPv6 addresses count as the IPv4 address.
func AddressAgent(addr netip.Addr) Agent {
	addr = addr.Unmap()
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return Agent("address:" + p.String())
	}
	return Agent("address:" + addr.String())
}

// logged is the agent as a log line may name it: an account by its id, a
// client address not at all. A network address is personal data, which
// no log line carries (README "Logs": the request line names the
// account, never the caller's address).
func (a Agent) logged() string {
	if strings.HasPrefix(string(a), "account:") {
		return string(a)
	}
	return "an unauthenticated client (its address is not logged)"
}

// Quota is an agent's sandbox quota after a call was counted.
type Quota struct {
	Limit     int       // calls per agent per UTC day
	Used      int       // calls counted today, this one included
	Remaining int       // Limit − Used, never negative
	ResetAt   time.Time // the next UTC midnight, when the count starts again
}

// QuotaExceededError is the cause (Error.Err) of a QUOTA_EXCEEDED error: the
// limit and when it resets, for the Retry-After and X-Quota-Reset headers and
// the problem document's reset_at member.
type QuotaExceededError struct {
	Limit   int
	ResetAt time.Time
}

func (e *QuotaExceededError) Error() string {
	return fmt.Sprintf("sandbox: quota of %d calls per day used up until %s", e.Limit, e.ResetAt.Format(time.RFC3339))
}

// The error codes of the sandbox (their statuses are in fiscal's one table).
const (
	// CodeQuotaExceeded: the evaluate + simulate quota of the day is used
	// up (429, with Retry-After until the next UTC midnight).
	CodeQuotaExceeded fiscal.Code = "QUOTA_EXCEEDED"
	// CodeUnsupportedJurisdiction: evaluate's buyer is not an attested
	// EU-27 customer (422).
	CodeUnsupportedJurisdiction fiscal.Code = "UNSUPPORTED_JURISDICTION"
)

// bucketSandboxQuota holds the counters, in the sandbox ledger's side data
// (durable and fsynced, so a restart does not reset a quota):
// key "YYYY-MM-DD" \x00 agent → 8-byte big-endian count, where an
// unauthenticated client's agent is not its address but
// hashedAddressPrefix and a keyed hash of it (quotaDay). Days sort in key
// order, so past days are found at the front and pruned as the day turns,
// whatever follows the day (counters of the former format included).
const bucketSandboxQuota = "sandbox-quota"

// hashedAddressPrefix opens the agent part of an unauthenticated client's
// counter key: a client's network address is personal data (CJEU
// C-582/14 Breyer, ECLI:EU:C:2016:779), and the counters stay in the side
// data, and in every backup of the data directory, until pruned; the key
// holds the HMAC-SHA256 of the agent under the production record-id key
// instead (fiscal.Engine.RecordID), which reveals nothing to whoever reads
// the file without that key.
const hashedAddressPrefix = "address-hmac:"

// maxQuotaPrune bounds the stale counters one call deletes, so that a call
// never pays for a long backlog; the rest go with later calls.
const maxQuotaPrune = 64

// takeQuota counts one sandbox call for agent today and returns the quota
// after it, or a QUOTA_EXCEEDED error (429, Retry-After until the next UTC
// midnight) without counting when the day's calls are used up. The zero
// agent is not metered (nil, nil). Counting and checking happen in one
// ledger write transaction, so concurrent calls cannot both take the last
// unit.
func (s *Sandbox) takeQuota(eng *fiscal.Engine, agent Agent, now time.Time) (*Quota, error) {
	if agent == "" || s.quota < 0 {
		return nil, nil
	}
	now = now.UTC()
	day, key, former, reset, err := s.quotaDay(agent, now)
	if err != nil {
		return nil, err
	}
	limit := s.quota
	var used int
	err = eng.Ledger().Update(func(tx ledger.Tx) error {
		if err := pruneQuota(tx, day); err != nil {
			return err
		}
		if err := moveFormerCounter(tx, key, former); err != nil {
			return err
		}
		if used = quotaUsed(tx, key); used >= limit {
			return quotaExceeded(limit, now, reset)
		}
		used++
		return tx.Put(bucketSandboxQuota, key, binary.BigEndian.AppendUint64(nil, uint64(used)))
	})
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == CodeQuotaExceeded {
		return nil, err
	}
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	return &Quota{Limit: limit, Used: used, Remaining: max(limit-used, 0), ResetAt: reset}, nil
}

// giveBackQuota uncounts one call of agent on the day of now, counted by
// takeQuota for a simulation that then failed: a failed call does not
// consume quota. A counter already pruned (the day has turned) has
// nothing to give back; a failure to write is logged, the caller's own
// error being the answer.
func (s *Sandbox) giveBackQuota(eng *fiscal.Engine, agent Agent, now time.Time) {
	if agent == "" || s.quota < 0 {
		return
	}
	_, key, former, _, err := s.quotaDay(agent, now.UTC())
	if err != nil {
		return
	}
	err = eng.Ledger().Update(func(tx ledger.Tx) error {
		if err := moveFormerCounter(tx, key, former); err != nil {
			return err
		}
		switch used := quotaUsed(tx, key); {
		case used > 1:
			return tx.Put(bucketSandboxQuota, key, binary.BigEndian.AppendUint64(nil, uint64(used-1)))
		case used == 1:
			return tx.Delete(bucketSandboxQuota, key)
		}
		return nil
	})
	if err != nil {
		s.prod.Settings().Logger.Error("sandbox: giving back the quota of a failed simulation", "agent", agent.logged(), "err", err)
	}
}

// quotaExceeded is the QUOTA_EXCEEDED error of a used-up quota.
func quotaExceeded(limit int, now, reset time.Time) error {
	return &fiscal.Error{
		Code:       CodeQuotaExceeded,
		Detail:     fmt.Sprintf("the sandbox quota of %d evaluate and simulate calls per day is used up; it resets at %s", limit, reset.Format(time.RFC3339)),
		RetryAfter: reset.Sub(now),
		Err:        &QuotaExceededError{Limit: limit, ResetAt: reset},
	}
}

// checkQuota answers QUOTA_EXCEEDED, counting nothing, when agent's calls
// of today are used up: a call whose validity is known only after work
// that costs (a simulation's chain verification) is refused before it,
// and counted (takeQuota) once it is known valid, so that a refused
// request does not count.
func (s *Sandbox) checkQuota(eng *fiscal.Engine, agent Agent, now time.Time) error {
	if agent == "" || s.quota < 0 {
		return nil
	}
	now = now.UTC()
	_, key, former, reset, err := s.quotaDay(agent, now)
	if err != nil {
		return err
	}
	var used int
	err = eng.Ledger().View(func(tx ledger.Tx) error {
		used = quotaUsed(tx, key)
		if former != nil {
			used += quotaUsed(tx, former)
		}
		return nil
	})
	if err != nil {
		return fiscal.StoreError(err)
	}
	if used >= s.quota {
		return quotaExceeded(s.quota, now, reset)
	}
	return nil
}

// quotaDay is agent's counter of the UTC day of now: the day, the
// counter's key, the key the same counter had before client addresses
// were hashed (nil for an account, whose key did not change) and when it
// resets (the next UTC midnight). An address agent's key holds
// hashedAddressPrefix and the keyed hash of the agent, never the address.
func (s *Sandbox) quotaDay(agent Agent, now time.Time) (day string, key, former []byte, reset time.Time, err error) {
	if strings.ContainsRune(string(agent), 0) || len(agent) > 200 {
		return "", nil, nil, time.Time{}, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "invalid agent", Err: errors.New("an agent with a NUL or over 200 bytes")}
	}
	day = now.Format(time.DateOnly)
	reset = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	if strings.HasPrefix(string(agent), "account:") {
		return day, []byte(day + "\x00" + string(agent)), nil, reset, nil
	}
	sum := strings.TrimPrefix(s.prod.RecordID(bucketSandboxQuota, string(agent)), "x402-")
	return day, []byte(day + "\x00" + hashedAddressPrefix + sum), []byte(day + "\x00" + string(agent)), reset, nil
}

// moveFormerCounter adds the count a counter holds under its former key
// (day \x00 "address:<ip>", written before addresses were hashed) to its
// key and deletes the former one, so that on the day of the change a
// client's quota is neither reset nor counted twice and its address does
// not stay on disk. A former key of a past day is pruned with its day.
func moveFormerCounter(tx ledger.Tx, key, former []byte) error {
	if former == nil {
		return nil
	}
	n := quotaUsed(tx, former)
	if n == 0 && tx.Get(bucketSandboxQuota, former) == nil {
		return nil
	}
	if err := tx.Delete(bucketSandboxQuota, former); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return tx.Put(bucketSandboxQuota, key, binary.BigEndian.AppendUint64(nil, uint64(quotaUsed(tx, key)+n)))
}

// quotaUsed is the count the counter key holds (0 when absent).
func quotaUsed(tx ledger.Tx, key []byte) int {
	if v := tx.Get(bucketSandboxQuota, key); len(v) == 8 {
		return int(binary.BigEndian.Uint64(v))
	}
	return 0
}

// pruneQuota deletes up to maxQuotaPrune counters of days before today.
func pruneQuota(tx ledger.Tx, today string) error {
	var stale [][]byte
	err := tx.Scan(bucketSandboxQuota, nil, nil, false, func(k, _ []byte) bool {
		if string(k) >= today || len(stale) == maxQuotaPrune {
			return false
		}
		stale = append(stale, append([]byte(nil), k...))
		return true
	})
	if err != nil {
		return err
	}
	for _, k := range stale {
		if err := tx.Delete(bucketSandboxQuota, k); err != nil {
			return err
		}
	}
	return nil
}
