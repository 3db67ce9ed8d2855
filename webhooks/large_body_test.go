package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestVerifyRequestAcceptsASummaryInvoiceDelivery: the data of an
// invoice.summary_issued delivery is the summary invoice's document, which
// lists every supply of a buyer's month. x402 buyers are agents paying per
// call: a few thousand calls a month make the document larger than 1 MiB,
// VerifyRequest's limit, which was sized for "one record and a checkpoint".
// A receiver using the package's own helper refused every such delivery
// (an error, hence a non-2xx answer, retried for 72 h and then failed),
// although the ledger stores and the dispatcher sends documents up to its
// entry limit. VerifyRequest must accept any body the service sends, and
// still refuse one larger than MaxBodyBytes.
func TestVerifyRequestAcceptsASummaryInvoiceDelivery(t *testing.T) {
	const supplies = 10000 // a buyer's month of about 330 calls a day
	doc := invoicing.SummaryInvoice{ID: "sum-" + strings.Repeat("ab", 16), Object: invoicing.ObjectSummaryInvoice, Period: "2026-03",
		Buyer: "0x" + strings.Repeat("12", 20), Supplied: supplies}
	for i := range supplies {
		doc.Supplies = append(doc.Supplies, invoicing.SummarySupply{
			RecordID: fmt.Sprintf("x402-%032x", i), LedgerIndex: int64(1_000_000 + i), SupplyDate: "2026-03-14",
			AmountUSDC: "0.010000", TxHash: fmt.Sprintf("0x%064x", i), NetEURExact: "0.007575757576", VATEURExact: "0.001666666667",
		})
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(webhooks.EventPayload{ID: "evt_" + doc.ID, Type: invoicing.EventInvoiceSummaryIssued, Created: "2026-04-01T00:00:05Z", Sequence: 2_000_000, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if len(body) <= 1<<20 {
		t.Fatalf("the delivery is %d bytes: the test wants one above 1 MiB", len(body))
	}
	secret := "whsec_" + strings.Repeat("k", 32)
	request := func(body []byte) *http.Request {
		m := &webhooks.Message{URL: "https://erp.example.com/hook", EventID: "evt_" + doc.ID, EventType: invoicing.EventInvoiceSummaryIssued,
			DeliveryID: "dlv_1", Attempt: 1, Timestamp: time.Now().Unix(), Body: body}
		m.Sign(secret)
		r := httptest.NewRequest(http.MethodPost, m.URL, bytes.NewReader(body))
		r.Header = m.Header()
		return r
	}
	got, err := webhooks.VerifyRequest(request(body), []string{secret}, 0)
	if err != nil {
		t.Fatalf("VerifyRequest of a %d-byte summary invoice delivery: %v", len(body), err)
	}
	if !bytes.Equal(got, body) {
		t.Errorf("VerifyRequest returned %d bytes, not the %d-byte body", len(got), len(body))
	}
	huge := append([]byte(`{"id":"evt_1","type":"t","pad":"`), bytes.Repeat([]byte("x"), webhooks.MaxBodyBytes)...)
	huge = append(huge, `"}`...)
	if _, err := webhooks.VerifyRequest(request(huge), []string{secret}, 0); err == nil || !strings.Contains(err.Error(), strconv.Itoa(webhooks.MaxBodyBytes)) {
		t.Errorf("VerifyRequest of a body above MaxBodyBytes: %v, want it refused", err)
	}
}
