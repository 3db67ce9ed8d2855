package receipt_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/receipt"
)

// exampleClaims are the claims of one settled payment, as the engine would
// fill them (here: a B2C sale to France, EUR figures from the ECB rate).
func exampleClaims(index int64) receipt.Claims {
	return receipt.Claims{
		Spec:         receipt.SpecV1,
		ReceiptID:    "rcpt_x402-5c0ffee1",
		EventID:      "x402-5c0ffee1",
		IssuedAt:     time.Date(2026, 9, 15, 10, 0, 0, 0, time.UTC).Unix(),
		Environment:  receipt.EnvProduction,
		Custody:      receipt.CustodyNone,
		Jurisdiction: receipt.JurisdictionEUVAT,
		Ruleset:      "eu-vat-oss-2026.09",
		ReviewStatus: receipt.ReviewProcessed,
		Settlement: receipt.Settlement{
			Protocol: "x402", Network: "eip155:8453", Asset: "USDC", AmountUSDC: "12.10", Scheme: "exact",
			TxHash:    "0x4a1f0c3b2e5d6f7a8b9c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c",
			Payer:     "0x1111111111111111111111111111111111111111",
			Receiver:  "0x2222222222222222222222222222222222222222",
			Timestamp: "2026-09-15T09:58:12Z",
			Chain:     receipt.ChainFacts{Verification: receipt.ChainNotPerformed},
		},
		Seller: receipt.Party{LegalName: "Example Digital GmbH", VATNumber: "DE123456789", Country: "DE"},
		Buyer:  receipt.Buyer{Country: "FR"},
		FX: &receipt.FX{
			Pair: "USDC/EUR", AmountUSDC: "12.10", USDCUSDRate: "1", USDCUSDSource: "peg",
			USDPerEUR: receipt.FXRate{Raw: "1.1711", RateDate: "2026-09-14", RequestedDate: "2026-09-15",
				Policy: "for-day-or-previous", Source: "ECB:EXR.D.USD.EUR.SP00.A"},
			GrossEUR: "10.33", NetEUR: "8.61", VATEUR: "1.72", Rounding: "half-away-from-zero,scale=2,per-document",
		},
		Log: receipt.LogRef{Origin: "ledger.example/fiscal402", Index: index},
	}
}

// ExampleVerify issues a receipt as the service does (sign, append the JWS
// to a Merkle log, sign a checkpoint, assemble) with fixed keys and clock,
// then verifies it as an auditor does: offline, from the receipt, the JWKS
// and the log's verifier key.
func ExampleVerify() {
	// Service side. Keys are fixed here; a server uses a receipt.Keyring.
	signer, err := receipt.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		log.Fatal(err)
	}
	key, _ := receipt.NewKey(signer.PublicKey(), time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	jwks, _ := json.Marshal(receipt.KeySet{Keys: []receipt.Key{key}})
	logSigningKey, logVerifierKey, _ := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 32)), "ledger.example/fiscal402")
	logSigner, _ := note.NewSigner(logSigningKey)

	jws, err := signer.Sign(exampleClaims(0))
	if err != nil {
		log.Fatal(err)
	}
	// A one-entry RFC 6962 log: its root is the leaf hash, the proof empty.
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	hashes, _ := tlog.StoredHashes(0, []byte(jws), reader)
	stored = append(stored, hashes...)
	root, _ := tlog.TreeHash(1, reader)
	proof, _ := tlog.ProveRecord(1, 0, reader)
	checkpoint, _ := note.Sign(&note.Note{Text: "ledger.example/fiscal402\n1\n" + root.String() + "\n"}, logSigner)
	doc, err := receipt.Assemble(jws, 0, proof, checkpoint)
	if err != nil {
		log.Fatal(err)
	}

	// Auditor side.
	claims, err := receipt.Verify(doc, jwks, logVerifierKey)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claims.ReceiptID, claims.Settlement.AmountUSDC, "USDC =", claims.FX.GrossEUR, "EUR, VAT", claims.FX.VATEUR)
	fmt.Println("log entry", claims.Log.Index, "of", claims.Log.Origin)

	// One changed character of the signature is caught, and named.
	tampered := bytes.Replace(doc, []byte(jws[len(jws)-10:]), []byte("A"+jws[len(jws)-9:]), 1)
	_, err = receipt.Verify(tampered, jwks, logVerifierKey)
	var ve *receipt.VerifyError
	if errors.As(err, &ve) {
		fmt.Println("tampered:", ve.Step)
	}
	// Output:
	// rcpt_x402-5c0ffee1 12.10 USDC = 10.33 EUR, VAT 1.72
	// log entry 0 of ledger.example/fiscal402
	// tampered: signature
}

