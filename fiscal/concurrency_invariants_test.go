package fiscal_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// TestConcurrentSettlementsMatchTheLogInOrder: many concurrent callers
// (64), four accounts and series, settlements of two calendar years so that
// both running totals cross EUR 10,000, duplicates (Existing, another
// account's conflict), Idempotency-Keys with replays and other bodies,
// contexts that end at random, and two racing resolutions of each pending
// record. The committed log is then read back and checked against an oracle
// computed from it in order: each record states its index; its receipt
// verifies offline and binds the record as stored; invoice numbers agree
// across record, UBL and receipt and run 1..n per series without a gap;
// the Art. 59c rule of every record is the one a decision in log order
// gives, within_threshold and exceeded_by_this_supply state the log's
// totals, and an over-threshold supply states totals at most the log's
// (vat.ThresholdCheck); the stored totals are the replay's; every crossing
// has its account.threshold_crossed event; every answer is the stored
// record; a key answers one record; an ended context wrote nothing and is
// answered as such (no INTERNAL); at most one resolution of a record wins.
// A review (stop 52) wrote it; it found the rule of over-threshold records,
// the crossing event of a caller gone, and a key bound while claimed.
// STRESS_SEED, STRESS_N, STRESS_CALLERS, STRESS_ITERS, STRESS_ACCOUNTS and
// STRESS_NEWYEAR (the series change at New Year during the run) vary it.

var cbcID = regexp.MustCompile(`<cbc:ID>([^<]*)</cbc:ID>`)

func stressTx(n uint64) string {
	var buf [9]byte
	buf[0] = 0x5a
	binary.BigEndian.PutUint64(buf[1:], n)
	sum := sha256.Sum256(buf[:])
	return "0x" + hex.EncodeToString(sum[:])
}

type stressJob struct {
	acct    int
	req     fiscal.SettlementRequest
	key     string
	cancel  time.Duration // >0: the context ends after it
	resolve bool          // resolve the record (pending) afterwards
}

