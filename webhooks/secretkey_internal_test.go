package webhooks

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/fiscal402/fiscal402/internal/faultfs"
)

// TestSecretKeyPowerCut: the webhook sealing key survives a power cut
// that keeps nothing unsynced right after it was made (internal/faultfs);
// cut at its first write instead, it leaves no key file, from which a new
// key is made, never an empty one, which every later open refused ("not
// 32 base64-encoded bytes": the key was created at its final name, then
// written and synced).
func TestSecretKeyPowerCut(t *testing.T) {
	t.Run("after", func(t *testing.T) {
		ffs := faultfs.Mount(t)
		if _, err := openSecretBox(ffs.Dir, rand.Reader, true); err != nil {
			t.Fatal(err)
		}
		made, err := os.ReadFile(filepath.Join(ffs.Dir, secretKeyFile))
		if err != nil {
			t.Fatal(err)
		}
		ffs.PowerCut(t, 1, 0)
		if _, err := openSecretBox(ffs.Disk, nil, false); err != nil {
			t.Fatalf("the key after the power cut: %v", err)
		}
		if got, _ := os.ReadFile(filepath.Join(ffs.Disk, secretKeyFile)); !bytes.Equal(got, made) {
			t.Fatal("the key on the disk after the cut is not the key made before it")
		}
	})
	t.Run("during", func(t *testing.T) {
		ffs := faultfs.Mount(t)
		ffs.PowerCutAtWrite(t, 1, 1, 0)
		if _, err := openSecretBox(ffs.Dir, rand.Reader, true); err == nil {
			t.Fatal("the key was made although its write failed")
		}
		if _, err := openSecretBox(ffs.Disk, rand.Reader, true); err != nil {
			t.Fatalf("the key after the power cut: %v", err)
		}
	})
}
