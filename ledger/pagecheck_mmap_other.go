//go:build windows || plan9 || js || wasip1

package ledger

import "os"

// mapFile is not used here: the page walk reads with ReadAt.
func mapFile(*os.File, int64) ([]byte, func()) { return nil, func() {} }
