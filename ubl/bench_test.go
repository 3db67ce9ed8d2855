package ubl

import (
	"fmt"
	"testing"
)

// BenchmarkRenderInvoice is the engine's hot path: one B2C invoice, one line.
func BenchmarkRenderInvoice(b *testing.B) {
	inv := b2c("x402-bench", "DE", "19", "100.00")
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

// BenchmarkRenderInvoicePeppol: a B2B reverse-charge invoice (endpoints
// derived, Peppol national rules checked).
func BenchmarkRenderInvoicePeppol(b *testing.B) {
	inv := b2b("x402-bench", sellerIE, buyerDEBusiness, line("API access", "951.29", "AE", "0"))
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

// BenchmarkRenderInvoice50Lines: cost per line.
func BenchmarkRenderInvoice50Lines(b *testing.B) {
	inv := b2c("x402-bench", "DE", "19", "100.00")
	inv.Lines = nil
	for i := range 50 {
		inv.Lines = append(inv.Lines, line(fmt.Sprintf("Request %d", i), "0.50", "S", []string{"19", "7"}[i%2]))
	}
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

func benchRender(b *testing.B, render func() ([]byte, error)) {
	b.ReportAllocs()
	var n int
	for b.Loop() {
		out, err := render()
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
}
