package goblbench

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"

	"github.com/invopop/gobl/dsig"
)

// BenchmarkInvoice measures, per document (the B2C OSS sale to an Irish
// consumer, the B2B reverse charge to a French business), side by side:
//
//   - gobl: convert, build, calculate, validate and sign the GOBL envelope
//     (ES256), convert it to UBL and marshal the XML (goblInvoice);
//   - fiscal402/prepare+issue: the engine's CPU work before the ledger
//     (determination, conversion, invoicing law, UBL without its number,
//     receipt claims): no invoice number, no signature, no disk;
//   - fiscal402/settle-tmpfs: Books.Settle, the whole path (idempotency
//     claims, the above, invoice number, record, receipt JWS (Ed25519), the
//     bbolt append and Merkle log) on a ledger in /dev/shm, where fsync
//     costs nothing;
//   - fiscal402/settle-disk: the same on a temporary directory on disk,
//     durable (fsynced before it returns): what a caller waits for.
//
// Everything runs with one caller; each settlement is a new payment.
func BenchmarkInvoice(b *testing.B) {
	key := dsig.NewES256Key()
	for _, d := range documents {
		b.Run(d.name+"/gobl", func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if _, _, err := goblInvoice(d, uint64(i+1), key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(d.name+"/fiscal402/prepare+issue", func(b *testing.B) {
			e, books := engine(b, b.TempDir())
			now := e.Now()
			p := d.payment(b, books, 1, now)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := prepareIssue(books, p, now); err != nil {
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

// settle measures Books.Settle of new payments of d on an engine in dir.
func settle(b *testing.B, d document, dir string) {
	_, books := engine(b, dir)
	var n atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
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
