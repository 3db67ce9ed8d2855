package fiscal

import (
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
)

// RotateReceiptKey retires the active receipt signing key of the data
// directory and makes a new one active: the operator's rotation step. Run it
// while no engine has the directory open (stop the service, rotate, start
// it). The retired key stays in the JWKS with its validity window, so every
// receipt it signed still verifies; its private half is deleted. rand nil
// means crypto/rand. It returns the key ids before and after.
func RotateReceiptKey(dataDir string, now time.Time, rnd io.Reader) (retired, active string, err error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	k, err := receipt.OpenKeyring(filepath.Join(dataDir, "keys"), "production", now, rnd)
	if err != nil {
		return "", "", fmt.Errorf("fiscal: receipt keys: %w", err)
	}
	retired = k.Signer().KeyID()
	if err := k.Rotate(now, rnd); err != nil {
		return "", "", fmt.Errorf("fiscal: rotate receipt key: %w", err)
	}
	return retired, k.Signer().KeyID(), nil
}
