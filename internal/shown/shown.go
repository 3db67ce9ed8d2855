// Package shown quotes a value a client sent into the sentence of an
// error detail or a review reason without echoing it whole: a value of at
// most MaxRunes characters is quoted exactly as fmt's %q quotes it; a
// longer one by its first MaxRunes characters, an ellipsis and its length,
// so that a 20,000-character country code answers a problem document of a
// few hundred bytes that still says what was wrong.
package shown

import (
	"strconv"
	"unicode/utf8"
)

// MaxRunes is how many characters of a value a detail shows; our own
// choice, above every code, token, id and key the API defines (an
// Idempotency-Key, the longest, is at most 255 bytes of which the first
// 64 identify it to a reader).
const MaxRunes = 64

// Quote returns v as fmt's %q writes it when v has at most MaxRunes
// characters (runes; an invalid byte counts as one), and otherwise the
// quoted first MaxRunes characters followed by "…" inside the quotes and
// the length in characters: "XXXX…" (20000 characters).
func Quote(v string) string {
	head, n, cut := bound(v)
	if !cut {
		return strconv.Quote(v)
	}
	return strconv.Quote(head+"…") + " (" + strconv.Itoa(n) + " characters)"
}

// Bare is Quote without the quotes: v itself when it has at most MaxRunes
// characters, and otherwise its first MaxRunes characters, "…" and the
// length: for an id in a sentence ("settlement x402-… not found") and a
// problem's field that is a name the client chose (an unknown query
// parameter or member).
func Bare(v string) string {
	head, n, cut := bound(v)
	if !cut {
		return v
	}
	return head + "… (" + strconv.Itoa(n) + " characters)"
}

// bound returns v's first MaxRunes characters, its length in characters,
// and whether it is longer than that.
func bound(v string) (string, int, bool) {
	if len(v) <= MaxRunes {
		return v, len(v), false // at most MaxRunes bytes: at most MaxRunes runes
	}
	i, n := 0, 0
	for i < len(v) && n < MaxRunes {
		_, size := utf8.DecodeRuneInString(v[i:])
		i += size
		n++
	}
	if i == len(v) {
		return v, n, false
	}
	return v[:i], n + utf8.RuneCountInString(v[i:]), true
}
