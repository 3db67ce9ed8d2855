package readme_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMerchantSectionNamesLiveRates: books opened with fiscal.Open read
// only the embedded ECB snapshot and refresh nothing, so a payment settled
// after the snapshot's last day is PENDING_MANUAL_REVIEW
// (fx_rate_unavailable) and stays so. A merchant who follows the README's
// merchant section with live payments must be told the step that keeps
// rates current (package rates: fiscal.New with an fx.LiveTable, then
// rates.New); the section and Open's doc said nothing of it.
func TestMerchantSectionNamesLiveRates(t *testing.T) {
	table, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	_, last := table.Range()
	end, err := time.Parse(time.DateOnly, last)
	if err != nil {
		t.Fatal(err)
	}
	books, err := fiscal.Open(t.TempDir(), fiscal.Seller{
		LegalName: "Demo Digital Services Ltd", Country: "IE", VATNumber: "IE1234567T",
		Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}},
		OverThreshold: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer books.Close()
	// A week after the snapshot's last publication: TARGET days among them.
	at := end.AddDate(0, 0, 7).Add(14 * time.Hour)
	res, err := books.Settle(context.Background(), fiscal.SettlementRequest{
		AmountUSDC: "11.90", Network: "eip155:8453", Timestamp: at.Format(time.RFC3339),
		TxHash:          fmt.Sprintf("0x%064x", 1),
		PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		ConsumerCountry: "DE",
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range res.Record.ReviewReasons {
		reasons = append(reasons, string(r.Code))
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview || !strings.Contains(strings.Join(reasons, ","), "fx_rate_unavailable") {
		t.Fatalf("a payment after the embedded snapshot (ends %s) through Open: %s %v; this test assumes fx_rate_unavailable", last, res.Record.ReviewStatus, reasons)
	}

	root := testtool.RepoDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "### A merchant"); i >= 0 {
		section = section[i:]
	}
	if i := strings.Index(section, "### A facilitator"); i >= 0 {
		section = section[:i]
	}
	if !strings.Contains(section, "rates.New") {
		t.Errorf("README's merchant section does not say that Open's books stop at the embedded ECB snapshot (%s) and how to keep rates current (rates.New)", last)
	}
	doc, err := os.ReadFile(filepath.Join(root, "fiscal", "engine.go"))
	if err != nil {
		t.Fatal(err)
	}
	open := string(doc)
	if i := strings.Index(open, "// Open opens the books"); i >= 0 {
		open = open[i:]
		open = open[:strings.Index(open, "func Open(")]
	}
	if !strings.Contains(open, "rates.New") {
		t.Errorf("fiscal.Open's doc does not say how to keep rates current (rates.New)")
	}
}
