package receipt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzSeeds are the committed seed corpora under testdata/fuzz/<target>/,
// in the file format of go test (-update rewrites them). They come from the
// same deterministic fixtures as the targets' f.Add seeds, so that an
// accepted input is one the target knows was signed.
func fuzzSeeds(t testing.TB) map[string]map[string][]any {
	v1, v3 := newTamperSet(t), newTamperSetV3(t)
	seeds := map[string]map[string][]any{}
	add := func(target, name string, args ...any) {
		if seeds[target] == nil {
			seeds[target] = map[string][]any{}
		}
		seeds[target][name] = args
	}
	for _, s := range []*tamperSet{v1, v3} {
		add("FuzzVerify", s.version+"-good", s.rs[1])
		add("FuzzVerify", s.version+"-pending", s.rs[4])
		add("FuzzVerify", s.version+"-readable-changed", []byte(strings.Replace(string(s.rs[1]), `"gross_eur": "10.33"`, `"gross_eur": "1.33"`, 1)))
		add("FuzzVerify", s.version+"-duplicate-member", []byte(strings.Replace(string(s.rs[1]), `"custody": "none",`, `"custody": "none", "custody": "none",`, 1)))
		add("FuzzParseReceipt", s.version+"-good", s.rs[1])
		add("FuzzParseTlogProof", s.version, decodeReceipt(t, s.rs[1]).TlogProof)
		parts, err := splitJWS(decodeReceipt(t, s.rs[1]).JWS)
		if err != nil {
			t.Fatal(err)
		}
		version := byte(0)
		if s.version == "v3" {
			version = 2
		}
		add("FuzzDecodePayload", s.version, parts.payload, version)
		add("FuzzJWSHeader", s.version, parts.header)
	}
	for _, s := range []*tamperSet{v1, v3} {
		r := decodeReceipt(t, s.rs[1])
		parts, err := splitJWS(r.JWS)
		if err != nil {
			t.Fatal(err)
		}
		add("FuzzSameTokens", s.version+"-claims", []byte(r.Claims), parts.payload)
	}
	v4 := newTamperSetV4(t)
	add("FuzzVerify", "v4-good", v4.rs[1])
	add("FuzzVerify", "v4-pending", v4.rs[4])
	add("FuzzVerify", "v4-readable-changed", []byte(strings.Replace(string(v4.rs[1]), `"gross_eur": "10.33"`, `"gross_eur": "1.33"`, 1)))
	add("FuzzVerify", "v4-duplicate-member", []byte(strings.Replace(string(v4.rs[1]), `"custody": "none",`, `"custody": "none", "custody": "none",`, 1)))
	add("FuzzVerify", "v4-cosignature-removed", []byte(strings.Replace(string(v4.rs[1]), `\n— `+v4.f.signer.KeyID(), `\n— x`, 1)))
	add("FuzzParseReceipt", "v4-good", v4.rs[1])
	add("FuzzParseTlogProof", "v4", decodeReceipt(t, v4.rs[1]).TlogProof)
	add("FuzzDecodeLeafV4", "v4", payloadOf(t, decodeReceipt(t, v4.rs[1])))
	add("FuzzDecodeLeafV4", "v4-pending", payloadOf(t, decodeReceipt(t, v4.rs[4])))
	add("FuzzDecodeLeafV4", "v4-respelled", []byte(strings.ReplaceAll(string(payloadOf(t, decodeReceipt(t, v4.rs[1]))), `,"`, `, "`)))
	add("FuzzSameTokens", "v4-claims", []byte(decodeReceipt(t, v4.rs[1]).Claims), payloadOf(t, decodeReceipt(t, v4.rs[1])))
	add("FuzzSealRoundTrip", "sample", "Example Digital GmbH", "Art. 58 Directive 2006/112/EC", "free_during_beta")
	add("FuzzSealRoundTrip", "not-utf8", "A\xffB", "x", "\xed\xa0\x80")
	add("FuzzSealRoundTrip", "escaped-replacement", `\ufffd`, "\ufffd", `a\\\ufffd`)
	add("FuzzSealRoundTrip", "empty-name-not-utf8-label", "", "0", "\xf3")
	add("FuzzSameTokens", "split-number", []byte(`{"a":[1 2]}`), []byte(`{"a":[12]}`))
	add("FuzzJWSHeader", "member-order", []byte(`{"alg":"Ed25519","typ":"t","kid":"k"}`))
	add("FuzzJWSHeader", "escaped-kid", []byte(`{"alg":"Ed25519","kid":"k\u0041","typ":"t"}`))
	add("FuzzVerify", "v3-lone-surrogate", []byte(strings.Replace(string(v3.rs[1]), `"custody": "none"`, `"custody": "\ud800"`, 1)))
	add("FuzzParseReceipt", "escapes", []byte(`{"spec":"a","id":"b","jws":"\u0063","tlog_proof":"d","claims":{"\u0061":[1,-0.5e3,{"b":null}],"a\u00e9":"\ud83d\ude00"}}`))
	add("FuzzParseReceipt", "duplicate-escaped", []byte(`{"spec":"a","id":"b","jws":"c","tlog_proof":"d","claims":{"a":1,"\u0061":2}}`))
	add("FuzzParseReceipt", "deep", []byte(`{"spec":"a","id":"b","jws":"c","tlog_proof":"d","claims":{"a":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}}`))
	add("FuzzParseTlogProof", "c2sp-example", c2spExample)

	fx := newFixture(t)
	for i, r := range fx.issue(t, sampleClaims(0), sampleClaims(1), sampleClaims(2)) {
		_, _, cp, err := ParseTlogProof(decodeReceipt(t, r).TlogProof)
		if err != nil {
			t.Fatal(err)
		}
		text, _, _ := splitNote(cp)
		add("FuzzOpenCheckpoint", fmt.Sprintf("signed-%d", i), cp)
		add("FuzzParseCheckpoint", fmt.Sprintf("text-%d", i), string(text))
	}
	add("FuzzParseCheckpoint", "extension", "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\nextension\n")

	add("FuzzParseKeySet", "fixture", fx.jwks(t))
	add("FuzzNewVerifier", "fixture", fx.jwks(t), fx.log.vkey)
	add("FuzzNewVerifier", "empty-log-key", fx.jwks(t), "")
	add("FuzzParseKeySet", "private-d", []byte(strings.Replace(string(fx.jwks(t)), `"kty"`, `"d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","kty"`, 1)))
	add("FuzzParseKeySet", "rotated", []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w","kid":"UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4","use":"sig","nbf":1,"exp":2,"revoked":true},{"kid":"b","kty":"OKP","nbf":2}]}`))

	add("FuzzVerifyOpenings", "all", mustJSON(t, v3.openings[1]))
	add("FuzzVerifyOpenings", "another-receipt", mustJSON(t, v3.openings[3]))
	add("FuzzVerifyOpenings", "empty", []byte(`[]`))
	public, openings := conceal(t, sampleClaimsV3B2BClear(0), 9)
	_ = public
	for _, o := range openings[:3] {
		add("FuzzVerifyOpening", strings.ReplaceAll(strings.TrimPrefix(o.Field, "/"), "/", "-"), o.Field, o.Value, o.Salt)
	}
	add("FuzzVerifyOpening", "doc-vector", vectorField, vectorValue, vectorSalt)

	add("FuzzDecodeStrict", "mixed", []byte(`{"a":[1,2.5,-0.1e3,"x\u00e9\ud83d\ude00",true,false,null]}`))
	add("FuzzDecodeStrict", "lone-surrogate", []byte(`"\ud800"`))
	add("FuzzDecodeStrict", "duplicate", []byte(`{"a":1,"a":2}`))
	for _, p := range patternRegexps {
		add("FuzzPatterns", strings.ReplaceAll(p.name, " ", "-"), p.seed[0])
	}
	for i, d := range dateSeeds {
		add("FuzzIsDate", fmt.Sprintf("%02d", i), d)
	}
	cases := encodeCases(t)
	odd := cases[len(cases)-1]
	add("FuzzEncodeClaims", "odd-strings", mustJSON(t, &odd))
	oddV3 := toV3(&odd)
	add("FuzzEncodeClaims", "odd-strings-v3", mustJSON(t, &oddV3))
	add("FuzzStrictBase64", "padding-bits", "AB")
	add("FuzzStrictBase64", "line-break", "AAAA\nAAAA")
	for i, c := range []Claims{asV4(sampleClaimsV3Clear(1)), asV4(sampleClaimsV3B2BClear(2)), asV4(sampleClaimsV3UKClear(3)), asV4(pendingClaimsV3Clear(4))} {
		b, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		add("FuzzConcealSeal", fmt.Sprintf("v4-clear-%d", i), b, byte(i))
	}
	return seeds
}

// corpusFile renders one seed in the "go test fuzz v1" format.
func corpusFile(args []any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		default:
			panic(fmt.Sprintf("seed of type %T", a))
		}
	}
	return b.Bytes()
}

// TestFuzzSeeds checks the committed corpora against fuzzSeeds (rewriting
// them under -update) and that every Fuzz target of the package has one.
func TestFuzzSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	for target, files := range seeds {
		for name, args := range files {
			golden(t, filepath.Join("fuzz", target, name), corpusFile(args))
		}
	}
	targets := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	matches, _ := filepath.Glob("*_test.go")
	for _, m := range matches {
		src, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, sub := range re.FindAllStringSubmatch(string(src), -1) {
			targets[sub[1]] = true
		}
	}
	for target := range targets {
		if len(seeds[target]) == 0 {
			t.Errorf("%s has no committed seeds under testdata/fuzz", target)
		}
	}
	names := make([]string, 0, len(seeds))
	for n := range seeds {
		names = append(names, n)
	}
	slices.Sort(names)
	t.Logf("seed corpora for %d targets: %s", len(names), strings.Join(names, ", "))
}
