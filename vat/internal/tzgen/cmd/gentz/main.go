// Command gentz writes package vat's time-zone metadata (tzdata_gen.go) from
// the zone files committed under vat/ratedata/tzdata, and refreshes those
// files from Go's own zoneinfo.zip. See package tzgen.
//
// Regenerate (go generate in vat):
//
//	go run ./internal/tzgen/cmd/gentz
//
// Refresh the zone files from the toolchain (then review the diff):
//
//	go run ./internal/tzgen/cmd/gentz -refresh "$(go env GOROOT)/lib/time/zoneinfo.zip" [-zones Europe/Tallinn,...]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/vat/internal/tzgen"
)

func main() {
	dir := flag.String("dir", tzgen.Dir, "directory of the zone files and source.json")
	out := flag.String("out", "tzdata_gen.go", "output Go file")
	refresh := flag.String("refresh", "", "copy the zones out of this zoneinfo.zip first (Go's $GOROOT/lib/time/zoneinfo.zip)")
	zones := flag.String("zones", "", "with -refresh: comma-separated zone list replacing the one in source.json")
	flag.Parse()
	if err := run(*dir, *out, *refresh, *zones); err != nil {
		fmt.Fprintln(os.Stderr, "gentz:", err)
		os.Exit(1)
	}
}

func run(dir, out, refresh, zoneList string) error {
	if refresh != "" {
		if err := refreshFrom(dir, refresh, zoneList); err != nil {
			return err
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, tzgen.SourceName))
	if err != nil {
		return err
	}
	src, err := tzgen.ParseSource(raw)
	if err != nil {
		return err
	}
	files := make(map[string][]byte, len(src.Zones))
	for _, z := range src.Zones {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(z)))
		if err != nil {
			return err
		}
		files[z] = data
	}
	gen, err := tzgen.Generate(src, files)
	if err != nil {
		return err
	}
	return os.WriteFile(out, gen, 0o644)
}

// refreshFrom copies the zones out of zipPath into dir and rewrites
// source.json with the release named by update.bash beside the zip.
func refreshFrom(dir, zipPath, zoneList string) error {
	var zones []string
	if zoneList != "" {
		for _, z := range strings.Split(zoneList, ",") {
			if z = strings.TrimSpace(z); z != "" {
				zones = append(zones, z)
			}
		}
	} else {
		raw, err := os.ReadFile(filepath.Join(dir, tzgen.SourceName))
		if err != nil {
			return fmt.Errorf("no -zones and no readable %s: %w", tzgen.SourceName, err)
		}
		s, err := tzgen.ParseSource(raw)
		if err != nil {
			return err
		}
		zones = s.Zones
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)

	zipData, err := os.ReadFile(zipPath)
	if err != nil {
		return err
	}
	script, err := os.ReadFile(filepath.Join(filepath.Dir(zipPath), "update.bash"))
	if err != nil {
		return fmt.Errorf("the tzdata release is read from update.bash beside the zip: %w", err)
	}
	release, err := tzgen.ReleaseFromUpdateScript(script)
	if err != nil {
		return err
	}
	goVersion := runtime.Version()
	if v, err := os.ReadFile(filepath.Join(filepath.Dir(zipPath), "..", "..", "VERSION")); err == nil {
		goVersion = strings.TrimSpace(string(bytes.SplitN(v, []byte("\n"), 2)[0]))
	}
	files, err := tzgen.Extract(zipData, zones)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, z := range zones {
		p := filepath.Join(dir, filepath.FromSlash(z))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[z], 0o644); err != nil {
			return err
		}
	}
	meta, err := tzgen.MarshalSource(tzgen.Source{
		TZData:    release,
		From:      "copied unchanged from " + goVersion + " $GOROOT/lib/time/zoneinfo.zip",
		ZipSHA256: tzgen.SHA256(zipData),
		Zones:     zones,
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, tzgen.SourceName), meta, 0o644)
}
