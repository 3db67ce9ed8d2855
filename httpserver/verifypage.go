package httpserver

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"net/http"
)

// verifyPage is GET /verify: one self-contained HTML page (no external
// script, style sheet, font or image) that verifies a receipt in the
// browser, with WebCrypto's Ed25519 and SHA-256, the way receipt.Verify
// does in Go: the JWS signature by a key of the JWKS valid at iat (4.0.0:
// the checkpoint's cosignature by such a key, judged after the inclusion
// proof of the payload), the readable claims against the signed ones, the
// format rules a reader relies on (ids, environment and watermark, amounts
// that add up, no personal field in clear in 3.0.0 and 4.0.0), the
// checkpoint's C2SP signed-note signature by the log key and the RFC 6962
// inclusion proof. It takes a pasted receipt,
// dropped files, or ?id= fetched from this server (/v1/receipts/{id}, or
// /sandbox/v1/receipts/{id} for sandbox ids, with the keys of the matching
// environment), and works when saved to disk and opened offline with a
// receipt file, the key set and the log key. The page is static: the same
// bytes for every request.
//
//go:embed verify.html
var verifyPage []byte

// verifyPageETag and verifyPageCSP are computed once from the page.
var verifyPageETag, verifyPageCSP = verifyPageHeaders(verifyPage)

// verifyPageHeaders returns the page's strong ETag and a Content Security
// Policy that allows exactly its one inline script and style (by their
// SHA-256, CSP Level 3 §8.3), fetches from this origin only, and nothing
// else: whatever is pasted into the page cannot load code from elsewhere.
func verifyPageHeaders(page []byte) (etag, csp string) {
	sum := sha256.Sum256(page)
	etag = `"sha256-` + hex.EncodeToString(sum[:]) + `"`
	hash := func(open, close string) string {
		i := bytes.Index(page, []byte(open))
		j := bytes.Index(page, []byte(close))
		if i < 0 || j < i {
			panic("httpserver: verify.html has no " + open + " element")
		}
		h := sha256.Sum256(page[i+len(open) : j])
		return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
	}
	csp = "default-src 'none'; script-src " + hash("<script>", "</script>") + "; style-src " + hash("<style>", "</style>") +
		"; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return etag, csp
}

// getVerifyPage: GET /verify, the receipt verification page (no key). It
// is a page for people, the one route that ignores query parameters it
// does not read: links to a page pick up parameters on the way (a
// campaign's utm_source, a cache-buster), and a page that answered them
// with a JSON problem would show an auditor nothing. Its script reads ?id=.
func (s *Server) getVerifyPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", verifyPageCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	writeImmutable(w, r, "text/html; charset=utf-8", verifyPageETag, "public, max-age=3600", verifyPage)
}
