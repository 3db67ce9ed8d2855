package goblbench

import (
	"context"
	"crypto/ed25519"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/receipt"

	"github.com/invopop/gobl/dsig"
)

// BenchmarkInvoice measures, per document (the B2C OSS sale to an Irish
// consumer, the B2B reverse charge to a French business), side by side in
// one run, with one caller:
//
//   - gobl/all: convert, build, calculate, validate and sign the GOBL
//     envelope (ES256), convert it to UBL and marshal the XML (goblInvoice);
//     gobl/calculate and gobl/calculate+sign stop after those steps;
//   - fiscal402/prepare+issue: the engine's CPU work before the ledger
//     (registry answer, determination, conversion, invoicing law, UBL
//     without its number, receipt claims): no number, no signature, no disk;
//   - fiscal402/receipt-sign: the 3.0.0 receipt's JWS (Ed25519) over this
//     sale's claims, the signature made per receipt until 4.0.0;
//   - fiscal402/receipt-seal: the 4.0.0 receipt's payload (rules and
//     encoding, no signature: the receipt key cosigns each commit's
//     checkpoint instead), what the engine does per receipt now;
//   - fiscal402/settle-tmpfs: Books.Settle, the whole path (idempotency
//     claims, prepare+issue, invoice number, record, concealed receipt
//     claims sealed, the bbolt append and the Merkle log) on a ledger
//     in /dev/shm, where fsync costs nothing;
//   - fiscal402/settle-disk: the same on a temporary directory on disk,
//     durable (fsynced before it returns): what a caller waits for.
//
// Each settlement is a new payment (its own tx hash). Besides ns/op (wall
// time) each row reports cpu-ns/op (cpuPerOp).
func BenchmarkInvoice(b *testing.B) {
	key := dsig.NewES256Key()
	for _, d := range documents {
		for _, g := range []struct {
			name string
			upto goblStep
		}{{"gobl/all", stepUBL}, {"gobl/calculate", stepCalculate}, {"gobl/calculate+sign", stepSign}} {
			b.Run(d.name+"/"+g.name, func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := range b.N {
					if _, _, err := goblSteps(d, uint64(i+1), key, g.upto); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(d.name+"/fiscal402/prepare+issue", func(b *testing.B) {
			e, books := engine(b, b.TempDir())
			now := e.Now()
			p := d.payment(b, books, 1, now)
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for range b.N {
				if _, err := prepareIssue(books, p, now); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/fiscal402/receipt-sign", func(b *testing.B) {
			claims := settledClaims(b, d)
			_, priv, err := ed25519.GenerateKey(nil)
			if err != nil {
				b.Fatal(err)
			}
			signer, err := receipt.NewSigner(priv)
			if err != nil {
				b.Fatal(err)
			}
			c3 := *claims
			c3.Spec = receipt.SpecV3
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for range b.N {
				if _, err := signer.Sign(c3); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/fiscal402/receipt-seal", func(b *testing.B) {
			claims := settledClaims(b, d)
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for range b.N {
				if _, err := receipt.Seal(*claims); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/fiscal402/settle-tmpfs", func(b *testing.B) {
			dir, err := os.MkdirTemp("/dev/shm", "fiscal402-bench-")
			if err != nil {
				b.Skip("no /dev/shm:", err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			settle(b, d, dir)
		})
		b.Run(d.name+"/fiscal402/settle-disk", func(b *testing.B) {
			settle(b, d, b.TempDir())
		})
	}
}

// cpuPerOp starts counting the process's CPU time (user + system, every
// thread: the garbage collector and the ledger's committer included) and
// returns the function that reports it per operation as cpu-ns/op. On a
// machine shared with other work, wall time (ns/op) includes waiting for a
// core; CPU time does not. A settlement's wait for fsync is in ns/op only.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// settle measures Books.Settle of new payments of d on an engine in dir.
func settle(b *testing.B, d document, dir string) {
	_, books := engine(b, dir)
	var n atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuPerOp(b)()
	for range b.N {
		res, err := books.Settle(context.Background(), d.request(n.Add(1)), "")
		if err != nil {
			b.Fatal(err)
		}
		if res.Outcome != fiscal.Created || res.Record.Invoice == nil {
			b.Fatalf("outcome %s, invoice %v: %v", res.Outcome, res.Record.Invoice, res.Record.ReviewReasons)
		}
	}
}

// settledClaims settles d once and returns its receipt's claims as signed
// (public: personal fields concealed), read back through receipt.Verify.
func settledClaims(tb testing.TB, d document) *receipt.Claims {
	tb.Helper()
	e, books := engine(tb, tb.TempDir())
	res, err := books.Settle(context.Background(), d.request(1), "")
	if err != nil {
		tb.Fatal(err)
	}
	rcpt, err := books.Receipt(context.Background(), res.Record.ID)
	if err != nil {
		tb.Fatal(err)
	}
	jwks, err := e.JWKS()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := receipt.Verify(rcpt, jwks, e.LogVerifierKey())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
