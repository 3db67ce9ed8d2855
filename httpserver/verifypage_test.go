package httpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestVerifyPageServed: GET /verify is one self-contained page, public,
// cacheable, with a Content-Security-Policy that admits its own inline
// script and style and nothing from elsewhere.
func TestVerifyPageServed(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/verify", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /verify: %d %s", r.status, r.header.Get("Content-Type"))
	}
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	// No external resources: no src/href attribute points anywhere, no
	// style loads a font or an image, no absolute URL is written down.
	style := r.body[bytes.Index(r.body, []byte("<style>")):bytes.Index(r.body, []byte("</style>"))]
	for _, bad := range []string{"src=", "href=", "http://", "https://", "<link", "<iframe", "<img"} {
		if bytes.Contains(r.body, []byte(bad)) {
			t.Errorf("the page contains %q: it must load nothing from elsewhere", bad)
		}
	}
	for _, bad := range []string{"@import", "url(", "@font-face"} {
		if bytes.Contains(style, []byte(bad)) {
			t.Errorf("the style sheet contains %q: it must load nothing from elsewhere", bad)
		}
	}
	if n := bytes.Count(r.body, []byte("<script")); n != 1 {
		t.Errorf("%d script elements, want the one inline script", n)
	}
	if etag := r.header.Get("ETag"); etag == "" || f.do("GET", "/verify", "", nil, "If-None-Match", etag).status != 304 {
		t.Errorf("ETag %q does not answer 304", etag)
	}
}

// browser starts Debian's chromium headless with a fresh profile and
// returns a context for one tab. Without chromium the test skips (fails
// under FISCAL402_STRICT=1).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := testtool.LookPath(t, "chromium")
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first run starts the browser; it bounds nothing (a timeout here
	// would stop the browser), the actions below carry their own.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(900, 1100)); err != nil {
		t.Fatalf("chromium (%s) does not start: %v", path, err)
	}
	return ctx
}

// js runs a statement in the page. Fields are set and buttons pressed this
// way rather than through chromedp's DOM queries, which right after a
// navigation may still resolve a node of the page before.
func js(statement string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool]("(() => { "+statement+"; return true; })()")(ctx, t)
		return err
	})
}

// setValue sets the value of the form field with this id, as typing would.
func setValue(id, value string) chromedp.Action[chromedp.Void] {
	v, _ := json.Marshal(value)
	return js(fmt.Sprintf(`const e = document.getElementById(%q); e.value = %s; e.dispatchEvent(new Event('input'))`, id, v))
}

// verdict is what the page shows once it has decided.
type verdict struct {
	Verdict string `json:"verdict"`
	Step    string `json:"step"`
	Title   string `json:"title"`
	Reason  string `json:"reason"`
	Advice  string `json:"advice"`
	Facts   string `json:"facts"`
}

const readVerdict = `(() => {
	const v = document.getElementById('verdict');
	if (!['valid', 'invalid'].includes(v.dataset.verdict)) return false;
	const facts = document.getElementById('facts');
	return {verdict: v.dataset.verdict, step: v.dataset.step || '',
		title: document.getElementById('verdict-title').innerText, reason: document.getElementById('verdict-reason').innerText,
		advice: document.getElementById('verdict-advice').innerText, facts: facts.hidden ? '' : facts.innerText};
})()`

