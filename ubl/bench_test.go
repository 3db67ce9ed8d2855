package ubl

import (
	"fmt"
	"testing"
)

// The renderer benchmarks come in pairs: Render* is the package's path
// (validation + direct writer), Etree* the same validation followed by the
// frozen etree renderer (etree_ref_test.go) that the direct writer
// replaced. Both render byte-identical output (TestDirectWriterMatchesEtree).
//
//	go test ./ubl -run XXX -bench 'Render|Etree' -count 5

// BenchmarkRenderInvoice is the engine's hot path: one B2C invoice, one line.
func BenchmarkRenderInvoice(b *testing.B) {
	inv := b2c("x402-bench", "DE", "19", "100.00")
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

func BenchmarkEtreeInvoice(b *testing.B) {
	inv := b2c("x402-bench", "DE", "19", "100.00")
	benchRender(b, func() ([]byte, error) { return renderEtree(inv) })
}

// BenchmarkRenderInvoicePeppol: a B2B reverse-charge invoice (endpoints
// derived, Peppol national rules checked).
func BenchmarkRenderInvoicePeppol(b *testing.B) {
	inv := b2b("x402-bench", sellerIE, buyerDEBusiness, line("API access", "951.29", "AE", "0"))
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

func BenchmarkEtreeInvoicePeppol(b *testing.B) {
	inv := b2b("x402-bench", sellerIE, buyerDEBusiness, line("API access", "951.29", "AE", "0"))
	benchRender(b, func() ([]byte, error) { return renderEtree(inv) })
}

// BenchmarkRenderInvoice50Lines: cost per line.
func BenchmarkRenderInvoice50Lines(b *testing.B) {
	inv := fiftyLines()
	benchRender(b, func() ([]byte, error) { return RenderInvoice(inv) })
}

func BenchmarkEtreeInvoice50Lines(b *testing.B) {
	inv := fiftyLines()
	benchRender(b, func() ([]byte, error) { return renderEtree(inv) })
}

// BenchmarkRenderGoldens renders every golden of the etree era once per
// iteration (25 documents: B2C, B2B, credit notes, edges).
func BenchmarkRenderGoldens(b *testing.B) {
	ins := etreeEraInputs()
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			if _, err := in.render(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEtreeGoldens(b *testing.B) {
	ins := etreeEraInputs()
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			var p *prepared
			var err error
			if in.CreditNote != nil {
				cn := *in.CreditNote
				p, err = prepare(&cn.Invoice, &cn)
			} else {
				inv := *in.Invoice
				p, err = prepare(&inv, nil)
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.renderEtree(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWriteOnly* isolate the serializer: one prepared B2C invoice,
// written again and again.
func BenchmarkWriteOnlyDirect(b *testing.B) {
	p := prepareInput(b, goldenInput{Invoice: ptr(b2c("x402-bench", "DE", "19", "100.00"))})
	benchRender(b, p.render)
}

func BenchmarkWriteOnlyEtree(b *testing.B) {
	p := prepareInput(b, goldenInput{Invoice: ptr(b2c("x402-bench", "DE", "19", "100.00"))})
	benchRender(b, p.renderEtree)
}

func fiftyLines() Invoice {
	inv := b2c("x402-bench", "DE", "19", "100.00")
	inv.Lines = nil
	for i := range 50 {
		inv.Lines = append(inv.Lines, line(fmt.Sprintf("Request %d", i), "0.50", "S", []string{"19", "7"}[i%2]))
	}
	return inv
}

func etreeEraInputs() []goldenInput {
	var ins []goldenInput
	for _, gc := range goldenCases() {
		if etreeShapes[gc.Name] {
			ins = append(ins, gc.input())
		}
	}
	return ins
}

func renderEtree(inv Invoice) ([]byte, error) {
	p, err := prepare(&inv, nil)
	if err != nil {
		return nil, err
	}
	return p.renderEtree()
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
