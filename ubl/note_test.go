package ubl

import (
	"strings"
	"testing"
)

func TestRefundNote(t *testing.T) {
	r := Refund{
		RefundedOn: "2026-11-25", Amount: "5.000000", Asset: "USDC", Network: "eip155:8453", TxHash: "0xcd",
		Invoice: "F402-2026-000001", Rate: "1.1711", RateCurrency: "USD", RateDate: "2026-04-10", Reason: "not delivered",
	}
	got, err := RefundNote("EUR", r)
	if err != nil {
		t.Fatal(err)
	}
	want := "Refund on 2026-11-25 of 5.000000 USDC, tx 0xcd on eip155:8453, correcting invoice F402-2026-000001; amounts at that invoice's rate, 1 EUR = 1.1711 USD as of 2026-04-10. Reason: not delivered."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	r.Network, r.TxHash, r.Reason, r.Sandbox = "", "", "", true
	if got, _ := RefundNote("EUR", r); got != SandboxWatermark+" Refund on 2026-11-25 of 5.000000 USDC, correcting invoice F402-2026-000001; amounts at that invoice's rate, 1 EUR = 1.1711 USD as of 2026-04-10." {
		t.Errorf("without a transfer: %q", got)
	}
	r.Amount, r.TxHash, r.Invoice = "-5", "0xcd", ""
	_, err = RefundNote("EUR", r)
	for _, want := range []string{"Amount", "TxHash", "Invoice"} {
		if err == nil || !strings.Contains(err.Error(), "ubl: "+want+":") {
			t.Errorf("no problem reported for %s: %v", want, err)
		}
	}
}
