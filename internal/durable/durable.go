package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteFile replaces the file at path with data, mode perm: after a crash
// or a power cut it holds the old content or the new, whole; once
// WriteFile returns nil, the new.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := temp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // gone after the rename
	return Rename(tmp, path)
}

// Create writes data to path, mode perm, unless a file is there: then it
// writes nothing and returns an error that errors.Is os.ErrExist (another
// process created it first: read that one, which is then durable too, its
// directory synced). Durable once Create returns.
func Create(path string, data []byte, perm os.FileMode) error {
	exists := func() error {
		Tidy(path)
		if err := SyncDir(filepath.Dir(path)); err != nil {
			return err
		}
		return &os.PathError{Op: "create", Path: path, Err: os.ErrExist}
	}
	if _, err := os.Lstat(path); err == nil {
		return exists()
	}
	tmp, err := temp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // one name of two after the link
	// A hard link fails rather than replace a file created meanwhile.
	if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		return exists()
	} else if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// ReadOrCreate returns the content of the file at path, tidying what
// crashes left beside it (Tidy). When there is none and fresh is not nil,
// it creates the file with fresh's bytes, mode perm (Create), or, when
// another process created it meanwhile, returns that one's content; with
// fresh nil a missing file is an error wrapping os.ErrNotExist. The way a
// key is loaded at start, or made on first use.
func ReadOrCreate(path string, perm os.FileMode, fresh func() ([]byte, error)) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		Tidy(path)
		return raw, nil
	}
	if !errors.Is(err, os.ErrNotExist) || fresh == nil {
		return nil, err
	}
	data, err := fresh()
	if err != nil {
		return nil, err
	}
	if err := Create(path, data, perm); errors.Is(err, os.ErrExist) {
		return os.ReadFile(path)
	} else if err != nil {
		return nil, err
	}
	return data, nil
}

// Rename renames from to to and fsyncs the directories of both, so that
// the rename survives a power cut. from's data must have been synced (a
// rename orders nothing: see the package documentation).
func Rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(to)); err != nil {
		return err
	}
	if d := filepath.Dir(from); d != filepath.Dir(to) {
		return SyncDir(d)
	}
	return nil
}

// SyncDir fsyncs the directory dir: the names created, renamed or removed
// in it survive a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// stale is how old a temporary file of ours must be for Tidy to remove it
// when it is not a second name of the file itself: a younger one may be
// another process's, not yet linked.
const stale = time.Minute

// Tidy removes what crashes left of WriteFile's and Create's temporary
// files for path: a second name of the file itself (a crash between the
// link and the removal; for a key, a second name of a secret, which
// backups would copy) at any age, any other once a minute old. It is best
// effort and reports nothing; WriteFile, Create and ReadOrCreate run it.
func Tidy(path string) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	target, _ := os.Lstat(path)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(name)
		if err != nil {
			continue
		}
		if target != nil && os.SameFile(fi, target) || time.Since(fi.ModTime()) > stale {
			os.Remove(name)
		}
	}
}

// temp writes data, mode perm, to a new file beside path and fsyncs it;
// it returns the file's name, or removes it and returns an error. It
// first tidies what crashes left of earlier temporary files of path.
func temp(path string, data []byte, perm os.FileMode) (string, error) {
	Tidy(path)
	pattern := "." + filepath.Base(path) + ".tmp-*"
	f, err := os.CreateTemp(filepath.Dir(path), pattern) // mode 0600
	if err != nil {
		return "", err
	}
	if perm != 0o600 {
		err = f.Chmod(perm)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
