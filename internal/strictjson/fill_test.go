package strictjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The types FuzzFillMatchesUnmarshal decodes every input into: what fill
// decodes itself, and what it must leave to encoding/json.

type wide struct {
	S     string            `json:"s"`
	B     bool              `json:"b,omitempty"`
	I     int               `json:"i"`
	I8    int8              `json:"i8"`
	U16   uint16            `json:"u16"`
	U     uint64            `json:"u"`
	F32   float32           `json:"f32"`
	F     float64           `json:"f"`
	P     *inner            `json:"p,omitempty"`
	PS    *string           `json:"ps"`
	L     []string          `json:"l"`
	LP    []*item           `json:"lp"`
	LL    [][]int           `json:"ll"`
	M     map[string]int    `json:"m"`
	MM    map[string][]item `json:"mm"`
	Name  named             `json:"named"`
	NoTag string
	skip  string //nolint:unused // unexported: encoding/json ignores it
	Dash  string `json:"-"`
	Self  *wide  `json:"self"`
}

type named string

type settlementLike struct {
	AmountUSDC      string   `json:"amountUsdc"`
	TxHash          string   `json:"txHash"`
	Timestamp       string   `json:"timestamp"`
	PayerWallet     string   `json:"payerWallet"`
	ReceiverWallet  string   `json:"receiverWallet"`
	Network         string   `json:"network"`
	ConsumerCountry string   `json:"consumerCountry,omitempty"`
	Evidence        []item   `json:"locationEvidence,omitempty"`
	Conditions      []string `json:"rateConditions,omitempty"`
	Provider        *inner   `json:"underlyingProvider,omitempty"`
}

type custom struct{ v string }

func (c *custom) UnmarshalJSON(b []byte) error { c.v = "custom:" + string(b); return nil }

type withMethods struct {
	C  custom    `json:"c"`
	T  time.Time `json:"t"`
	N  json.Number
	R  json.RawMessage `json:"r"`
	By []byte          `json:"by"`
	A  [2]int          `json:"a"`
	X  any             `json:"x"`
	Q  int             `json:"q,string"`
}

var fillTypes = []func() any{
	func() any { return new(target) },
	func() any { return new(wide) },
	func() any { return new(settlementLike) },
	func() any { return new(withMethods) },
	func() any { return new(embedding) },
}

// TestPlans: fill decodes plain types and leaves the others to
// encoding/json.
func TestPlans(t *testing.T) {
	for _, tc := range []struct {
		v    any
		fill bool
	}{
		{target{}, true}, {wide{}, true}, {settlementLike{}, true},
		{withMethods{}, false}, {embedding{}, false},
		{struct{ T time.Time }{}, false},
		{struct{ B []byte }{}, false},
		{struct {
			X int `json:"x,string"`
		}{}, false},
		{reflect.New(reflect.StructOf([]reflect.StructField{ // two fields of one name (go vet refuses it in a type literal)
			{Name: "A", Type: reflect.TypeFor[string](), Tag: `json:"a"`},
			{Name: "B", Type: reflect.TypeFor[string](), Tag: `json:"a"`},
		})).Elem().Interface(), false},
		{struct {
			A string `json:"a b"`
		}{}, false},
	} {
		if got := planOf(reflect.TypeOf(tc.v)) != nil; got != tc.fill {
			t.Errorf("%T: filled %v, want %v", tc.v, got, tc.fill)
		}
	}
}

// checkSame decodes data into a fresh value of each type twice, by fill
// where it can and by encoding/json alone, and requires the same value and
// the same error.
func checkSame(t *testing.T, data []byte) {
	t.Helper()
	for _, mk := range fillTypes {
		fast, slow := mk(), mk()
		errFast := decode(data, fast, false, true)
		errSlow := decode(data, slow, false, false)
		if !reflect.DeepEqual(errFast, errSlow) {
			t.Fatalf("%T %q: error %v, encoding/json's %v", fast, data, errFast, errSlow)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%T %q:\nfill          %+v\nencoding/json %+v", fast, data, fast, slow)
		}
	}
}

