package fiscalevent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/parties"
)

// FuzzFiscalEventRequest: any body decodes (as POST /v1/fiscal-events
// decodes it: package strictjson) and validates to a value with every fact
// the determination needs, or to a request error naming the field; nothing
// panics.
func FuzzFiscalEventRequest(f *testing.F) {
	f.Add([]byte(`{"payment":{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"},"seller":{"legalName":"Demo Ltd","country":"IE"},"buyer":{"country":"DE","businessStatus":"B2C"},"supply":{"kind":"digital_service"}}`))
	f.Add([]byte(`{"seller":{"legalName":"X","country":"FR","otherEstablishments":["DE","CH"],"overThreshold":true},"buyer":{"country":"EL","vatNumber":"EL094259216","businessStatus":"B2B","postalCode":"63086"}}`))
	f.Add([]byte(`{"buyer":{"country":"DE","country":"FR"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"payment":{"txhash":"0x1","extra":[{"a":1}]},"buyer":{"Country":"DE","x":1}}`))
	f.Add([]byte(`{"payment":{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453"},"seller":{"legalName":"demo  ltd","country":"IE","overThreshold":false},"buyer":{"country":"DE"},"supply":{"kind":"ebook"}}`))
	seller, err := fiscal.Seller{LegalName: "Demo Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-123456", Country: "IE", OverThreshold: true}.Normalised()
	if err != nil {
		f.Fatal(err)
	}
	acc := fiscal.Account{ID: "acct", Seller: seller}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Request
		if err := strictjson.Decode(body, &req); err != nil {
			var se *strictjson.Error
			if !errors.As(err, &se) || se.Detail == "" {
				t.Fatalf("decode: not a *strictjson.Error with a detail: %v", err)
			}
			if strings.HasPrefix(se.Detail, "unknown field ") && !strings.HasPrefix(se.Field, "/") {
				t.Fatalf("unknown member reported at %q: %s", se.Field, se.Detail)
			}
			return
		}
		in, err := req.validate(now, acc, nil)
		if err != nil {
			checkRequestError(t, err)
			return
		}
		if in.contradicts != nil { // answered for a payment not yet recorded
			checkRequestError(t, in.contradicts)
			return
		}
		if in.seller.Country == "" || in.p.TxHash == "" || in.p.Buyer.SupplyKind == "" ||
			(in.buyer.BusinessStatus != parties.BusinessStatusB2C && in.buyer.BusinessStatus != parties.BusinessStatusB2B) {
			t.Fatalf("validated event lacks facts: %+v", in)
		}
		if in.seller.IsAccount && (in.seller.OverThreshold == nil || !*in.seller.OverThreshold) {
			t.Fatalf("the account's own seller lost its profile's threshold fact: %+v", in.seller)
		}
		if len(in.fingerprint()) == 0 {
			t.Fatal("empty fingerprint")
		}
	})
}

// checkRequestError asserts that err is the error of a bad request: a
// BAD_REQUEST or UNSUPPORTED_* *fiscal.Error with a detail and, when it
// names a field, a JSON pointer.
func checkRequestError(t *testing.T, err error) {
	t.Helper()
	var fe *fiscal.Error
	if !errors.As(err, &fe) {
		t.Fatalf("not a *fiscal.Error: %v", err)
	}
	if fe.Code != fiscal.CodeBadRequest && !strings.HasPrefix(string(fe.Code), "UNSUPPORTED_") {
		t.Fatalf("code %s for a request problem: %v", fe.Code, err)
	}
	if fe.Detail == "" {
		t.Fatalf("no detail: %v", err)
	}
	if fe.Field != "" && !strings.HasPrefix(fe.Field, "/") {
		t.Fatalf("field %q is not a JSON pointer: %v", fe.Field, err)
	}
}
