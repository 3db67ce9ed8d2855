package audit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
)

// TestReceiptNamesTheKeyThatVerified: a checkpoint may carry a signature
// line under a kid of the key set made by another key of that name (C2SP
// signed-note names a key by its name and key hash), which Verify skips.
// The output must name the key whose cosignature verified, not the first
// line whose name is in the key set.
func TestReceiptNamesTheKeyThatVerified(t *testing.T) {
	w := getWorld(t)
	doc, _ := os.ReadFile(w.receiptDE)
	jwksDoc, _ := os.ReadFile(w.jwks)
	ks, err := receipt.ParseKeySet(jwksDoc)
	if err != nil {
		t.Fatal(err)
	}
	real := ks.Keys[len(ks.Keys)-1].Kid
	var r struct {
		TlogProof string `json:"tlog_proof"`
	}
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatal(err)
	}
	var cosigLine string
	for _, l := range strings.Split(r.TlogProof, "\n") {
		if strings.HasPrefix(l, "— "+real+" ") {
			cosigLine = l
		}
	}
	if cosigLine == "" {
		t.Fatalf("no cosignature by %s in %s", real, r.TlogProof)
	}

	// A decoy key joins the key set, valid at the receipt's issue; the
	// checkpoint gets a line under the decoy's kid from another key of
	// that name, ahead of the real cosignature.
	decoyPub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	otherPub, otherPriv, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{9}, 64)))
	decoy, err := receipt.NewKey(decoyPub, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ks.Keys = append([]receipt.Key{decoy}, ks.Keys...)
	set, _ := json.Marshal(ks)
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwks, set, 0o644); err != nil {
		t.Fatal(err)
	}
	sig := binary.BigEndian.AppendUint32(nil, receipt.NoteKeyHash(decoy.Kid, otherPub))
	sig = append(sig, ed25519.Sign(otherPriv, []byte("not the checkpoint"))...)
	decoyLine := "— " + decoy.Kid + " " + base64.StdEncoding.EncodeToString(sig)
	file := tamper(t, w.receiptDE, []byte(cosigLine), []byte(decoyLine+`\n`+cosigLine))

	code, out, errOut := w.run(t, "receipt", file, "--jwks", jwks, "--log-key-file", w.logFile)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d (the decoy line is another key's, not a failed check)\n%s%s", code, ExitOK, out, errOut)
	}
	if f := flat(out); !strings.Contains(f, "receipt key "+real) || strings.Contains(f, decoy.Kid) {
		t.Errorf("the output names %s, want the key that verified, %s:\n%s", decoy.Kid, real, out)
	}
}
