package shown

import (
	"fmt"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, v := range []string{"", "DE", "eip155:8453", "a\"b\\c\n", "\xff\xfe", strings.Repeat("é", MaxRunes), strings.Repeat("x", MaxRunes)} {
		if got, want := Quote(v), fmt.Sprintf("%q", v); got != want {
			t.Errorf("Quote(%q) = %s, want %s as %%q", v, got, want)
		}
		if Bare(v) != v {
			t.Errorf("Bare(%q) = %q, want it unchanged", v, Bare(v))
		}
	}
	long := strings.Repeat("X", 20000)
	want := `"` + strings.Repeat("X", MaxRunes) + `…" (20000 characters)`
	if got := Quote(long); got != want {
		t.Errorf("Quote(20000 X) = %s, want %s", got, want)
	}
	if got := Bare(long); got != strings.Repeat("X", MaxRunes)+"… (20000 characters)" {
		t.Errorf("Bare(20000 X) = %s", got)
	}
	// 65 two-byte runes: cut on a rune boundary, counted in characters.
	e := strings.Repeat("é", MaxRunes+1)
	if got, want := Quote(e), fmt.Sprintf("%q (%d characters)", strings.Repeat("é", MaxRunes)+"…", MaxRunes+1); got != want {
		t.Errorf("Quote(65 é) = %s, want %s", got, want)
	}
}