var fillSeeds = []string{
	`{"amountUsdc":"1.50","name":"Zo\u00eb \ud83d\ude80","buyer":{"country":"DE","items":[{"kind":"a"},{"kind":"b"}]},"extra":{"Any":"x","any":"y"},"flag":true}`,
	`{"amountUsdc":"11.90","txHash":"0x5f0e","timestamp":"2026-04-10T14:30:00Z","payerWallet":"0x7099","receiverWallet":"0x3C44","network":"eip155:8453","consumerCountry":"DE"}`,
	`{"locationEvidence":[],"rateConditions":["it_isbn_issn"],"underlyingProvider":{"country":"FR","items":null}}`,
	`{"locationEvidence":null,"underlyingProvider":null,"amountUsdc":null}`,
	`{"s":"a\"b\\c\/d\b\f\n\r\t\u0000\u00e9\uD834\uDD1E","b":true,"i":-12,"i8":127,"u16":65535,"u":18446744073709551615,"f32":1.5e3,"f":-0.25E-2}`,
	`{"i8":128}`, `{"u16":-1}`, `{"i":1.5}`, `{"i":1e2}`, `{"f32":1e39}`, `{"u":18446744073709551616}`,
	`{"p":{"country":"DE","items":[{"kind":"x"},null]},"ps":"s","l":["a","b"],"lp":[{"kind":"k"},null],"ll":[[1,2],[],null]}`,
	`{"m":{"a":1,"b":null},"mm":{"x":[{"kind":"y"}],"z":[]},"named":"n","NoTag":"t","self":{"self":{"s":"deep"}}}`,
	`{"s":1}`, `{"b":"true"}`, `{"i":"1"}`, `{"p":"x"}`, `{"l":{"a":1}}`, `{"m":[1]}`, `{"lp":[1]}`, `{"self":[]}`,
	`{"l":[1,"a"]}`, `{"m":{"a":"b"}}`, `{"buyer":{"items":[{"kind":5}]}}`,
	`{"c":"x","t":"2026-01-01T00:00:00Z","N":12,"r":{"a":[1]},"by":"aGk=","a":[1,2,3],"x":{"y":1},"q":"7"}`,
	`{"amountUsdc":"1"}`, `{}`, ` { "name" : "spaced" , "flag" : false } `,
	`{"extra":{"a\u0062":"escaped key"}}`, `{"n\u0061me":"escaped member"}`,
	`{"buyer":{"country":"DE"},"buyer2":1}`,
}

func TestFillMatchesUnmarshal(t *testing.T) {
	for _, s := range fillSeeds {
		checkSame(t, []byte(s))
	}
}

func FuzzFillMatchesUnmarshal(f *testing.F) {
	for _, s := range fillSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkSame)
}

// TestFillDoesNotMerge: a target that is not zero is decoded by
// encoding/json, which keeps what the document does not set.
func TestFillDoesNotMerge(t *testing.T) {
	v := target{Name: "kept", Buyer: inner{Items: []item{{Kind: "old"}, {Kind: "old2"}}}}
	if err := Decode([]byte(`{"amountUsdc":"1","buyer":{"items":[{}]}}`), &v); err != nil {
		t.Fatal(err)
	}
	want := target{Amount: "1", Name: "kept", Buyer: inner{Items: []item{{Kind: "old"}}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %+v, want %+v (encoding/json's merge)", v, want)
	}
}

// TestFillAllocations: a settlement request costs the strings it holds and
// no more (the scan allocates nothing; encoding/json made 21 allocations
// of this body and its like).
func TestFillAllocations(t *testing.T) {
	body := []byte(fillSeeds[1])
	allocs := testing.AllocsPerRun(100, func() {
		var v settlementLike
		if err := Decode(body, &v); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 8 { // the seven strings, and the target itself (it escapes into Decode's any)
		t.Errorf("%.0f allocations, want at most 8", allocs)
	}
}

func BenchmarkDecodeSettlement(b *testing.B) {
	body := []byte(strings.Replace(fillSeeds[1], `"DE"}`, `"DE","locationEvidence":[{"kind":"ip"},{"kind":"billing"}],"rateConditions":["a"]}`, 1))
	for _, fast := range []bool{false, true} {
		name := "encoding-json"
		if fast {
			name = "fill"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v settlementLike
				if err := decode(body, &v, false, fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
