// Package durable writes files so that a crash or a power cut leaves each
// one whole, old or new, and never loses one whose write returned: one
// job, in one place, for every file fiscal402 keeps beside its ledger (the
// keys and the webhook sealing key, the receipt key set, the accounts
// file, the ledger file's creation, a backup's name).
//
// A file is written under a temporary name in its own directory, created
// with its final mode (a private key is never readable by others, not
// even briefly), fsynced, then renamed or hard-linked to its name, and
// the directory is fsynced: without the first sync a power cut can leave
// the name over an empty file (the data still in the page cache when the
// rename reached the disk); without the second the name itself can be
// lost. The power-cut tests (internal/faultfs) found the first failure in
// three of the files this package now writes (the record-id, operator and
// webhook sealing keys, each of which then stopped the server from
// starting), and this package's tests repeat them. The second rests on
// reasoning: faultfs counts a directory operation as durable at once, so
// no test here fails without the directory syncs.
//
// A crash between the link (or rename) and the removal of the temporary
// name leaves that name behind, for a key a second name of a secret that
// backups would copy: Tidy removes it (WriteFile and Create run it, and a
// caller that loads an existing file runs it), and any other temporary
// name of the file once a minute old.
//
// The package imports nothing of fiscal402's, so the leaf packages may use
// it (ARCHITECTURE.md, the ground floor).
package durable
