package receipt

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// c2spExample is the example of c2sp.org/tlog-proof (signatures shortened
// there with "[...]", so it parses but cannot verify).
const c2spExample = `c2sp.org/tlog-proof@v1
extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ
index 73894
gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=
B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=
EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=
RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=
AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=

example.com/fancylog
109482
sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=

— example.com/fancylog hI2DJw[...]1roloI=
`

func TestParseTlogProofC2SPExample(t *testing.T) {
	index, proof, cp, err := ParseTlogProof(c2spExample)
	if err != nil {
		t.Fatal(err)
	}
	if index != 73894 || len(proof) != 5 || !strings.HasPrefix(string(cp), "example.com/fancylog\n109482\n") {
		t.Errorf("index %d, %d hashes, checkpoint %q", index, len(proof), cp)
	}
	if proof[0].String() != "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=" {
		t.Errorf("first hash %s", proof[0])
	}
	// The extra line is unauthenticated and dropped; everything else
	// round-trips byte for byte.
	noExtra := strings.Replace(c2spExample, "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\n", "", 1)
	if got := FormatTlogProof(index, proof, cp); got != noExtra {
		t.Errorf("round trip:\n%s\nwant\n%s", got, noExtra)
	}
}

func TestFormatTlogProof(t *testing.T) {
	cp := []byte("log.example\n1\n" + tlog.RecordHash([]byte("a")).String() + "\n\n— log.example AAAAAAAA\n")
	if got, want := FormatTlogProof(0, tlog.RecordProof{}, cp), "c2sp.org/tlog-proof@v1\nindex 0\n\n"+string(cp); got != want {
		t.Errorf("empty proof:\n%q\nwant\n%q", got, want)
	}
	h1, h2 := tlog.RecordHash([]byte("1")), tlog.RecordHash([]byte("2"))
	want := "c2sp.org/tlog-proof@v1\nindex 12\n" + h1.String() + "\n" + h2.String() + "\n\n" + string(cp)
	if got := FormatTlogProof(12, tlog.RecordProof{h1, h2}, cp); got != want {
		t.Errorf("two hashes:\n%q\nwant\n%q", got, want)
	}
}

func TestParseTlogProofRejects(t *testing.T) {
	h := tlog.RecordHash([]byte("x")).String()
	cp := "log.example\n1\n" + h + "\n\n— log.example AAAAAAAA\n"
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"wrong header", "c2sp.org/tlog-proof@v2\nindex 0\n\n" + cp},
		{"header with CR", "c2sp.org/tlog-proof@v1\r\nindex 0\n\n" + cp},
		{"no index line", "c2sp.org/tlog-proof@v1\n" + h + "\n\n" + cp},
		{"index with leading zero", "c2sp.org/tlog-proof@v1\nindex 01\n\n" + cp},
		{"index negative", "c2sp.org/tlog-proof@v1\nindex -1\n\n" + cp},
		{"index with plus", "c2sp.org/tlog-proof@v1\nindex +1\n\n" + cp},
		{"index overflow", "c2sp.org/tlog-proof@v1\nindex 9223372036854775808\n\n" + cp},
		{"index two spaces", "c2sp.org/tlog-proof@v1\nindex  1\n\n" + cp},
		{"extra after index", "c2sp.org/tlog-proof@v1\nindex 1\nextra AAAA\n\n" + cp},
		{"extra empty", "c2sp.org/tlog-proof@v1\nextra \nindex 1\n\n" + cp},
		{"hash too short", "c2sp.org/tlog-proof@v1\nindex 1\nAAAA\n\n" + cp},
		{"hash unpadded", "c2sp.org/tlog-proof@v1\nindex 1\n" + strings.TrimSuffix(h, "=") + "\n\n" + cp},
		{"hash base64url", "c2sp.org/tlog-proof@v1\nindex 1\n" + "B95lDa8R83lS8n0eG-o0buTxRKQTYFi__1U8anccXmA=" + "\n\n" + cp},
		{"hash with trailing space", "c2sp.org/tlog-proof@v1\nindex 1\n" + h + " \n\n" + cp},
		{"no blank line", "c2sp.org/tlog-proof@v1\nindex 1\n" + h + "\n"},
		{"no checkpoint", "c2sp.org/tlog-proof@v1\nindex 1\n" + h + "\n\n"},
		{"64 hashes", "c2sp.org/tlog-proof@v1\nindex 1\n" + strings.Repeat(h+"\n", 64) + "\n" + cp},
	} {
		if _, _, _, err := ParseTlogProof(tc.in); !errors.Is(err, ErrMalformedTlogProof) {
			t.Errorf("%s: %v, want ErrMalformedTlogProof", tc.name, err)
		}
	}
	if _, p, _, err := ParseTlogProof("c2sp.org/tlog-proof@v1\nindex 1\n" + strings.Repeat(h+"\n", 63) + "\n" + cp); err != nil || len(p) != 63 {
		t.Errorf("63 hashes: %d, %v", len(p), err)
	}
}

func TestParseCheckpoint(t *testing.T) {
	root := tlog.RecordHash([]byte("r")).String()
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"plain", "log.example\n5\n" + root + "\n", true},
		{"extension line", "log.example\n5\n" + root + "\nts 1789466400\n", true},
		{"empty tree", "log.example\n0\n" + root + "\n", true},
		{"empty extension line", "log.example\n5\n" + root + "\n\n", false},
		{"no final newline", "log.example\n5\n" + root, false},
		{"two lines", "log.example\n5\n", false},
		{"empty origin", "\n5\n" + root + "\n", false},
		{"size with leading zero", "log.example\n05\n" + root + "\n", false},
		{"size negative", "log.example\n-5\n" + root + "\n", false},
		{"root short", "log.example\n5\nAAAA\n", false},
	} {
		cp, err := parseCheckpoint(tc.text)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %+v, %v", tc.name, cp, err)
		}
	}
}
