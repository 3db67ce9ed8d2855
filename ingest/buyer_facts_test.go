package ingest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/vat"
)

// TestChainIngestKeepsEveryBuyerFact: a payment read from the chain
// (evm-transfer here; x402 builds its payment the same way) is decided on
// every fact the merchant states about the buyer, as POST /settlements
// decides it: the items of the customer's location (Art. 24b, 24f
// Implementing Regulation 282/2011) were accepted, fingerprinted and then
// dropped, so a sale whose evidence places the customer in France was
// taxed in Germany on the merchant's word alone; rate conditions and an
// underlying provider were dropped likewise. The record of the same facts
// attested through Settle is the measure, not a result written here.
func TestChainIngestKeepsEveryBuyerFact(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	buyer := fiscal.BuyerFacts{Country: "DE", Evidence: []vat.Evidence{
		{Kind: vat.EvidenceIPAddress, Country: "FR", Source: vat.EvidenceSourceMerchant},
		{Kind: vat.EvidenceBillingAddress, Country: "FR", Source: vat.EvidenceSourceCustomer},
	}}
	tx, other := fakechain.Hash("tx with evidence"), fakechain.Hash("tx attested")
	node.MineTransfer(tx, 10, rvPayer, rvPayTo, 1_000_000)
	node.MineTransfer(other, 10, rvPayer, rvPayTo, 1_000_000)
	node.Advance(3)
	got, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 0, buyer, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.Books("acct_0")
	want, err := b.Settle(ctx, fiscal.SettlementRequest{AmountUSDC: "1", TxHash: other, Timestamp: got.Record.Settlement.Timestamp,
		PayerWallet: rvPayer, ReceiverWallet: rvPayTo, Network: "eip155:8453", ConsumerCountry: "DE",
		LocationEvidence: buyer.Evidence}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want.Record.Classification.LocationEvidence == nil {
		t.Fatal("the attested record assessed no location evidence: the test's evidence is not read")
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"review status", got.Record.ReviewStatus, want.Record.ReviewStatus},
		{"review reasons", got.Record.ReviewReasons, want.Record.ReviewReasons},
		{"location evidence", got.Record.Classification.LocationEvidence, want.Record.Classification.LocationEvidence},
		{"place of supply", got.Record.Classification.PlaceOfSupply, want.Record.Classification.PlaceOfSupply},
	} {
		g, _ := json.Marshal(c.got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s from the chain: %s; attested through Settle: %s", c.name, g, w)
		}
	}
}
