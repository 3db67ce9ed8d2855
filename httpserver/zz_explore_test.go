package httpserver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
)

func TestZZExploreSummaryRefunds(t *testing.T) {
	f := newFixture(t)
	accounts := testAccounts(t)
	for i := range accounts {
		accounts[i].Seller.Invoicing = fiscal.InvoicingSummaryMonthly
	}
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, a := range []string{"1.19", "0.01", "2.38"} {
		r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": a, "txHash": txHash(100 + i), "timestamp": fmt.Sprintf("2026-04-1%dT10:00:00Z", i)})))
		if r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		ids = append(ids, r.json(t)["id"].(string))
	}
	show := func(what string, r response) {
		b := string(r.body)
		if len(b) > 1500 {
			b = b[:1500]
		}
		fmt.Printf("== %s: %d %s\n", what, r.status, b)
	}
	show("refund before summary", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":"0.5"}`)))
	s := f.do("POST", "/v1/invoices/summaries", keyA, []byte(`{"period":"2026-04"}`))
	show("summary", s)
	show("refund tiny", f.do("POST", "/settlements/"+ids[1]+"/refunds", keyA, []byte(`{"amountUsdc":"0.000001"}`)))
	show("refund tiny 2", f.do("POST", "/settlements/"+ids[1]+"/refunds", keyA, []byte(`{"amountUsdc":"0.004"}`)))
	show("refund rest", f.do("POST", "/settlements/"+ids[1]+"/refunds", keyA, []byte(`{}`)))
	show("over refund", f.do("POST", "/settlements/"+ids[1]+"/refunds", keyA, []byte(`{"amountUsdc":"0.01"}`)))
	show("zero refund", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":"0"}`)))
	show("neg refund", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":"-1"}`)))
	show("num refund", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":1}`)))
	show("7dp refund", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":"0.0000001"}`)))
	r := f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{"amountUsdc":"0.60"}`))
	show("refund part0", r)
	rid := r.json(t)["id"].(string)
	u := f.do("GET", "/settlements/"+ids[0]+"/refunds/"+rid+"/ubl", keyA, nil)
	fmt.Println(strings.Contains(string(u.body), txHash(100)[2:]), strings.Contains(string(u.body), "PaymentID"))
	show("refund rest0", f.do("POST", "/settlements/"+ids[0]+"/refunds", keyA, []byte(`{}`)))
	show("refund all2", f.do("POST", "/settlements/"+ids[2]+"/refunds", keyA, []byte(`{}`)))
	show("invoiced-by", f.do("GET", "/settlements/"+ids[0]+"/invoiced-by", keyA, nil))
	show("return Q2", f.do("GET", "/v1/returns/oss?period=2026-Q2", keyA, nil))
	show("return Q4", f.do("GET", "/v1/returns/oss?period=2026-Q4", keyA, nil))
	sid := s.json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	show("summary get", f.do("GET", "/v1/invoices/summaries/"+sid, keyA, nil))
	_ = time.Second
}
