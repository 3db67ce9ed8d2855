package fiscal

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/jsongen/jsonfill"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/vat"
)

// rawItems are refund items as RecordRefunds holds them: JSON that
// encoding/json copies, compacts or escapes, and JSON it refuses.
var rawItems = []string{`{"id":"rf_1","amountUsdc":"1.00"}`, ` { "note" : "<b>&</b>" } `, "\"\u2028\"", `null`, `{`, `"\xff"`}

// fillCustom makes the record's values with unexported fields: decimals,
// rates, times; and refund items.
func fillCustom(t reflect.Type, r *rand.Rand) (reflect.Value, bool) {
	dec := func() decimal.Decimal { return decimal.New(r.Int64N(2_000_000)-1_000_000, int32(r.IntN(30)-15)) }
	switch t {
	case reflect.TypeFor[decimal.Decimal]():
		return reflect.ValueOf(dec()), true
	case reflect.TypeFor[vat.Percent]():
		return reflect.ValueOf(vat.NewPercent(dec())), true
	case reflect.TypeFor[time.Time]():
		sec := r.Int64N(400_000_000_000) - 100_000_000_000 // past year 9999 MarshalJSON fails
		return reflect.ValueOf(time.Unix(sec, r.Int64N(1e9)).In(time.FixedZone("", r.IntN(49)*1800-12*3600))), true
	case reflect.TypeFor[json.RawMessage]():
		if r.IntN(6) == 0 {
			return reflect.ValueOf(json.RawMessage(nil)), true
		}
		return reflect.ValueOf(json.RawMessage(rawItems[r.IntN(len(rawItems))])), true
	}
	return reflect.Value{}, false
}

// sameJSON fails unless enc writes what json.Marshal writes for v (after
// what b held), or fails where it fails.
func sameJSON[T any](t testing.TB, enc func([]byte, *T) ([]byte, error), v T) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := enc([]byte("x"), &v)
	if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("error %v, json.Marshal's %v", gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("\n got %s\nwant x%s", got, want)
	}
}

func fillRecordJSON(r *rand.Rand, zero int) (Record, Event, []receipt.Opening) {
	f := &jsonfill.Filler{R: r, Custom: fillCustom, Zero: zero}
	var rec Record
	var ev Event
	var op []receipt.Opening
	f.Fill(reflect.ValueOf(&rec).Elem())
	f.Fill(reflect.ValueOf(&ev).Elem())
	f.Fill(reflect.ValueOf(&op).Elem())
	return rec, ev, op
}

// TestRecordJSON: for records filled at random (every field, nil, empty
// and zero values, strings needing every escape and invalid UTF-8,
// refund items json.Marshal compacts or refuses), the generated encoders
// write what json.Marshal writes; so do they for the zero values.
func TestRecordJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 2))
	n := 5000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		rec, ev, op := fillRecordJSON(r, i%8)
		sameJSON(t, appendRecordJSON, rec)
		sameJSON(t, appendEventJSON, ev)
		sameJSON(t, appendOpeningsJSON, op)
	}
	sameJSON(t, appendRecordJSON, Record{})
	sameJSON(t, appendEventJSON, Event{})
	sameJSON(t, appendOpeningsJSON, nil)
	sameJSON(t, appendOpeningsJSON, []receipt.Opening{})
}

// FuzzRecordJSON fills records from the fuzzer's bytes, its raw bytes as
// the description (any UTF-8, valid or not).
func FuzzRecordJSON(f *testing.F) {
	f.Add([]byte{}, "Smith & Sons <Ltd>\u2028")
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\xff"), "\xff\xfe")
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		rec, ev, op := fillRecordJSON(rand.New(&jsonfill.Source{Data: data}), 3)
		rec.Supply.Description, ev.Account = s, s
		sameJSON(t, appendRecordJSON, rec)
		sameJSON(t, appendEventJSON, ev)
		sameJSON(t, appendOpeningsJSON, op)
	})
}

// BenchmarkRecordJSON encodes a record as BenchmarkSettle stores it
// (testdata/settled_record.json): encoding/json against the generated
// encoder.
func BenchmarkRecordJSON(b *testing.B) {
	raw, err := os.ReadFile("testdata/settled_record.json")
	if err != nil {
		b.Fatal(err)
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		b.Fatal(err)
	}
	if got, _ := appendRecordJSON(nil, &rec); !bytes.Equal(got, raw) {
		b.Fatalf("the record does not encode back to its file:\n%s", got)
	}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendRecordJSON(make([]byte, 0, 5<<10), &rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}
