package receipt

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// badLogKeyLine returns the tlog-proof of r with a second signature
// line by the log key (same name, same key hash) whose Ed25519 signature
// is wrong but canonically encoded.
func badLogKeyLine(t *testing.T, tlogProof string) string {
	t.Helper()
	start, lines := signatureLines(tlogProof)
	logLine := lines[0] // "— <origin> <base64(hash ‖ sig)>", the log key signs first
	prefix, b64, _ := strings.Cut(strings.TrimPrefix(logLine, "— "), " ")
	if prefix != testOrigin {
		t.Fatalf("first signature line is %q, want the log key's", logLine)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	raw[10] ^= 0x01 // a byte of the signature, not of the key hash
	bad := "— " + testOrigin + " " + base64.StdEncoding.EncodeToString(raw)
	return tlogProof[:start] + strings.Join(append(lines, bad), "\n") + "\n"
}

// TestSecondLogKeyLineMustVerify: a checkpoint carrying a second signature
// line of the log key whose signature does not verify is refused, as
// testdata/verify.mjs and /verify refuse it. golang.org/x/mod/sumdb/note.Open
// verifies only the first line of each (name, key hash) and drops the
// others; a review found Verify accepting it, a second spelling of a valid
// receipt (logKeyLinesVerify).
func TestSecondLogKeyLineMustVerify(t *testing.T) {
	for _, s := range []*tamperSet{newTamperSetV3(t), newTamperSetV4(t)} {
		bad := s.with(t, func(r *Receipt) { r.TlogProof = badLogKeyLine(t, r.TlogProof) })
		c, err := Verify(bad, s.f.jwks(t), s.f.log.vkey)
		if err == nil {
			t.Errorf("%s: Verify accepts a checkpoint with an invalid log-key signature line (receipt %s, index %d)", s.version, c.ReceiptID, c.Log.Index)
		}
	}
}

type agreementCase struct {
	Name    string `json:"name"`
	Receipt []byte `json:"receipt"`
	JWKS    []byte `json:"jwks"`
	VKey    string `json:"vkey"`
}

type agreementResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Step  string `json:"step"`
	Error string `json:"error"`
}

func nodeVerdicts(t *testing.T, cases []agreementCase) []agreementResult {
	t.Helper()
	node := testtool.LookPath(t, "node")
	file := filepath.Join(t.TempDir(), "cases.json")
	if err := writeJSONFile(file, cases); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join("testdata", "verify.mjs"), "--cases", file).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var rs []agreementResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r agreementResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if len(rs) != len(cases) {
		t.Fatalf("node answered %d of %d", len(rs), len(cases))
	}
	return rs
}

// TestGoAndNodeAgreeOnNoteForms: documents on which a review found the two
// verifiers (Go's Verify and testdata/verify.mjs, the reference for
// /verify) disagreeing, one accepting what the other refused: a second,
// altered log-key line; a signature line whose key name Go's note package
// refuses ('+'); an empty extra line. Both now give the same verdict.
func TestGoAndNodeAgreeOnNoteForms(t *testing.T) {
	var cases []agreementCase
	for _, s := range []*tamperSet{newTamperSetV3(t), newTamperSetV4(t)} {
		jwks, vkey := s.f.jwks(t), s.f.log.vkey
		add := func(name string, mutate func(r *Receipt)) {
			cases = append(cases, agreementCase{Name: s.version + " " + name, Receipt: s.with(t, mutate), JWKS: jwks, VKey: vkey})
		}
		// Go accepts, node rejects.
		add("second log-key line with a bad signature", func(r *Receipt) { r.TlogProof = badLogKeyLine(t, r.TlogProof) })
		// Node accepts, Go rejects: a witness line whose key name holds
		// '+' (not a valid note key name: note.Open calls the whole note
		// malformed; verify.mjs ignores it as an unknown key).
		add("unknown signature line with '+' in the key name", func(r *Receipt) {
			r.TlogProof += "— witness+example " + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 68)) + "\n"
		})
		// Node accepts, Go rejects: an empty "extra" line.
		add("empty extra line", func(r *Receipt) {
			r.TlogProof = strings.Replace(r.TlogProof, TlogProofHeader+"\n", TlogProofHeader+"\nextra \n", 1)
		})
	}
	rs := nodeVerdicts(t, cases)
	for i, c := range cases {
		_, err := Verify(c.Receipt, c.JWKS, c.VKey)
		goOK := err == nil
		if goOK != rs[i].OK {
			t.Errorf("%s: Go ok=%v (%v), node ok=%v (%s: %s)", c.Name, goOK, err, rs[i].OK, rs[i].Step, rs[i].Error)
		}
	}
}

