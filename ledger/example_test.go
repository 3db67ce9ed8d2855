package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fiscal402/fiscal402/ledger"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// exampleKey is a fixed log key so that the example output is reproducible;
// in production use ledger.LoadOrCreateLogKey.
func exampleKey() (note.Signer, note.Verifier) {
	skey, vkey, err := ledger.GenerateLogKey("fiscal402.example/log", bytes.NewReader(bytes.Repeat([]byte{42}, 32)))
	if err != nil {
		log.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		log.Fatal(err)
	}
	return signer, verifier
}

// Append a settlement once, see the duplicate answered from its claim, and
// prove the leaf's inclusion against the signed checkpoint.
func Example() {
	dir, err := os.MkdirTemp("", "ledger-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	signer, verifier := exampleKey()

	l, err := ledger.Open(filepath.Join(dir, "ledger.db"), ledger.Options{Origin: "fiscal402.example/log", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	settle := func(body string) (ledger.Appended, error) {
		return l.Append(context.Background(), ledger.Append{
			Claims: []ledger.Claim{{Space: "payment", Key: "eip155:8453:0xabc", Fingerprint: []byte(body)}},
			Build: func(index int64) (ledger.Entry, error) {
				return ledger.Entry{
					ID:       "x402-abc",
					Leaf:     []byte(fmt.Sprintf("receipt for x402-abc at %d", index)),
					Docs:     map[string][]byte{"record": []byte(body)},
					Postings: []ledger.Posting{{Index: "by_account", Key: []byte("acct_1\x00x402-abc")}},
				}, nil
			},
		})
	}
	first, err := settle(`{"amount":"1.00"}`)
	if err != nil {
		log.Fatal(err) // errors.Is(err, ledger.ErrUnavailable) → 503 DB_UNAVAILABLE
	}
	fmt.Println("appended:", first.Index, first.ID, first.Existing)
	again, err := settle(`{"amount":"1.00"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("retried: ", again.Index, again.ID, again.Existing)
	_, err = settle(`{"amount":"2.00"}`)
	var conflict *ledger.ClaimConflictError
	fmt.Println("changed body conflicts:", errors.As(err, &conflict))

	cp, err := l.CoveringCheckpoint(first.Index)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", cp.Note)

	// What an auditor does offline with the leaf, the proof and the note.
	e, err := l.Entry("x402-abc")
	if err != nil {
		log.Fatal(err)
	}
	proof, err := l.InclusionProof(e.Index, cp.Size)
	if err != nil {
		log.Fatal(err)
	}
	verified, err := ledger.ParseCheckpoint(cp.Note, verifier)
	if err != nil {
		log.Fatal(err)
	}
	err = tlog.CheckRecord(proof, verified.Size, verified.Root, e.Index, tlog.RecordHash(e.Leaf))
	fmt.Println("inclusion verified:", err == nil)
	// Output:
	// appended: 0 x402-abc false
	// retried:  0 x402-abc true
	// changed body conflicts: true
	// fiscal402.example/log
	// 1
	// /DopnTm4K8fzxpP+Rdj04igR3PTaQHtW9Zq8Lg484sw=
	//
	// — fiscal402.example/log 6zKc748CK4+JnPNc2CDnW1sS075OlQgARiAKZ2XW+zDztYUopB6rUgTjP4/GGzNrZnL1kD53QhC3GXM2YyuzLw605gk=
	// inclusion verified: true
}

// Verify that a newer checkpoint extends an older one: the log only ever
// appended, it never rewrote history.
func ExampleLedger_ConsistencyProof() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	signer, verifier := exampleKey()
	l, err := ledger.Open(filepath.Join(dir, "ledger.db"), ledger.Options{Origin: "fiscal402.example/log", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	for i := range 5 {
		_, err := l.Append(context.Background(), ledger.Append{Build: func(index int64) (ledger.Entry, error) {
			return ledger.Entry{ID: fmt.Sprint("e", i), Leaf: []byte(fmt.Sprint("leaf ", i))}, nil
		}})
		if err != nil {
			log.Fatal(err)
		}
	}
	oldNote, _ := l.CheckpointAt(2)
	newNote, _ := l.Checkpoint()
	older, _ := ledger.ParseCheckpoint(oldNote.Note, verifier)
	newer, _ := ledger.ParseCheckpoint(newNote.Note, verifier)
	proof, _ := l.ConsistencyProof(older.Size, newer.Size)
	err = tlog.CheckTree(proof, newer.Size, newer.Root, older.Size, older.Root)
	fmt.Printf("%d → %d consistent: %v (%d hashes)\n", older.Size, newer.Size, err == nil, len(proof))
	// Output:
	// 2 → 5 consistent: true (2 hashes)
}

// Re-verify a ledger file offline, as an auditor or a nightly job does.
func ExampleCheck() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	signer, verifier := exampleKey()
	path := filepath.Join(dir, "ledger.db")
	l, err := ledger.Open(path, ledger.Options{Origin: "fiscal402.example/log", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	_, err = l.Append(context.Background(), ledger.Append{Build: func(int64) (ledger.Entry, error) {
		return ledger.Entry{ID: "e0", Leaf: []byte("leaf")}, nil
	}})
	if err != nil {
		log.Fatal(err)
	}
	l.Close()

	fmt.Println("check:", ledger.Check(path, verifier))
	_, strangerKey, _ := ledger.GenerateLogKey("fiscal402.example/log", bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	stranger, _ := note.NewVerifier(strangerKey)
	var ce *ledger.CheckError
	err = ledger.Check(path, stranger)
	fmt.Println("with another key:", errors.As(err, &ce), ce.Index)
	// Output:
	// check: <nil>
	// with another key: true 0
}

// A prebuilt entry (hashed and compressed in the caller's goroutine) with a
// Hook that draws a gap-free invoice number, splices it into the prebuilt
// invoice and writes the outbox event keyed by the log index.
func ExampleHook() {
	dir, err := os.MkdirTemp("", "ledger-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	signer, _ := exampleKey()
	l, err := ledger.Open(filepath.Join(dir, "ledger.db"), ledger.Options{Origin: "fiscal402.example/log", Signer: signer})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	for _, id := range []string{"x402-a", "x402-b"} {
		invoice := []byte("<Invoice><ID>INV-000000</ID></Invoice>")
		numberAt := bytes.Index(invoice, []byte("000000"))
		res, err := l.Append(context.Background(), ledger.Append{
			Claims: []ledger.Claim{{Space: "payment", Key: "eip155:8453:" + id}},
			Entry: &ledger.Entry{
				ID:   id,
				Leaf: []byte("receipt of " + id),
				Docs: map[string][]byte{"ubl": invoice},
			},
			Sequences: []string{"invoices/acct_demo"},
			Hook: func(h *ledger.Hook) error {
				n, err := h.Sequence("invoices/acct_demo")
				if err != nil {
					return err
				}
				if err := h.Splice("ubl", numberAt, fmt.Appendf(nil, "%06d", n)); err != nil {
					return err
				}
				return h.Put("events", fmt.Appendf(nil, "%016d", h.Index()), []byte(id))
			},
		})
		if err != nil {
			log.Fatal(err)
		}
		ubl, _ := l.Doc(id, "ubl")
		fmt.Println(res.Index, string(ubl))
	}
	last, _ := l.Sequence("invoices/acct_demo")
	fmt.Println("last invoice number", last)
	// Output:
	// 0 <Invoice><ID>INV-000001</ID></Invoice>
	// 1 <Invoice><ID>INV-000002</ID></Invoice>
	// last invoice number 2
}