// show runs the actions in the tab, waits for the verdict, and saves a
// screenshot of the whole page as name.png in dir.
func show(t *testing.T, ctx context.Context, dir, name string, actions ...chromedp.Action[chromedp.Void]) verdict {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v, err := chromedp.Run(tctx, chromedp.Poll[verdict](readVerdict, chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		state, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('verdict').innerText`))
		t.Fatalf("%s: no verdict: %v (the page shows %q)", name, err, state)
	}
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVerifyPageInBrowser drives the page in a real browser: a receipt
// fetched by id shows green with its facts; one changed amount shows red
// naming the signature (changed in the signed part) or the readable claims
// (changed in the copy); a wrong key set shows red; the page saved to disk
// verifies offline from dropped files, for receipts of 1.0.0, 2.0.0, 3.0.0
// and 4.0.0 (whose signed part is the payload, signed through the
// checkpoint the receipt key cosigns). Screenshots go to the test's temporary directory (to
// $FISCAL402_SCREENSHOTS when set, to look at them).
func TestVerifyPageInBrowser(t *testing.T) {
	ctx := browser(t)
	shots := t.TempDir()
	if d := os.Getenv("FISCAL402_SCREENSHOTS"); d != "" {
		shots = d
	}
	f := newFixture(t)
	rec := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if rec.status != 201 {
		t.Fatalf("settle: %d %s", rec.status, rec.body)
	}
	var record struct {
		Receipt struct{ ID string } `json:"receipt"`
	}
	json.Unmarshal(rec.body, &record)
	id := record.Receipt.ID
	doc := f.do("GET", "/v1/receipts/"+id, "", nil).body
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	logKey := strings.TrimSpace(string(f.do("GET", "/.well-known/log-key", "", nil).body))
	page := f.srv.URL + "/verify"

	t.Run("valid receipt by id", func(t *testing.T) {
		v := show(t, ctx, shots, "valid", chromedp.Navigate(page+"?id="+url.QueryEscape(id)))
		if v.Verdict != "valid" {
			t.Fatalf("verdict %+v", v)
		}
		for _, want := range []string{"Seller A Ltd", "Ireland (IE)", "11.90 USDC", "Base", "Germany (DE)", "19 % VAT", "EUR", "Entry 0 of the public ledger", id} {
			if !strings.Contains(v.Facts, want) {
				t.Errorf("the facts lack %q:\n%s", want, v.Facts)
			}
		}
	})

	// One changed amount, in the signed part (a 4.0.0 receipt's payload,
	// the log leaf) and in the readable copy alike: only the proof can
	// tell, the changed payload not being the leaf the checkpoint holds.
	var r struct {
		Payload   string `json:"payload"`
		TlogProof string `json:"tlog_proof"`
	}
	json.Unmarshal(doc, &r)
	payload, _ := base64.RawURLEncoding.DecodeString(r.Payload)
	forgedPayload := bytes.ReplaceAll(payload, []byte(`"amount_usdc":"11.90"`), []byte(`"amount_usdc":"1.90"`))
	forged := bytes.ReplaceAll(bytes.Replace(doc, []byte(r.Payload), []byte(base64.RawURLEncoding.EncodeToString(forgedPayload)), 1), []byte(`"amount_usdc": "11.90"`), []byte(`"amount_usdc": "1.90"`))
	if r.Payload == "" || bytes.Equal(forged, doc) || bytes.Equal(forgedPayload, payload) {
		t.Fatal("the amount was not changed")
	}
	// The receipt key's cosignature of the checkpoint, one character
	// changed: the receipt's signature.
	cosig := r.TlogProof[strings.LastIndex(strings.TrimSuffix(r.TlogProof, "\n"), " ")+1 : len(r.TlogProof)-1]
	c := []byte(cosig)
	if c[20] = 'A'; cosig[20] == 'A' {
		c[20] = 'B'
	}
	badCosig := bytes.Replace(doc, []byte(cosig), c, 1)
	run := 0 // a fresh page per case: navigating to the same URL may keep the old one
	paste := func(receiptDoc []byte, extra ...chromedp.Action[chromedp.Void]) []chromedp.Action[chromedp.Void] {
		run++
		return append(append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(fmt.Sprintf("%s?case=%d", page, run)), setValue("receipt", string(receiptDoc))}, extra...), js(`document.getElementById('verify').click()`))
	}
	t.Run("changed amount in the signed part", func(t *testing.T) {
		v := show(t, ctx, shots, "invalid-inclusion", paste(forged)...)
		if v.Verdict != "invalid" || v.Step != "inclusion" || !strings.Contains(v.Reason, "not proven to be in the ledger") || v.Facts != "" {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("changed cosignature", func(t *testing.T) {
		v := show(t, ctx, shots, "invalid-signature", paste(badCosig)...)
		if v.Verdict != "invalid" || v.Step != "signature" || !strings.Contains(v.Reason, "signature by the issuer's key") || v.Facts != "" {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("changed amount in the readable copy", func(t *testing.T) {
		changed := bytes.Replace(doc, []byte(`"amount_usdc": "11.90"`), []byte(`"amount_usdc": "1.90"`), 1)
		v := show(t, ctx, shots, "invalid-claims", paste(changed)...)
		if v.Verdict != "invalid" || v.Step != "claims-mismatch" || !strings.Contains(v.Reason, `/settlement/amount_usdc is "1.90"`) || !strings.Contains(v.Reason, `"11.90"`) {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("wrong key set", func(t *testing.T) {
		other, err := receipt.OpenKeyring(t.TempDir(), receipt.EnvProduction, testNow, nil)
		if err != nil {
			t.Fatal(err)
		}
		otherSet, _ := json.Marshal(other.KeySet())
		v := show(t, ctx, shots, "invalid-keyset", paste(doc, setValue("jwks", string(otherSet)), setValue("logkey", logKey))...)
		if v.Verdict != "invalid" || v.Step != "kid" || !strings.Contains(v.Reason, "does not contain the key that signed this receipt") {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("refund receipt by id", func(t *testing.T) {
		var settled struct{ ID string }
		json.Unmarshal(rec.body, &settled)
		rf := f.do("POST", "/settlements/"+settled.ID+"/refunds", keyA, []byte(`{"amountUsdc":"4.90"}`))
		var refund struct {
			Receipt struct{ ID string } `json:"receipt"`
			FX      struct {
				GrossEUR string `json:"grossEur"`
			} `json:"fx"`
		}
		if err := json.Unmarshal(rf.body, &refund); err != nil || rf.status != 201 {
			t.Fatalf("refund: %d %s", rf.status, rf.body)
		}
		v := show(t, ctx, shots, "valid-refund", chromedp.Navigate(page+"?id="+url.QueryEscape(refund.Receipt.ID)))
		if v.Verdict != "valid" {
			t.Fatalf("verdict %+v", v)
		}
		for _, want := range []string{"Amount refunded", "4.900000 USDC", "Correction in euros", refund.FX.GrossEUR + " EUR", "Credit note", "F402-CN-2026-000001", "Corrects", "receipt rcpt_" + settled.ID} {
			if !strings.Contains(v.Facts, want) {
				t.Errorf("the facts lack %q:\n%s", want, v.Facts)
			}
		}
	})
	t.Run("sandbox receipt by id", func(t *testing.T) {
		sim := f.do("POST", "/sandbox/v1/simulate", "", mustJSON(t, settlement(nil)))
		var s struct {
			Receipt struct{ ID string } `json:"receipt"`
		}
		if err := json.Unmarshal(sim.body, &s); err != nil || sim.status != 201 {
			t.Fatalf("simulate: %d %s", sim.status, sim.body)
		}
		v := show(t, ctx, shots, "valid-sandbox", chromedp.Navigate(page+"?id="+url.QueryEscape(s.Receipt.ID)))
		if v.Verdict != "valid" || !strings.Contains(v.Title, "test receipt") {
			t.Fatalf("verdict %+v", v)
		}
	})

	// Saved to disk and opened offline: the receipt and the two key files
	// are dropped on the page (a file input, as a drop does).
	saved := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(saved, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := "file://" + write("verify.html", f.do("GET", "/verify", "", nil).body)
	vectors := filepath.Join(testtool.RepoDir(t), "receipt", "testdata")
	vector := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(vectors, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	offline := []struct {
		name                 string
		receipt, jwks, vkey  []byte
		verdict, step, facts string
	}{
		{"offline-4.0.0", doc, jwks, []byte(logKey + "\n"), "valid", "", "Seller A Ltd"},
		{"offline-vector-1.0.0", vector("receipt-v1.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "EUR"},
		{"offline-vector-2.0.0", vector("receipt-v2.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "GBP"},
		{"offline-vector-3.0.0", vector("receipt-v3.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "Kept private"},
		{"offline-vector-3.0.0-b2b", vector("receipt-v3-b2b.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "A business"},
		{"offline-vector-3.0.0-pending", vector("receipt-v3-pending.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "Pending review"},
		{"offline-vector-sandbox-3.0.0", vector("receipt-v3-sandbox.json"), vector("jwks-sandbox.json"), vector("log-sandbox.vkey"), "valid", "", "Amount paid"},
		{"offline-vector-4.0.0", vector("receipt-v4.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "Kept private"},
		{"offline-vector-4.0.0-uk", vector("receipt-v4-uk.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "In GBP"},
		{"offline-vector-4.0.0-pending", vector("receipt-v4-pending.json"), vector("jwks.json"), vector("log.vkey"), "valid", "", "Pending review"},
		{"offline-vector-sandbox-4.0.0", vector("receipt-v4-sandbox.json"), vector("jwks-sandbox.json"), vector("log-sandbox.vkey"), "valid", "", "Amount paid"},
		{"offline-sandbox-4.0.0-with-production-key-set", vector("receipt-v4-sandbox.json"), vector("jwks.json"), vector("log-sandbox.vkey"), "invalid", "kid", ""},
		{"offline-4.0.0-revoked-key", vector("receipt-v4.json"), bytes.Replace(vector("jwks.json"), []byte(`"use": "sig",`), []byte(`"use": "sig", "revoked": true,`), 1), vector("log.vkey"), "invalid", "key-revoked", ""},
		{"offline-sandbox-with-production-keys", vector("receipt-sandbox.json"), vector("jwks.json"), vector("log.vkey"), "invalid", "kid", ""},
		{"offline-wrong-log-key", doc, jwks, vector("log.vkey"), "invalid", "checkpoint-signature", ""},
	}
	for _, c := range offline {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for name, data := range map[string][]byte{"receipt.json": c.receipt, "jwks.json": c.jwks, "log-key.txt": c.vkey} {
				p := filepath.Join(dir, name)
				os.WriteFile(p, data, 0o644)
				paths = append(paths, p)
			}
			v := show(t, ctx, shots, c.name, chromedp.Navigate(file+"?case="+c.name), chromedp.SetUploadFiles(chromedp.ID("files"), paths))
			if v.Verdict != c.verdict || v.Step != c.step || !strings.Contains(v.Facts, c.facts) {
				t.Fatalf("verdict %+v, want %s %q with facts containing %q", v, c.verdict, c.step, c.facts)
			}
		})
	}
}
