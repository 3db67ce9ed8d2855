package tzgen

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tzif reads one committed zone file (vat/ratedata/tzdata) as a valid input.
func tzif(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(Dir), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func source() Source {
	return Source{TZData: "2025c", From: "test", ZipSHA256: strings.Repeat("a", 64), Zones: []string{"Atlantic/Azores", "Europe/Tallinn"}}
}

func TestGenerate(t *testing.T) {
	files := map[string][]byte{"Atlantic/Azores": tzif(t, "Atlantic/Azores"), "Europe/Tallinn": tzif(t, "Europe/Tallinn")}
	a, err := Generate(source(), files)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(source(), files)
	if !bytes.Equal(a, b) {
		t.Error("output not deterministic")
	}
	for _, want := range []string{`tzdataRelease = "2025c"`, `"Europe/Tallinn", "ratedata/tzdata/Europe/Tallinn", "` + SHA256(files["Europe/Tallinn"]) + `"`, "DO NOT EDIT"} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, a)
		}
	}
	// A zone listed without a file, a file that is not TZif, an extra file.
	if _, err := Generate(source(), map[string][]byte{"Atlantic/Azores": files["Atlantic/Azores"]}); err == nil {
		t.Error("missing zone accepted")
	}
	bad := map[string][]byte{"Atlantic/Azores": files["Atlantic/Azores"], "Europe/Tallinn": []byte("not tzif")}
	if _, err := Generate(source(), bad); err == nil {
		t.Error("invalid TZif accepted")
	}
	extra := map[string][]byte{"Atlantic/Azores": files["Atlantic/Azores"], "Europe/Tallinn": files["Europe/Tallinn"], "Europe/Riga": files["Europe/Tallinn"]}
	if _, err := Generate(source(), extra); err == nil {
		t.Error("unlisted file accepted")
	}
}

func TestParseSource(t *testing.T) {
	good, err := MarshalSource(source())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ParseSource(good); err != nil || s.TZData != "2025c" || len(s.Zones) != 2 {
		t.Fatalf("round trip: %+v %v", s, err)
	}
	for name, mutate := range map[string]func(*Source){
		"release":  func(s *Source) { s.TZData = "latest" },
		"from":     func(s *Source) { s.From = "" },
		"sha256":   func(s *Source) { s.ZipSHA256 = "abc" },
		"no zones": func(s *Source) { s.Zones = nil },
		"unsorted": func(s *Source) { s.Zones = []string{"Europe/Tallinn", "Atlantic/Azores"} },
		"dup":      func(s *Source) { s.Zones = []string{"Europe/Tallinn", "Europe/Tallinn"} },
		"name":     func(s *Source) { s.Zones = []string{"../etc/passwd"} },
	} {
		s := source()
		mutate(&s)
		if _, err := MarshalSource(s); err == nil {
			t.Errorf("%s: accepted %+v", name, s)
		}
	}
	if _, err := ParseSource([]byte(`{"tzdata":"2025c","extra":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

func TestExtractAndRelease(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("Europe/Tallinn")
	w.Write(tzif(t, "Europe/Tallinn"))
	zw.Close()
	got, err := Extract(buf.Bytes(), []string{"Europe/Tallinn"})
	if err != nil || !bytes.Equal(got["Europe/Tallinn"], tzif(t, "Europe/Tallinn")) {
		t.Fatalf("Extract: %v", err)
	}
	if _, err := Extract(buf.Bytes(), []string{"Europe/Riga"}); err == nil {
		t.Error("absent zone extracted")
	}
	if r, err := ReleaseFromUpdateScript([]byte("# x\nCODE=2025c\nDATA=2025c\n")); err != nil || r != "2025c" {
		t.Errorf("release %q %v", r, err)
	}
	if _, err := ReleaseFromUpdateScript([]byte("DATA=latest\n")); err == nil {
		t.Error("bad release accepted")
	}
}
