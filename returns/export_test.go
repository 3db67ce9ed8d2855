package returns

import (
	"encoding/json"

	"github.com/fiscal402/fiscal402/fiscal"
)

// RevisionBefore is revisionBefore of a stored record document, for the
// external tests.
func RevisionBefore(b *fiscal.Books, raw []byte, size int64) ([]byte, error) {
	var rc ossRec
	if err := json.Unmarshal(raw, &rc); err != nil {
		return nil, err
	}
	return revisionBefore(b, &rc, size)
}
