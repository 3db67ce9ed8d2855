package fiscal_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/recordid"
)

// TestRecordIDUsesTheKeyFile: the engine's production record ids are
// package recordid's under the key file of its data directory's keys
// (TestIDIsTheKeyedHMAC there checks them against crypto/hmac), and
// another engine on the same directory makes the same ids.
func TestRecordIDUsesTheKeyFile(t *testing.T) {
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, start, fiscal.Seller{LegalName: "Ids Ltd", VATNumber: "IE1234567T", Country: "IE"})
	e := fiscaltest.Engine(t, cfg)
	k, err := recordid.LoadOrCreate(filepath.Join(cfg.Dir, "keys"), nil) // the file exists: nothing is drawn
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []string{"0xab", "0xAB", "0x9f2c5e3b1a7d4f6e8c0b2a4d6f8e0c2b4a6d8f0e2c4b6a8d0f2e4c6b8a0d2f4e"} {
		for _, network := range []string{"eip155:8453", "eip155:1"} {
			if got, want := e.RecordID(network, tx), k.ID(network, tx); got != want {
				t.Fatalf("RecordID(%s, %s) = %s, want %s", network, tx, got, want)
			}
		}
	}
}