type stressAnswer struct {
	job     int
	outcome fiscal.Outcome
	id      string
	json    []byte
	err     error
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestConcurrentSettlementsMatchTheLogInOrder(t *testing.T) {
	seed := uint64(envInt("STRESS_SEED", 1))
	n := envInt("STRESS_N", 2000)
	if testing.Short() {
		n = 300
	}
	callers := envInt("STRESS_CALLERS", 64)
	iters := envInt("STRESS_ITERS", 2)
	for it := 0; it < iters; it++ {
		t.Run(fmt.Sprintf("seed=%d", seed+uint64(it)), func(t *testing.T) { stressRun(t, seed+uint64(it), n, callers, 1) })
	}
}

// TestConcurrentSettlementsOnTwoReplicas is the same run spread over two
// replicas of one PostgreSQL log (a load balancer in front of two
// servers): the log must read as if one engine had decided every record in
// log order (Art. 59c totals, one crossing per account and year, gap-free
// invoice numbers, one record per key and payment).
func TestConcurrentSettlementsOnTwoReplicas(t *testing.T) {
	n := envInt("STRESS_N", 600)
	if testing.Short() {
		n = 200
	}
	stressRun(t, uint64(envInt("STRESS_SEED", 1)), n, envInt("STRESS_CALLERS", 32), 2)
}

// stressRun settles n drawn jobs from callers goroutines on one engine, or
// on replicas engines sharing one PostgreSQL log (job i on replica i mod
// replicas), then checks the log against a sequential replay.
func stressRun(t *testing.T, seed uint64, n, callers, replicas int) {
	small := func(name, prefix string) fiscal.Seller {
		s := smallIrishSeller
		s.LegalName, s.InvoicePrefix = name, prefix
		return s
	}
	over := fiscaltest.IrishSeller
	over.InvoicePrefix = "OV-"
	sellers := []fiscal.Seller{small("Small A Ltd", ""), small("Small B Ltd", "B-"), over, small("Small C Ltd", "C-")}
	if k := envInt("STRESS_ACCOUNTS", 0); k > 0 {
		sellers = sellers[:k]
	}
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	if os.Getenv("STRESS_NEWYEAR") != "" {
		// the invoice series change during the run (one per calendar year of issue)
		start = time.Date(2026, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
	}
	cfg := fiscaltest.Config(t, start, sellers...)
	var ticks atomic.Int64
	cfg.Clock = func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Microsecond) }
	engines := []*fiscal.Engine{}
	if replicas > 1 {
		engines = replicaEngines(t, cfg, replicas)
	} else {
		engines = append(engines, fiscaltest.Engine(t, cfg))
	}
	e := engines[0]
	replicaBooks := make([][]*fiscal.Books, len(engines))
	for r, en := range engines {
		for i := range sellers {
			replicaBooks[r] = append(replicaBooks[r], fiscaltest.Books(t, en, i))
		}
	}
	books := replicaBooks[0]
	rng := rand.New(rand.NewPCG(seed, 99))
	countries := []string{"DE", "FR", "IT", "ES", "IE", "NL", ""}
	stamps := []string{"2026-04-10T14:30:00Z", "2026-03-02T09:00:00Z", "2025-12-15T10:00:00Z", "2026-01-20T10:00:00Z"}
	jobs := make([]stressJob, 0, n)
	for i := 0; i < n; i++ {
		j := stressJob{acct: rng.IntN(len(sellers))}
		amt := decimal.New(int64(2000+rng.IntN(60000)), -2) // 20.00 .. 620.00 USDC
		j.req = fiscal.SettlementRequest{
			AmountUSDC: amt.StringFixed(2), TxHash: stressTx(uint64(i)), Timestamp: stamps[rng.IntN(len(stamps))],
			PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
			Network: "eip155:8453", ConsumerCountry: countries[rng.IntN(len(countries))],
		}
		switch r := rng.IntN(100); {
		case r < 8 && i > 0: // a duplicate of an earlier payment (same account: Existing; another: conflict)
			k := rng.IntN(i)
			j.req = jobs[k].req
			if rng.IntN(3) > 0 {
				j.acct = jobs[k].acct
			}
			if jobs[k].key != "" && rng.IntN(2) == 0 {
				j.key = jobs[k].key // a replay of the key
			}
		case r < 12 && i > 0: // an earlier key with another request: IDEMPOTENCY_CONFLICT
			k := rng.IntN(i)
			if jobs[k].key != "" {
				j.key, j.acct = jobs[k].key, jobs[k].acct
			}
		case r < 45:
			j.key = fmt.Sprintf("key-%d", i)
		}
		if rng.IntN(100) < 12 {
			j.cancel = time.Duration(rng.IntN(3000)) * time.Microsecond
		}
		if j.req.ConsumerCountry == "" && rng.IntN(2) == 0 {
			j.resolve = true
		}
		jobs = append(jobs, j)
	}
	answers := make([]stressAnswer, n)
	var resolveAnswers sync.Map // record id -> []stressAnswer
	var resolveMu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range callers {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if j.cancel > 0 {
					ctx, cancel = context.WithTimeout(ctx, j.cancel)
				}
				res, err := replicaBooks[i%len(engines)][j.acct].Settle(ctx, j.req, j.key)
				cancel()
				a := stressAnswer{job: i, err: err}
				if err == nil {
					a.outcome, a.id, a.json = res.Outcome, res.Record.ID, res.JSON
					if j.resolve && res.Record.ReviewStatus == fiscal.StatusPendingReview {
						var rwg sync.WaitGroup
						for k := 0; k < 2; k++ { // two resolutions of one record race
							rwg.Go(func() {
								rr, rerr := replicaBooks[(i+k)%len(engines)][j.acct].Resolve(context.Background(), res.Record.ID, fiscal.Resolution{
									Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops@example.com"}, "")
								ra := stressAnswer{job: i, err: rerr}
								if rerr == nil {
									ra.outcome, ra.id, ra.json = rr.Outcome, rr.Record.ID, rr.JSON
								}
								resolveMu.Lock()
								v, _ := resolveAnswers.LoadOrStore(res.Record.ID, &[]stressAnswer{})
								*v.(*[]stressAnswer) = append(*v.(*[]stressAnswer), ra)
								resolveMu.Unlock()
							})
						}
						rwg.Wait()
					}
				}
				if err == nil && res.Outcome == fiscal.Created {
					if m, merr := json.Marshal(res.Record); merr != nil || string(m) != string(res.JSON) {
						a.err = fmt.Errorf("STRESS: the answered record is not its JSON: %v", merr)
					}
				}
				answers[i] = a
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()

	// What the callers were told.
	errCodes := map[string]int{}
	for _, a := range answers {
		if a.err != nil {
			c := string(fiscaltest.Code(a.err))
			if c == "" {
				if errors.Is(a.err, context.Canceled) || errors.Is(a.err, context.DeadlineExceeded) {
					c = "ctx"
				} else {
					c = a.err.Error()
				}
			}
			errCodes[c]++
		}
	}
	hits, misses := fiscal.NumberingStats(e)
	t.Logf("seed %d: %d jobs, errors %v; predictions: %d hits, %d misses, %d revoked; log size %d", seed, n, errCodes, hits, misses, fiscal.PredictionsRevoked(e), e.Ledger().Size())
	for c := range errCodes {
		switch c {
		case string(fiscal.CodeInternal):
			for _, a := range answers {
				if fiscaltest.Code(a.err) == fiscal.CodeInternal {
					t.Logf("job %d (%+v): %v", a.job, jobs[a.job], a.err)
					break
				}
			}
			t.Errorf("unexpected error %q", c)
		case "ctx", string(fiscal.CodeIdempotencyConflict), string(fiscal.CodeSettlementConflict), string(fiscal.CodePaymentConflict):
		default:
			t.Errorf("unexpected error %q", c)
		}
	}

	// Read the whole log back.
	ks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := receipt.NewVerifier(ks, e.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	type seriesKey struct{ acct, prefix string }
	seriesNums := map[seriesKey][]int64{}
	type totKey struct {
		acct string
		year int
	}
	totals := map[totKey]decimal.Decimal{}
	limit := decimal.NewFromInt(10000)
	crossers := map[totKey]string{}
	entryOfRecord := map[string][]int64{} // record id -> indexes of its entries
	latestDoc := map[string][]byte{}
	byAcct := map[string]*fiscal.Books{}
	for i, b := range books {
		byAcct[fiscaltest.AccountID(i)] = b
	}
	bad, staleFigures := 0, 0
	fail := func(format string, args ...any) {
		bad++
		if bad <= 30 {
			t.Errorf(format, args...)
		}
	}
	for idx := int64(0); idx < size; idx++ {
		ent, err := e.Ledger().EntryAt(idx)
		if err != nil {
			t.Fatalf("entry %d: %v", idx, err)
		}
		raw := ent.Docs["record"]
		var rec fiscal.Record
		if json.Unmarshal(raw, &rec) != nil || rec.Object != fiscal.ObjectSettlement {
			continue
		}
		entryOfRecord[rec.ID] = append(entryOfRecord[rec.ID], idx)
		latestDoc[rec.ID] = raw
		if rec.Ledger.Index != idx {
			fail("entry %d (%s): record states index %d", idx, ent.ID, rec.Ledger.Index)
		}
		// Receipt: verifies offline and binds the record as stored.
		b := byAcct[rec.Account]
		rc, err := b.Receipt(context.Background(), "rcpt_"+ent.ID)
		if err != nil {
			fail("entry %d: receipt: %v", idx, err)
			continue
		}
		op, err := b.Openings(context.Background(), "rcpt_"+ent.ID)
		if err != nil {
			fail("entry %d: openings: %v", idx, err)
			continue
		}
		openings, err := receipt.ParseOpenings(op)
		if err != nil {
			fail("entry %d: %v", idx, err)
			continue
		}
		claims, err := verifier.Verify(rc, openings...)
		if err != nil {
			fail("entry %d: receipt does not verify: %v", idx, err)
			continue
		}
		sum := sha256.Sum256(raw)
		if claims.Log.Index != idx || claims.RecordSHA256 != hex.EncodeToString(sum[:]) {
			fail("entry %d: receipt binds index %d record %s; stored record hashes to %x", idx, claims.Log.Index, claims.RecordSHA256, sum)
		}
		if rec.Invoice != nil {
			ubl := ent.Docs["ubl"]
			usum := sha256.Sum256(ubl)
			m := cbcID.FindSubmatch(ubl)
			if m == nil || string(m[1]) != rec.Invoice.ID || hex.EncodeToString(usum[:]) != rec.Invoice.UBLSHA256 {
				fail("entry %d: invoice %s sha %s; UBL says %q, hashes to %x", idx, rec.Invoice.ID, rec.Invoice.UBLSHA256, m, usum)
			}
			if claims.Invoice == nil || claims.Invoice.ID != rec.Invoice.ID || claims.Invoice.UBLSHA256 != rec.Invoice.UBLSHA256 {
				fail("entry %d: receipt invoice %+v, record %+v", idx, claims.Invoice, rec.Invoice)
			}
			cut := strings.LastIndex(rec.Invoice.ID, "-")
			num, err := strconv.ParseInt(rec.Invoice.ID[cut+1:], 10, 64)
			if err != nil {
				fail("entry %d: invoice number %q", idx, rec.Invoice.ID)
			}
			k := seriesKey{rec.Account, rec.Invoice.ID[:cut+1]}
			seriesNums[k] = append(seriesNums[k], num)
		} else if len(ent.Docs["ubl"]) > 0 {
			fail("entry %d: a UBL document without an invoice in the record", idx)
		}
		// Art. 59c: a sequential replay in log order.
		th := rec.Classification.Threshold
		if th == nil {
			continue
		}
		cur, prev := totals[totKey{rec.Account, th.Year}], totals[totKey{rec.Account, th.Year - 1}]
		if rec.ReviewStatus != fiscal.StatusProcessed {
			continue
		}
		want := ""
		switch {
		case th.Rule == vat.ThresholdStatedOver || th.Rule == vat.ThresholdNotCounted || th.Rule == vat.ThresholdOpted:
			want = th.Rule
		case prev.GreaterThan(limit):
			want = vat.ThresholdPreviousYear
		case cur.GreaterThan(limit):
			want = vat.ThresholdCurrentYear
		case th.Counted != nil && cur.Add(*th.Counted).GreaterThan(limit):
			want = vat.ThresholdCrossed
		default:
			want = vat.ThresholdWithin
		}
		if th.Rule != want {
			fail("entry %d (%s, %s %d): rule %s, sequential replay gives %s (totals before: year %s, previous %s; record says %s, %s)",
				idx, ent.ID, rec.Account, th.Year, th.Rule, want, cur, prev, th.TotalBefore, th.PreviousYear)
		}
		if th.Rule == vat.ThresholdCurrentYear || th.Rule == vat.ThresholdPreviousYear {
			if !th.TotalBefore.Equal(cur) || !th.PreviousYear.Equal(prev) {
				staleFigures++
			}
			if th.TotalBefore.GreaterThan(cur) || th.PreviousYear.GreaterThan(prev) {
				fail("entry %d: %s states totals %s/%s above the log's %s/%s", idx, th.Rule, th.TotalBefore, th.PreviousYear, cur, prev)
			}
		}
		if th.Rule == vat.ThresholdWithin || th.Rule == vat.ThresholdCrossed {
			if !th.TotalBefore.Equal(cur) || !th.PreviousYear.Equal(prev) {
				fail("entry %d: %s decided on totals %s/%s, the log gives %s/%s", idx, th.Rule, th.TotalBefore, th.PreviousYear, cur, prev)
			}
		}
		if th.Crossed {
			k := totKey{rec.Account, th.Year}
			if c, ok := crossers[k]; ok {
				fail("entry %d: %s crosses %v again (first %s)", idx, rec.ID, k, c)
			}
			crossers[k] = rec.ID
		}
		if th.Counts && th.Counted != nil {
			totals[totKey{rec.Account, th.Year}] = cur.Add(*th.Counted)
		}
	}
	t.Logf("over-threshold records stating totals below the log's (read before concurrent commits): %d", staleFigures)
	nres := 0
	resolveAnswers.Range(func(k, v any) bool { nres++; return true })
	t.Logf("series %d, crossings %v, totals %v, records resolved %d", len(seriesNums), crossers, totals, nres)
	for k, nums := range seriesNums {
		for i, v := range nums {
			if v != int64(i+1) {
				fail("series %q %q: in log order the numbers are %v... (position %d is %d)", k.acct, k.prefix, nums[:min(len(nums), i+3)], i, v)
				break
			}
		}
	}
	// Stored totals equal the replay's.
	for i, b := range books {
		yts, err := b.Totals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, yt := range yts {
			want := totals[totKey{fiscaltest.AccountID(i), yt.Year}]
			if !decimal.RequireFromString(yt.CrossBorderEUR).Equal(want) {
				fail("account %d year %d: stored total %s, replay %s", i, yt.Year, yt.CrossBorderEUR, want)
			}
		}
	}
	// Threshold events name the crossing records.
	evs := thresholdEvents(t, e)
	var due int
	_ = e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan("threshold-due", nil, nil, false, func(k, v []byte) bool { due++; return true })
	})
	t.Logf("threshold events appended %d, still queued %d, crossings %d", len(evs), due, len(crossers))
	if len(evs) != len(crossers) || due != 0 {
		fail("%d crossings committed, %d account.threshold_crossed events appended (%d left queued)", len(crossers), len(evs), due)
	}
	// Answers: every record answered is the stored one; keys answer one record.
	keyRecord := map[string]string{}
	for _, a := range answers {
		j := jobs[a.job]
		if a.err != nil {
			if errors.Is(a.err, context.Canceled) || errors.Is(a.err, context.DeadlineExceeded) {
				// nothing written for it: unless another job settled the same payment
				id := e.RecordID(j.req.Network, j.req.TxHash)
				if _, ok := entryOfRecord[id]; ok {
					shared := false
					for k, o := range jobs {
						if k != a.job && o.req.TxHash == j.req.TxHash {
							shared = true
						}
					}
					if !shared {
						fail("job %d: answered %v, but its record %s was written", a.job, a.err, id)
					}
				}
			}
			continue
		}
		if want := e.RecordID(j.req.Network, j.req.TxHash); a.id != want && a.outcome != fiscal.Replayed {
			fail("job %d: answered record %s, its payment's is %s", a.job, a.id, want)
		}
		if len(entryOfRecord[a.id]) == 0 {
			fail("job %d: answered %s (%v), not in the log", a.job, a.id, a.outcome)
			continue
		}
		if a.outcome == fiscal.Created {
			first, _ := e.Ledger().EntryAt(entryOfRecord[a.id][0])
			if string(first.Docs["record"]) != string(a.json) {
				fail("job %d: Settle answered other bytes than the ledger holds for %s", a.job, a.id)
			}
		}
		if j.key != "" {
			kk := fmt.Sprint(j.acct, "/", j.key)
			if r, ok := keyRecord[kk]; ok && r != a.id {
				fail("key %s answered %s and %s", kk, r, a.id)
			}
			keyRecord[kk] = a.id
		}
	}
	// Two resolutions of one record race: one creates the revision; the
	// other creates one too only when the first left the record pending
	// (a sale resolved with its country may then wait for another reason:
	// threshold_order_in_doubt, when the stamps drawn take a year over out
	// of their time order). The last one created is the stored record.
	resolveAnswers.Range(func(k, v any) bool {
		id := k.(string)
		created, latest, pending := 0, 0, 0
		for _, ra := range *v.(*[]stressAnswer) {
			if ra.err == nil && ra.outcome == fiscal.Created {
				created++
				var r struct{ ReviewStatus string }
				switch _ = json.Unmarshal(ra.json, &r); {
				case string(ra.json) == string(latestDoc[id]):
					latest++
				case r.ReviewStatus == fiscal.StatusPendingReview:
					pending++
				default:
					fail("resolution of %s answered other bytes than stored, and left it %s", id, r.ReviewStatus)
				}
			}
		}
		if created > 0 && latest != 1 || created != latest+pending || created > 2 || len(entryOfRecord[id]) != 1+created {
			fail("record %s: %d resolutions created (%d the stored record, %d left pending), %d entries", id, created, latest, pending, len(entryOfRecord[id]))
		}
		return true
	})
	if err := e.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}