// ExampleSigner_Sign shows the JWS header: EdDSA for 1.0.0 receipts, the
// RFC 7638 thumbprint as kid.
func ExampleSigner_Sign() {
	signer, _ := receipt.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	jws, err := signer.Sign(exampleClaims(0))
	if err != nil {
		log.Fatal(err)
	}
	header, _ := base64.RawURLEncoding.DecodeString(strings.Split(jws, ".")[0])
	fmt.Println(string(header))

	bad := exampleClaims(0)
	bad.Custody = "held"
	_, err = signer.Sign(bad)
	fmt.Println(err)
	// Output:
	// {"alg":"EdDSA","kid":"UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4","typ":"service.receipt+jws"}
	// receipt: claims /custody: "held" is not "none"
}

// ExampleOpenKeyring creates the production keyring in a data directory and
// rotates its key; the retired key stays in the JWKS with its window.
func ExampleOpenKeyring() {
	dir, _ := os.MkdirTemp("", "fiscal402-keys")
	defer os.RemoveAll(dir)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	ring, err := receipt.OpenKeyring(dir, receipt.EnvProduction, start, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := ring.Rotate(start.AddDate(0, 6, 0), nil); err != nil {
		log.Fatal(err)
	}
	for i, k := range ring.KeySet().Keys {
		exp := "none"
		if k.Expires != nil {
			exp = time.Unix(*k.Expires, 0).UTC().Format(time.DateOnly)
		}
		fmt.Printf("key %d: nbf %s exp %s active %v\n", i,
			time.Unix(k.NotBefore, 0).UTC().Format(time.DateOnly), exp, k.Kid == ring.Signer().KeyID())
	}
	st, _ := os.Stat(dir + "/production.key")
	fmt.Printf("production.key mode %04o\n", st.Mode().Perm())
	// Output:
	// key 0: nbf 2026-01-01 exp 2026-07-01 active false
	// key 1: nbf 2026-07-01 exp none active true
	// production.key mode 0600
}

// ExampleParseTlogProof reads the C2SP tlog-proof carried in a receipt.
func ExampleParseTlogProof() {
	proof := "c2sp.org/tlog-proof@v1\nindex 3\n" +
		"yahHkhQCes3m8V2p+3vM7AuLzIHZFBQEStvUlovbsuA=\nZQuhQmmfYONdnUv274ZvYTp8iDHkkdWuEeUa+8zYhgk=\n\n" +
		"ledger.example/fiscal402\n5\nXXUH+vCOAHX4mP9mueA0ojRKU4yIgvebr7/Z5bHNzoU=\n\n" +
		"— ledger.example/fiscal402 IrLtG5n2ZnvYChH9BS65VKveZdIcz9bwxZWq+SccXeu8OgV46htEAIDoPOQCLuNly3RvwLvNfkJrZC2vvCQhKiF6SwA=\n"
	index, hashes, checkpoint, err := receipt.ParseTlogProof(proof)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("index", index, "with", len(hashes), "proof hashes")
	fmt.Println("checkpoint size", strings.Split(string(checkpoint), "\n")[1])
	fmt.Println(receipt.FormatTlogProof(index, hashes, checkpoint) == proof)

	_, _, _, err = receipt.ParseTlogProof(strings.Replace(proof, "index 3", "index 03", 1))
	fmt.Println(errors.Is(err, receipt.ErrMalformedTlogProof), strconv.Quote(err.Error()))
	// Output:
	// index 3 with 2 proof hashes
	// checkpoint size 5
	// true
	// true "receipt: malformed tlog-proof: index \"03\" is not a decimal without leading zeros"
}

// ExampleConceal issues a 3.0.0 receipt as the engine does: claims built in
// clear, personal fields committed (Conceal), signed before the log position
// is known, appended, assembled. The auditor verifies the public receipt;
// the account holder's openings reveal the buyer to whoever they show them.
func ExampleConceal() {
	signer, _ := receipt.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	key, _ := receipt.NewKey(signer.PublicKey(), time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	jwks, _ := json.Marshal(receipt.KeySet{Keys: []receipt.Key{key}})
	logSigningKey, logVerifierKey, _ := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 32)), "ledger.example/fiscal402")
	logSigner, _ := note.NewSigner(logSigningKey)

	clear := exampleClaims(0)
	clear.Spec = receipt.SpecV3
	clear.EventID = "x402-3f0d9b2c7a41e6580c1d2e3f4a5b6c7d" // a keyed MAC: unguessable
	clear.ReceiptID = "rcpt_" + clear.EventID
	clear.Buyer = receipt.Buyer{Country: "FR", PostalCode: "75011", Name: "Marie Martin"}
	// A server passes nil (crypto/rand); fixed bytes keep this example stable.
	public, openings, err := receipt.Conceal(clear, bytes.NewReader(bytes.Repeat([]byte{42}, 1024)))
	if err != nil {
		log.Fatal(err)
	}
	jws, err := signer.Sign(public) // before the committer: no index in the payload
	if err != nil {
		log.Fatal(err)
	}

	// The committer appends the JWS at the next index (0 here) and signs
	// one checkpoint for the batch.
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	hashes, _ := tlog.StoredHashes(0, []byte(jws), reader)
	stored = append(stored, hashes...)
	root, _ := tlog.TreeHash(1, reader)
	proof, _ := tlog.ProveRecord(1, 0, reader)
	checkpoint, _ := note.Sign(&note.Note{Text: "ledger.example/fiscal402\n1\n" + root.String() + "\n"}, logSigner)
	doc, err := receipt.Assemble(jws, 0, proof, checkpoint)
	if err != nil {
		log.Fatal(err)
	}

	// Auditor: the public receipt has no name, postal code or wallet.
	v, err := receipt.NewVerifier(jwks, logVerifierKey)
	if err != nil {
		log.Fatal(err)
	}
	claims, err := v.Verify(doc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s at index %d, buyer %s, name %q, payer %q\n", claims.Spec, claims.Log.Index, claims.Buyer.Country, claims.Buyer.Name, claims.Settlement.Payer)
	fmt.Println(len(claims.Commitments), "commitments,", len(openings), "openings kept by the account holder")

	// The holder shows the name: the opening is checked against the receipt.
	for _, o := range openings {
		if o.Field == "/buyer/name" {
			opened, err := v.Verify(doc, o)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("opened:", opened.Buyer.Name)
			o.Value = "Marie Curie"
			_, err = v.Verify(doc, o)
			fmt.Println("forged opening:", err.(*receipt.VerifyError).Step)
		}
	}
	// Output:
	// service.receipt/3.0.0 at index 0, buyer FR, name "", payer ""
	// 5 commitments, 5 openings kept by the account holder
	// opened: Marie Martin
	// forged opening: opening
}

// ExampleVerifyOpening checks the test vector of doc.go "# Commitments".
func ExampleVerifyOpening() {
	salt, _ := base64.RawURLEncoding.DecodeString("AAECAwQFBgcICQoLDA0ODw")
	commitment, _ := receipt.Commit("/buyer/name", "Jan Kowalski", salt)
	fmt.Println(commitment)

	claims := &receipt.Claims{ReceiptID: "rcpt_x", Commitments: map[string]string{"/buyer/name": commitment}}
	fmt.Println(receipt.VerifyOpening(claims, receipt.Opening{Field: "/buyer/name", Value: "Jan Kowalski", Salt: "AAECAwQFBgcICQoLDA0ODw"}))
	err := receipt.VerifyOpening(claims, receipt.Opening{Field: "/buyer/name", Value: "Jan Kowalsky", Salt: "AAECAwQFBgcICQoLDA0ODw"})
	fmt.Println(errors.Is(err, receipt.ErrBadOpening))
	// Output:
	// sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA
	// <nil>
	// true
}
