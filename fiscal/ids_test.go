package fiscal_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestRecordIDIsTheKeyedHMAC: a production record's id is "x402-" and
// the first 16 bytes, in hex, of HMAC-SHA256 under the record-id key of
// network ":" lower-case tx hash (ids.go), computed here from the key
// file with crypto/hmac, for ids asked from many goroutines at once (the
// engine clones one keyed HMAC per id; run with -race).
func TestRecordIDIsTheKeyedHMAC(t *testing.T) {
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, start, fiscal.Seller{LegalName: "Ids Ltd", VATNumber: "IE1234567T", Country: "IE"})
	e := fiscaltest.Engine(t, cfg)
	raw, err := os.ReadFile(filepath.Join(cfg.Dir, "keys", "record-id.key"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		t.Fatalf("record-id key: %v (%d bytes)", err, len(key))
	}
	want := func(network, txHash string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(network + ":" + strings.ToLower(txHash)))
		return "x402-" + hex.EncodeToString(m.Sum(nil)[:16])
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d", g, i))
				tx := "0x" + hex.EncodeToString(sum[:])
				if i%2 == 1 {
					tx = "0x" + strings.ToUpper(tx[2:])
				}
				network := []string{"eip155:8453", "eip155:1"}[i%2]
				if got, w := e.RecordID(network, tx), want(network, tx); got != w {
					t.Errorf("RecordID(%s, %s) = %s, want %s", network, tx, got, w)
					return
				}
			}
		})
	}
	wg.Wait()
	if e.RecordID("eip155:8453", "0xAB") != e.RecordID("eip155:8453", "0xab") || e.RecordID("eip155:8453", "0xab") == e.RecordID("eip155:1", "0xab") {
		t.Fatal("the id does not follow the lower-case tx hash and the network")
	}
}