// TestNodeRefusesAnotherSpellingOfAV4Leaf: the receipt key's cosignature
// vouches for the leaves of the tree that are 4.0.0 payloads; Go decides
// that by the exact spelling (IsLeafV4's prefix, re-encoding byte for
// byte). A logged leaf with the same claims spelt otherwise (one space
// after '{') is refused by Go (StepPayload); a review found verify.mjs
// (and /verify) accepting it. They now require IsLeafV4's prefix.
func TestNodeRefusesAnotherSpellingOfAV4Leaf(t *testing.T) {
	f := newFixture(t)
	public, _ := conceal(t, asV4(sampleClaimsV3Clear(0)), 60)
	public.Log = LogRef{Origin: f.log.origin}
	p, err := Seal(public)
	if err != nil {
		t.Fatal(err)
	}
	leaf := append([]byte("{ "), p[1:]...) // not IsLeafV4
	if IsLeafV4(leaf) {
		t.Fatal("leaf still has the 4.0.0 prefix")
	}
	idx := f.log.append(t, leaf)
	f.log.cosigners = []note.Signer{f.signer.NoteSigner()}
	cp := f.log.checkpoint(t)
	doc := encodeReceipt(t, Receipt{Spec: SpecV4, ID: public.ReceiptID, Claims: p,
		Payload: base64.RawURLEncoding.EncodeToString(leaf), TlogProof: FormatTlogProof(idx, f.log.prove(t, idx), cp)})
	_, goErr := Verify(doc, f.jwks(t), f.log.vkey)
	rs := nodeVerdicts(t, []agreementCase{{Name: "non-canonical v4 leaf", Receipt: doc, JWKS: f.jwks(t), VKey: f.log.vkey}})
	if (goErr == nil) != rs[0].OK {
		t.Errorf("Go ok=%v (%v), node ok=%v (%s: %s)", goErr == nil, goErr, rs[0].OK, rs[0].Step, rs[0].Error)
	}
}

// countingVerifier counts the signatures a note.Verifier checks.
type countingVerifier struct {
	note.Verifier
	n int
}

func (c *countingVerifier) Verify(msg, sig []byte) bool {
	c.n++
	return c.Verifier.Verify(msg, sig)
}

// TestLogKeyLineVerifiedOnce: checking every log-key line
// (TestSecondLogKeyLineMustVerify) does not verify again the line
// note.Open has verified: a receipt with one log-key line costs one
// verification by the log key, not two (a third of a 1.0.0 receipt's
// Ed25519 work, a quarter of Verify's time).
func TestLogKeyLineVerifiedOnce(t *testing.T) {
	for _, s := range []*tamperSet{newTamperSet(t), newTamperSetV3(t), newTamperSetV4(t)} {
		v, err := NewVerifier(s.f.jwks(t), s.f.log.vkey)
		if err != nil {
			t.Fatal(err)
		}
		counter := &countingVerifier{Verifier: v.logKey}
		v.logKey = counter
		for i, doc := range s.rs {
			counter.n = 0
			if _, err := v.Verify(doc); err != nil {
				t.Fatalf("%s receipt %d: %v", s.version, i, err)
			}
			if counter.n != 1 {
				t.Errorf("%s receipt %d: the log key verified %d signatures; its checkpoint has one line of it", s.version, i, counter.n)
			}
		}
		bad := s.with(t, func(r *Receipt) { r.TlogProof = badLogKeyLine(t, r.TlogProof) })
		counter.n = 0
		if _, err := v.Verify(bad); err == nil || counter.n != 2 {
			t.Errorf("%s: with a second, altered log-key line: %d verifications, error %v; want 2 and a refusal", s.version, counter.n, err)
		}
	}
}
