// Package tzgen copies the IANA time-zone data package vat needs out of Go's
// own zoneinfo.zip and renders the Go file that names it.
//
// Package vat chooses a supply's rate by its calendar day in the taxing
// territory's time zone. So that the answer never depends on the machine,
// the zones it uses are committed under vat/ratedata/tzdata as the TZif
// files Go ships in $GOROOT/lib/time/zoneinfo.zip (compiled by zic from the
// IANA tz database, https://www.iana.org/time-zones, public domain), embedded
// with go:embed and loaded with time.LoadLocationFromTZData; the system's
// tz database is never read.
//
// # Inputs
//
// vat/ratedata/tzdata/source.json names the tzdata release, where the files
// were copied from, the sha256 of that zoneinfo.zip, and the zones:
//
//	{"tzdata": "2025c", "from": "...", "zipSHA256": "...", "zones": ["Atlantic/Azores", ...]}
//
// Next to it, one file per zone at its IANA path (Europe/Tallinn, ...).
//
// # Output
//
// One Go file in package vat (tzdata_gen.go) with the release, the source,
// and per zone its name, embedded path and sha256, sorted by name. The vat
// tests regenerate it from the committed files and fail when it is stale.
package tzgen

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"io"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Dir is the directory of the committed zone files, relative to package
// vat; SourceName is the metadata file inside it.
const (
	Dir        = "ratedata/tzdata"
	SourceName = "source.json"
)

// Source is the content of source.json.
type Source struct {
	// TZData is the IANA tz database release, e.g. "2025c".
	TZData string `json:"tzdata"`
	// From says where the files were copied from (Go release and path).
	From string `json:"from"`
	// ZipSHA256 is the sha256 of that zoneinfo.zip.
	ZipSHA256 string `json:"zipSHA256"`
	// Zones lists the IANA zone names, sorted, without duplicates.
	Zones []string `json:"zones"`
}

var (
	releaseRe = regexp.MustCompile(`^[0-9]{4}[a-z]$`)
	zoneRe    = regexp.MustCompile(`^[A-Z][A-Za-z_]+(/[A-Z][A-Za-z_+-]+)+$`)
	dataRe    = regexp.MustCompile(`(?m)^DATA=([0-9]{4}[a-z])$`)
)

// ParseSource decodes and checks source.json.
func ParseSource(data []byte) (Source, error) {
	var s Source
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Source{}, fmt.Errorf("tzgen: %s: %w", SourceName, err)
	}
	if err := s.check(); err != nil {
		return Source{}, err
	}
	return s, nil
}

func (s Source) check() error {
	switch {
	case !releaseRe.MatchString(s.TZData):
		return fmt.Errorf("tzgen: %s: tzdata %q is not an IANA release name like 2025c", SourceName, s.TZData)
	case s.From == "":
		return fmt.Errorf("tzgen: %s: from is required", SourceName)
	case len(s.ZipSHA256) != 64:
		return fmt.Errorf("tzgen: %s: zipSHA256 %q is not a sha256", SourceName, s.ZipSHA256)
	case len(s.Zones) == 0:
		return fmt.Errorf("tzgen: %s: no zones", SourceName)
	case !slices.IsSorted(s.Zones) || len(slices.Compact(slices.Clone(s.Zones))) != len(s.Zones):
		return fmt.Errorf("tzgen: %s: zones must be sorted and unique", SourceName)
	}
	for _, z := range s.Zones {
		if !zoneRe.MatchString(z) {
			return fmt.Errorf("tzgen: %s: %q is not an IANA zone name", SourceName, z)
		}
	}
	return nil
}

// MarshalSource renders source.json deterministically.
func MarshalSource(s Source) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReleaseFromUpdateScript reads the tzdata release from Go's
// $GOROOT/lib/time/update.bash ("DATA=2025c"), the script that built the
// zoneinfo.zip beside it.
func ReleaseFromUpdateScript(script []byte) (string, error) {
	m := dataRe.FindSubmatch(script)
	if m == nil {
		return "", errors.New("tzgen: no DATA=<release> line in update.bash")
	}
	return string(m[1]), nil
}

// Extract copies the named zones out of a zoneinfo.zip and checks that each
// loads.
func Extract(zipData []byte, zones []string) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
	if err != nil {
		return nil, fmt.Errorf("tzgen: zoneinfo.zip: %w", err)
	}
	out := make(map[string][]byte, len(zones))
	for _, name := range zones {
		f, err := zr.Open(name)
		if err != nil {
			return nil, fmt.Errorf("tzgen: zone %s: %w", name, err)
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("tzgen: zone %s: %w", name, err)
		}
		if _, err := time.LoadLocationFromTZData(name, data); err != nil {
			return nil, fmt.Errorf("tzgen: zone %s: %w", name, err)
		}
		out[name] = data
	}
	return out, nil
}

// SHA256 is the lower-case hex sha256 of data.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Generate renders tzdata_gen.go from the source metadata and the zone
// files (keyed by zone name). Every listed zone must be present and load,
// and no other file may be given.
func Generate(s Source, files map[string][]byte) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if len(files) != len(s.Zones) {
		return nil, fmt.Errorf("tzgen: %d zone files for %d zones in %s", len(files), len(s.Zones), SourceName)
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/tzgen/cmd/gentz; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "// Source: IANA tz database release %s (https://www.iana.org/time-zones, public\n", s.TZData)
	fmt.Fprintf(&b, "// domain), %s\n", s.From)
	fmt.Fprintf(&b, "// (sha256 %s).\n\n", s.ZipSHA256)
	b.WriteString("package vat\n\n")
	b.WriteString("const (\n")
	fmt.Fprintf(&b, "\ttzdataRelease = %s\n", strconv.Quote(s.TZData))
	fmt.Fprintf(&b, "\ttzdataSource = %s\n", strconv.Quote("IANA tz database "+s.TZData+", "+s.From+" (sha256 "+s.ZipSHA256+")"))
	b.WriteString(")\n\n")
	b.WriteString("// tzdataZones lists the embedded zones: IANA name, file under the embedded\n")
	b.WriteString("// directory, and the sha256 of its bytes.\n")
	b.WriteString("var tzdataZones = [...]struct{ name, file, sha256 string }{\n")
	for _, z := range s.Zones {
		data, ok := files[z]
		if !ok {
			return nil, fmt.Errorf("tzgen: zone %s listed in %s has no file", z, SourceName)
		}
		if _, err := time.LoadLocationFromTZData(z, data); err != nil {
			return nil, fmt.Errorf("tzgen: zone %s: %w", z, err)
		}
		fmt.Fprintf(&b, "\t{%s, %s, %s},\n", strconv.Quote(z), strconv.Quote(Dir+"/"+z), strconv.Quote(SHA256(data)))
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("tzgen: format: %w", err)
	}
	return src, nil
}
