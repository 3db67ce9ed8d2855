package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
)

// FuzzEvaluate: any body (decoded as POST /v1/compliance/evaluate decodes
// it: package strictjson) gives an evaluation of an attested EU-27 buyer
// that records nothing and states no VAT without a determination, or a
// request error.
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte(`{"seller":{"country":"FR","overThreshold":true},"buyer":{"country":"DE"},"supply":{"kind":"digital_service"},"amountUsdc":"11.90","date":"2026-04-10"}`))
	f.Add([]byte(`{"seller":{"country":"US"},"buyer":{"country":"ES","postalCode":"35001"},"supply":{"kind":"ebook"},"amountUsdc":"0.000001","date":"2026-04-10T23:59:59Z","currency":"USDC"}`))
	f.Add([]byte(`{"buyer":{"country":"US"},"supply":{"kind":"x"},"amountUsdc":"1"}`))
	f.Add([]byte(`{"seller":{"country":"FR"},"buyer":{"country":"EL","vatNumber":"EL094259216"},"supply":{"kind":"saas"},"amountUsdc":"100","date":"2015-01-01"}`))
	s := New(fiscaltest.Engine(f, fiscaltest.Config(f, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)), Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var req EvaluateRequest
		if err := strictjson.Decode(body, &req); err != nil {
			checkDecodeError(t, err)
			return
		}
		ev, err := s.Evaluate(context.Background(), "", "", req)
		if err != nil {
			checkRequestError(t, err)
			return
		}
		if !parties.InEU27(ev.Buyer.Country) || ev.Recorded || ev.Determination.Status == "" ||
			ev.Environment != receipt.EnvSandbox || ev.Watermark != receipt.SandboxWatermark || ev.Quota != nil {
			t.Fatalf("evaluation %+v", ev)
		}
		if !ev.Determination.Determined() && (ev.FX.VATEUR != "" || ev.FX.NetEUR != "" || ev.Determination.RatePercent != nil) {
			t.Fatalf("a manual review states VAT: %+v", ev)
		}
	})
}

// FuzzSimulateRequest: any body decodes and validates (settlement fields and
// the optional seller) to a value or a request error naming a body field,
// never a Go type.
func FuzzSimulateRequest(f *testing.F) {
	f.Add([]byte(`{"amountUsdc":"11.90","txHash":"0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","receiverWallet":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","network":"eip155:8453","consumerCountry":"DE"}`))
	f.Add([]byte(`{"amountUsdc":1,"seller":{"legalName":"X","country":"FR","vatNumber":"FR40303265045"}}`))
	f.Add([]byte(`{"seller":{"legalName":"X","country":"FR","address":{"city":1}}}`))
	f.Add([]byte(`{"SettlementRequest":{"amountUsdc":"1"}}`))
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := New(fiscaltest.Engine(f, fiscaltest.Config(f, now)), Options{}) // no accounts: a simulation names its seller or gets the demo one
	f.Fuzz(func(t *testing.T, body []byte) {
		var req SimulateRequest
		err := strictjson.Decode(body, &req)
		if err != nil {
			checkDecodeError(t, err)
		} else {
			var acc fiscal.Account
			if acc, _, err = s.account("", req.Seller); err == nil {
				if _, err = req.SettlementRequest.Payment(now); err == nil {
					if acc.ID != AnonymousAccount || acc.Seller.LegalName == "" || acc.Seller.Country == "" {
						t.Fatalf("simulation account %+v", acc)
					}
					return
				}
			}
			err = fiscal.InputError(err) // as Simulate answers a payment's field error
			checkRequestError(t, err)
		}
		var fe *fiscal.Error
		var se *strictjson.Error
		if errors.As(err, &fe) && namesGoType(fe.Field) || errors.As(err, &se) && namesGoType(se.Field) {
			t.Fatalf("field names the Go type: %v", err)
		}
	})
}

// namesGoType reports whether the JSON pointer field passes through the
// embedded fiscal.SettlementRequest, which has no level in the JSON. Only
// the last segment may be a name the body sent that the type does not know
// (a body may well send a member "SettlementRequest": it is unknown, and
// reported as such); every segment before it is a member the decoder
// descended into.
func namesGoType(field string) bool {
	segs := strings.Split(field, "/")
	for _, seg := range segs[:len(segs)-1] {
		if strings.Contains(seg, "SettlementRequest") {
			return true
		}
	}
	return false
}

// checkDecodeError asserts that err is a *strictjson.Error with a detail,
// and that an unknown member is reported at its JSON pointer.
func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var se *strictjson.Error
	if !errors.As(err, &se) || se.Detail == "" {
		t.Fatalf("decode: not a *strictjson.Error with a detail: %v", err)
	}
	if strings.HasPrefix(se.Detail, "unknown field ") && !strings.HasPrefix(se.Field, "/") {
		t.Fatalf("unknown member reported at %q: %s", se.Field, se.Detail)
	}
}

// checkRequestError asserts that err is the error of a bad request: a
// BAD_REQUEST or UNSUPPORTED_* (UNSUPPORTED_JURISDICTION included)
// *fiscal.Error with a detail and, when it names a field, a JSON pointer.
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
