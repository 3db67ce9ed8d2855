package evmverify

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// TestFactsWireFormat pins the JSON form of Facts: it is stored on fiscal
// records and signed into receipts, so any change to it must be a
// deliberate, versioned one (package doc, # Wire format).
func TestFactsWireFormat(t *testing.T) {
	node := newFakeNode()
	node.Mine(fxTx, 20, "0x1",
		authUsedLog(4, fxUSDCBase, fxPayer),
		fakechain.TransferLog(5, fxUSDCBase, fxPayer, fxPayTo, 1_500_000))
	node.Advance(70)
	node.SetFinalized(26)
	v := verifier(t, Policy{MinConfirmations: 12, RequireFinalized: true}, node.Serve(t))
	facts, err := v.Verify(context.Background(), okClaim(1_500_000))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(facts, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "facts.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Facts JSON changed (run go test -update if intended):\n%s\nwant\n%s", got, want)
	}

	// The golden file decodes back to the same Facts: no field is lost.
	var back Facts
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back != facts || back.BlockTime.Location() != time.UTC {
		t.Errorf("round trip %+v\n      want %+v", back, facts)
	}
}
