package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFXFileDecidesWhatWaited: a settlement dated after the last known ECB
// publication is stored pending review (fx_rate_unavailable) and queued;
// the README's remedy is to load newer rates with -fx-file. Restarted with
// a file that has the rate, the server decides the waiting settlement again
// (fx_rate_unavailable: "re-decided when it is"), as the refresh does after
// a fetch: it must not stay pending for ever.
func TestFXFileDecidesWhatWaited(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir) // the embedded series, which ends on 2026-04-13
	body := `{"amountUsdc":"11.90","txHash":"0x7a1f3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-14T17:00:00Z",` +
		`"payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",` +
		`"network":"eip155:8453","consumerCountry":"DE"}`
	status, _, raw := p.request(t, "POST", "/settlements", []byte(body), "X-Service-Key", demoKey)
	if status != 201 {
		t.Fatalf("settle: %d %s", status, raw)
	}
	var rec struct {
		ID            string `json:"id"`
		ReviewStatus  string `json:"reviewStatus"`
		ReviewReasons []struct {
			Code string `json:"code"`
		} `json:"reviewReasons"`
		FX struct {
			GrossEUR  string `json:"grossEur"`
			USDPerEUR *struct {
				RateDate string `json:"rateDate"`
			} `json:"usdPerEur"`
		} `json:"fx"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ReviewStatus != "PENDING_MANUAL_REVIEW" || len(rec.ReviewReasons) != 1 || rec.ReviewReasons[0].Code != "fx_rate_unavailable" {
		t.Fatalf("before the rate: %s %+v", rec.ReviewStatus, rec.ReviewReasons)
	}
	p.stop(t)

	rates := filepath.Join(t.TempDir(), "rates.csv")
	if err := os.WriteFile(rates, []byte("date,usd_per_eur\n2026-04-14,1.1750\n2026-04-15,1.1760\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p = startServer(t, dir, "-fx-file", rates)
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _, raw = p.request(t, "GET", "/settlements/"+rec.ID, nil, "X-Service-Key", demoKey)
		if status != 200 {
			t.Fatalf("read: %d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ReviewStatus == "PROCESSED" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rec.ReviewStatus != "PROCESSED" || rec.FX.USDPerEUR == nil || rec.FX.USDPerEUR.RateDate != "2026-04-14" {
		t.Fatalf("with the rate loaded (-fx-file): %s %+v, fx %+v: the settlement still waits", rec.ReviewStatus, rec.ReviewReasons, rec.FX)
	}
}
