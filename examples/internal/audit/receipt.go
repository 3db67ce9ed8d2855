package audit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
)

// checkWords says, for each step of receipt.Verify, what the check makes
// sure of: the failure line reads "step X failed: <this>".
var checkWords = map[string]string{
	receipt.StepParse:               "the document must be a receipt (spec, id, claims, jws or, 4.0.0, payload, tlog_proof)",
	receipt.StepJWKS:                "the key set must be a usable receipt key set",
	receipt.StepLogKey:              "the log's verifier key must be given and well formed",
	receipt.StepJWS:                 "the jws must be a receipt JWS in its one canonical spelling",
	receipt.StepAlg:                 "the JWS must be signed with Ed25519",
	receipt.StepTyp:                 "the JWS must be typed as a receipt",
	receipt.StepKid:                 "the key set must hold the key that signed the receipt (4.0.0: that cosigned its checkpoint)",
	receipt.StepKeyRevoked:          "the signing key must not be revoked",
	receipt.StepSignature:           "the Ed25519 signature must match the signed content",
	receipt.StepPayload:             "the signed payload (4.0.0: the payload) must be receipt claims, spelt as the issuer writes them",
	receipt.StepKeyWindow:           "the key must have been valid when the receipt was issued",
	receipt.StepClaimsMismatch:      "the readable claims must equal the signed ones",
	receipt.StepSpec:                "the signed claims must follow the rules of their format version",
	receipt.StepTlogProof:           "the log proof must be a C2SP tlog-proof",
	receipt.StepCheckpointSignature: "the checkpoint must be signed by the log key",
	receipt.StepCheckpoint:          "the signed note must be a log checkpoint",
	receipt.StepOrigin:              "the checkpoint must be of the log the receipt names",
	receipt.StepIndex:               "the proof must be for the ledger index the receipt names",
	receipt.StepInclusion:           "the inclusion proof must lead from this receipt to the checkpoint's root",
	receipt.StepOpening:             "each opening must open its commitment",
}

// runReceipt verifies one receipt: "audit receipt" and the former
// verify-receipt command.
func runReceipt(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	jwksPath := fs.String("jwks", "", "the receipt key set file (published at GET "+receipt.PathJWKS+"; sandbox: "+receipt.PathSandboxJWKS+")")
	var lk logKeyFlags
	lk.register(fs)
	openingsPath := fs.String("openings", "", "a JSON array of openings of a 4.0.0 or 3.0.0 receipt's hidden fields (GET /v1/receipts/{id}/openings), from the account holder")
	server := fs.String("server", "", "base URL of a fiscal402 service to fetch what is not given as a file (the key set, the log key, a receipt by id); not needed offline")
	asJSON := fs.Bool("json", false, "also print the verified claims as JSON")
	quiet := fs.Bool("q", false, "print only the verdict line")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s RECEIPT.json|rcpt_ID --jwks FILE (--log-key KEY | --log-key-file FILE) [--openings FILE] [--json] [-q]\n", name)
		fmt.Fprintf(stderr, "       %s RECEIPT.json|rcpt_ID --server URL   (fetch the keys, and a receipt given by id)\n\n", name)
		fmt.Fprintln(stderr, "Verifies the receipt offline: its signature by a key of the key set that was valid when it was issued,")
		fmt.Fprintln(stderr, "its claims, and its inclusion in the signed checkpoint of the service's log. Prints what it proves.")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return ExitUsage
	}
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return inputExit(err)
	}
	f := newFetcher(*server)
	doc, fetchedID, err := loadReceipt(pos[0], f)
	if err != nil {
		return usageErr(err)
	}
	// A sandbox receipt verifies against the sandbox's own keys, which the
	// service publishes under /sandbox; the production keys would (and
	// must) refuse it. The readable environment only chooses what to
	// fetch: the verification checks the signed claims.
	jwksServerPath, logKeyServerPath := receipt.PathJWKS, receipt.PathLogKey
	if environmentOf(doc) == receipt.EnvSandbox {
		jwksServerPath, logKeyServerPath = receipt.PathSandboxJWKS, receipt.PathSandboxLogKey
	}
	var jwks []byte
	switch {
	case *jwksPath != "":
		jwks, err = readFile(*jwksPath)
	case f != nil:
		jwks, err = f.get(jwksServerPath)
	default:
		err = fmt.Errorf("give --jwks FILE: the receipt key set, published at GET %s (sandbox receipts: GET %s); or --server URL to fetch it", receipt.PathJWKS, receipt.PathSandboxJWKS)
	}
	if err != nil {
		return usageErr(err)
	}
	logKey, err := lk.value(f, logKeyServerPath)
	if err != nil {
		return usageErr(err)
	}
	var openings []receipt.Opening
	if *openingsPath != "" {
		raw, err := readFile(*openingsPath)
		if err != nil {
			return usageErr(err)
		}
		if openings, err = receipt.ParseOpenings(raw); err != nil {
			return usageErr(fmt.Errorf("%s: %v", *openingsPath, err))
		}
	}

	// An empty log key is left to the receipt package, whose message says
	// what the key is and where it is published. A key set or log key that
	// is not one is the auditor's input, not the receipt, at fault: a
	// usage problem, not a failed check.
	jwksFrom := *jwksPath
	if jwksFrom == "" && f != nil {
		jwksFrom = f.base + jwksServerPath
	}
	v, err := receipt.NewVerifier(jwks, logKey)
	if err != nil {
		return usageErr(keysError(err, jwksFrom, lk))
	}
	claims, err := v.Verify(doc, openings...)
	var ve *receipt.VerifyError
	if errors.As(err, &ve) && ve.Step == receipt.StepJWKS {
		// The key set parsed, but its entry for the key this receipt
		// names is unusable (not its own thumbprint, listed twice): the
		// key set is not one, as when it does not parse.
		return usageErr(keysError(err, jwksFrom, lk))
	}
	if errors.As(err, &ve) {
		if ve.ReceiptID == "" {
			ve.ReceiptID = idOf(doc)
		}
		printNotVerified(stdout, ve)
		return ExitFailed
	}
	if err != nil {
		fmt.Fprintf(stdout, "NOT VERIFIED: %v\n", err)
		return ExitFailed
	}
	if fetchedID != "" && claims.ReceiptID != fetchedID {
		// A valid receipt, but not the one asked for: it proves nothing
		// about receipt fetchedID.
		fmt.Fprintf(stdout, "NOT VERIFIED: receipt %s was asked for, and the server answered with receipt %s\n", fetchedID, claims.ReceiptID)
		fmt.Fprintf(stdout, "  What      %s\n", wrap(fmt.Sprintf("%s is a valid receipt, but of another sale: it says nothing of %s. Fetch %s again (GET %s), from the service that issued it.",
			claims.ReceiptID, fetchedID, fetchedID, f.base+receiptPath(fetchedID)), 88, "            "))
		return ExitFailed
	}
	fmt.Fprintf(stdout, "VERIFIED: %s (%s, %s)\n", claims.ReceiptID, claims.Spec, claims.Environment)
	if *quiet {
		return ExitOK
	}
	printProves(stdout, claims, doc, jwks, logKey, openings)
	if *asJSON {
		out, _ := json.MarshalIndent(claims, "", "  ")
		fmt.Fprintf(stdout, "\nVerified claims (JSON):\n%s\n", out)
	}
	return ExitOK
}

// keysError names the input of a receipt.NewVerifier refusal: the key set
// (jwksFrom: its file or URL) or the log key (its flag or file).
func keysError(err error, jwksFrom string, lk logKeyFlags) error {
	var ve *receipt.VerifyError
	if !errors.As(err, &ve) {
		return err
	}
	what := sentence(ve.Err.Error())
	switch {
	case ve.Step == receipt.StepJWKS:
		return fmt.Errorf("--jwks %s: %s", jwksFrom, what)
	case ve.Step == receipt.StepLogKey && lk.file != "":
		return fmt.Errorf("--log-key-file %s: %s", lk.file, what)
	case ve.Step == receipt.StepLogKey && lk.key != "":
		return fmt.Errorf("--log-key: %s", what)
	case ve.Step == receipt.StepLogKey:
		return fmt.Errorf("give --log-key KEY or --log-key-file FILE: %s", what)
	}
	return err
}

// printNotVerified writes the verdict, the failed check in words, and the
// receipt package's explanation of what was found and what to do.
func printNotVerified(w io.Writer, ve *receipt.VerifyError) {
	fmt.Fprintf(w, "NOT VERIFIED: step %q failed: %s\n", ve.Step, checkWords[ve.Step])
	if ve.ReceiptID != "" {
		fmt.Fprintf(w, "  Receipt   %s\n", ve.ReceiptID)
	}
	if ve.Field != "" {
		fmt.Fprintf(w, "  Field     %s\n", ve.Field)
	}
	fmt.Fprintf(w, "  What      %s\n", wrap(sentence(ve.Err.Error()), 88, "            "))
}

// loadReceipt reads a receipt file, or fetches a receipt id ("rcpt_…")
// that is not a file from the server; fetchedID is that id when it
// fetched it (the receipt verified must then be that receipt).
func loadReceipt(arg string, f *fetcher) (doc []byte, fetchedID string, err error) {
	if strings.HasPrefix(arg, "rcpt_") {
		if _, err := os.Stat(arg); err != nil {
			if f == nil {
				return nil, "", fmt.Errorf("%s: no such file (a receipt id is fetched only with --server URL)", arg)
			}
			doc, err := f.get(receiptPath(arg))
			return doc, arg, err
		}
	}
	doc, err = readFile(arg)
	return doc, "", err
}

// receiptPath is where the service serves the receipt of an id.
func receiptPath(id string) string {
	if strings.HasPrefix(id, sandboxReceiptPrefix) {
		return "/sandbox/v1/receipts/" + id
	}
	return "/v1/receipts/" + id
}

// sandboxReceiptPrefix opens the id of every sandbox receipt (the
// service's sandbox ids are "x402-sandbox-" + 128 random bits).
const sandboxReceiptPrefix = "rcpt_x402-sandbox-"

// environmentOf and idOf read the readable (unverified) claims, only to
// choose keys to fetch and to name the receipt in a failure.
func environmentOf(doc []byte) string {
	var r struct {
		Claims struct {
			Environment string `json:"environment"`
		} `json:"claims"`
	}
	if json.Unmarshal(doc, &r) != nil {
		return ""
	}
	return r.Claims.Environment
}

func idOf(doc []byte) string {
	var r struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(doc, &r) != nil {
		return ""
	}
	return r.ID
}

// proofFacts are what the receipt's JWS header and tlog_proof say beside
// the claims: the signing key and the checkpoint.
type proofFacts struct {
	kid        string
	key        *receipt.Key
	checkpoint *ledger.Checkpoint
}

// facts reads the signing key and the checkpoint of a receipt Verify has
// accepted; what it cannot read stays empty (the verdict stands). The key
// of a 4.0.0 receipt is the one whose cosignature of the checkpoint Verify
// accepted: a key of the key set named on a signature line, not revoked,
// whose window holds iat.
func facts(doc, jwks []byte, logKey string, iat int64) proofFacts {
	var pf proofFacts
	var r receipt.Receipt
	if json.Unmarshal(doc, &r) != nil {
		return pf
	}
	ks, ksErr := receipt.ParseKeySet(jwks)
	if r.Payload != "" && ksErr == nil {
		if _, _, cpNote, err := receipt.ParseTlogProof(r.TlogProof); err == nil {
			cut := bytes.LastIndex(cpNote, []byte("\n\n"))
			text, sigs := cpNote[:cut+1], string(cpNote[cut+2:])
			for _, line := range strings.Split(sigs, "\n") {
				if k, ok := cosignedBy(ks, text, line); ok && !k.Revoked && k.ValidAt(iat) {
					pf.kid = k.Kid
					break
				}
			}
		}
	}
	if h, _, ok := strings.Cut(r.JWS, "."); ok {
		if raw, err := base64.RawURLEncoding.DecodeString(h); err == nil {
			var hdr struct {
				Kid string `json:"kid"`
			}
			if json.Unmarshal(raw, &hdr) == nil {
				pf.kid = hdr.Kid
			}
		}
	}
	if ksErr == nil {
		if k, err := ks.Lookup(pf.kid); err == nil {
			pf.key = &k
		}
	}
	if _, _, cpNote, err := receipt.ParseTlogProof(r.TlogProof); err == nil {
		if v, err := note.NewVerifier(logKey); err == nil {
			if cp, err := ledger.ParseCheckpoint(cpNote, v); err == nil {
				pf.checkpoint = &cp
			}
		}
	}
	return pf
}

// cosignedBy reports the key of ks whose signature of the note text the
// signature line is: the line's name is the key's kid, its key hash is
// that key's (C2SP signed-note names a key by name and hash; a line of
// another key of the same name is not this key's), and the signature
// verifies. A name alone would name a key that signed nothing here.
func cosignedBy(ks receipt.KeySet, text []byte, line string) (receipt.Key, bool) {
	name, b64, _ := strings.Cut(strings.TrimPrefix(line, "— "), " ")
	k, err := ks.Lookup(name)
	if err != nil {
		return receipt.Key{}, false
	}
	pub, err := k.PublicKey()
	if err != nil {
		return receipt.Key{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 4+ed25519.SignatureSize || binary.BigEndian.Uint32(raw) != receipt.NoteKeyHash(name, pub) ||
		!ed25519.Verify(pub, text, raw[4:]) {
		return receipt.Key{}, false
	}
	return k, true
}

// printProves writes what a verified receipt proves, in words.
func printProves(w io.Writer, c *receipt.Claims, doc, jwks []byte, logKey string, openings []receipt.Opening) {
	pf := facts(doc, jwks, logKey, c.IssuedAt)
	row := func(label, text string) {
		fmt.Fprintf(w, "  %-13s %s\n", label, wrap(text, 84, strings.Repeat(" ", 16)))
	}
	fmt.Fprintln(w)
	if c.Environment == receipt.EnvSandbox {
		fmt.Fprintf(w, "  %s\n\n", c.Watermark)
	}
	fmt.Fprintln(w, "What the service signed:")
	seller := c.Seller.LegalName + ", " + country(c.Seller.Country)
	if c.Seller.VATNumber != "" {
		seller += ", VAT number " + c.Seller.VATNumber
	}
	row("Seller", seller)
	row("Buyer", buyer(c))
	// A refund's receipt states the refunded amount, a negative correction
	// in euros at the sale's rate and the credit note, and supersedes the
	// sale's receipt: say so, as the /verify page does, so that it is not
	// read as a sale.
	refund := isRefund(c)
	payLabel, paid, eurLabel, invLabel, invWord, supLabel := "Payment", "paid", "In euros", "Invoice", "invoice ", "Amends"
	if refund {
		payLabel, paid, eurLabel, invLabel, invWord, supLabel = "Refund", "refunded", "Correction", "Credit note", "", "Corrects"
	}
	pay := fmt.Sprintf("%s %s on %s, %s %s", c.Settlement.AmountUSDC, c.Settlement.Asset, network(c.Settlement.Network), paid, instant(c.Settlement.Timestamp))
	row(payLabel, pay+"; "+chain(c.Settlement.Chain))
	row("VAT", tax(c.Classification))
	if c.FX != nil {
		row(eurLabel, money(c.FX.GrossEUR, c.FX.NetEUR, c.FX.VATEUR, "EUR")+exactMoney(c.FX)+
			fmt.Sprintf("; ECB reference rate %s USD per EUR of %s; 1 USDC = %s USD (%s)", c.FX.USDPerEUR.Raw, c.FX.USDPerEUR.RateDate, c.FX.USDCUSDRate, c.FX.USDCUSDSource))
	} else {
		row("In euros", "no conversion: no ECB reference rate was available")
	}
	if t := c.FXTaxCurrency; t != nil {
		row("In "+t.Currency, money(t.Gross, t.Net, t.VAT, t.Currency)+fmt.Sprintf("; %s USD per %s of %s", t.USDPerUnit.Raw, t.Currency, t.USDPerUnit.RateDate))
	}
	if g := c.FXGBP; g != nil {
		row("In GBP", money(g.GrossGBP, g.NetGBP, g.VATGBP, "GBP")+fmt.Sprintf("; %s USD per GBP of %s", g.USDPerGBP.Raw, g.USDPerGBP.RateDate))
	}
	status := reviewWords(c.ReviewStatus)
	if len(c.ReviewReasons) > 0 {
		status += " (" + strings.Join(c.ReviewReasons, ", ") + ")"
	}
	row("Status", status)
	if c.Invoice != nil {
		inv := invWord + c.Invoice.ID
		if c.Invoice.UBLSHA256 != "" {
			inv += ", UBL SHA-256 " + c.Invoice.UBLSHA256
		} else if _, ok := c.Commitments["/invoice/ubl_sha256"]; ok {
			inv += " (the SHA-256 of its UBL document is committed)"
		}
		row(invLabel, inv)
	}
	if c.Fee != nil {
		fee := fmt.Sprintf("%s EUR accrued (%s basis points", c.Fee.AccruedEUR, c.Fee.BPS)
		if c.Fee.Label != "" {
			fee += ", " + strings.ReplaceAll(c.Fee.Label, "_", " ")
		}
		row("Service fee", fee+"), never taken from the payment")
	}
	if c.Supersedes != "" {
		row(supLabel, "receipt "+c.Supersedes)
	}
	issued := unixTime(c.IssuedAt)
	if pf.kid != "" {
		if c.Spec == receipt.SpecV4 {
			issued += ", vouched for by receipt key " + pf.kid + " (its cosignature of the checkpoint)"
		} else {
			issued += " with receipt key " + pf.kid
		}
		if pf.key != nil {
			issued += ", valid from " + unixTime(pf.key.NotBefore)
			if pf.key.Expires != nil {
				issued += " until " + unixTime(*pf.key.Expires)
			}
		}
	}
	row("Issued", issued)
	pos := fmt.Sprintf("index %d of log %s", c.Log.Index, c.Log.Origin)
	if cp := pf.checkpoint; cp != nil {
		pos += fmt.Sprintf(", in the signed checkpoint of %d %s with root %s", cp.Size, plural(cp.Size, "entry", "entries"), cp.Root)
	}
	row("Ledger", pos)
	if receipt.ConcealedSpec(c.Spec) {
		opened := map[string]string{}
		for _, o := range openings {
			opened[o.Field] = o.Value
		}
		var hidden []string
		for _, field := range sortedFields(c.Commitments) {
			if v, ok := opened[field]; ok {
				row("Opened", field+": "+v)
			} else {
				hidden = append(hidden, field)
			}
		}
		if len(hidden) > 0 {
			row("Hidden", strings.Join(hidden, ", ")+": committed, not shown; the account holder can open them (--openings FILE)")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Checks passed:")
	signed := "signed by a key of the key set that was valid when the receipt was issued"
	if c.Spec == receipt.SpecV4 {
		signed = "its checkpoint is cosigned by a key of the key set that was valid at its issue (4.0.0)"
	}
	for _, c := range []string{
		signed,
		"the readable claims equal the signed ones",
		"the claims follow the rules of " + c.Spec,
		"the checkpoint is signed by the log key",
		"the inclusion proof leads from this receipt to the checkpoint's root",
	} {
		fmt.Fprintln(w, "  - "+c)
	}
	if len(openings) > 0 {
		fmt.Fprintf(w, "  - %d %s match the signed commitments\n", len(openings), plural(int64(len(openings)), "opening", "openings"))
	}
	fmt.Fprintln(w, wrap("Not proven by one receipt: that its checkpoint is the log's newest, or that everyone is shown the same log. Keep the checkpoints you see and check that each extends the last (audit consistency OLD NEW).", 96, "  "))
}

func buyer(c *receipt.Claims) string {
	var parts []string
	who := "a consumer"
	if c.Classification != nil && c.Classification.BuyerTreatment == "B2B" {
		who = "a business"
	}
	if c.Buyer.Country != "" {
		who += " in " + country(c.Buyer.Country)
	} else {
		who += ", country not stated"
	}
	parts = append(parts, who)
	if c.Buyer.Name != "" {
		parts = append(parts, "name "+c.Buyer.Name)
	}
	if c.Buyer.VATNumber != "" {
		parts = append(parts, "VAT number "+c.Buyer.VATNumber)
	}
	if r := c.Buyer.Registry; r != nil {
		reg := fmt.Sprintf("%s answered %q", strings.ToUpper(r.Registry), r.Status)
		if r.Number != "" {
			reg += " for " + r.Number
		}
		parts = append(parts, reg+" on "+instant(r.CheckedAt))
	}
	for _, e := range c.Buyer.LocationEvidence {
		parts = append(parts, "evidence "+strings.ReplaceAll(e.Kind, "_", " ")+" points to "+country(e.Country))
	}
	return strings.Join(parts, "; ") + " (as the merchant attested)"
}

func chain(ch receipt.ChainFacts) string {
	if ch.Verification != receipt.ChainVerified {
		return "not verified on chain by the service"
	}
	s := fmt.Sprintf("verified on chain, %d %s", ch.Confirmations, plural(int64(ch.Confirmations), "confirmation", "confirmations"))
	if ch.BlockTime != "" {
		s += ", block time " + instant(ch.BlockTime)
	}
	if ch.Finalized != nil && *ch.Finalized {
		s += ", finalized"
	}
	return s
}

// money is "4.27 EUR, of which 0.71 EUR VAT (net 3.56 EUR)".
func money(gross, net, vat, cur string) string {
	if net == "" {
		return gross + " " + cur + " (no VAT split: the VAT treatment is not determined)"
	}
	return fmt.Sprintf("%s %s, of which %s %s VAT (net %s %s)", gross, cur, vat, cur, net, cur)
}

// exactMoney is "; exactly 0.000865800866 EUR, of which 0.000138234336
// EUR VAT (net 0.00072756653 EUR)" where a cent figure of f reads 0.00 but
// its exact one (receipt 3.0.0 and later) is not zero: a micropayment's
// VAT, which the seller declares (a return adds the exact figures), would
// otherwise read as none. Elsewhere the cent figures are what the
// documents state, and "".
func exactMoney(f *receipt.FX) string {
	hidden := false
	for _, p := range [][2]string{{f.GrossEUR, f.GrossEURExact}, {f.NetEUR, f.NetEURExact}, {f.VATEUR, f.VATEURExact}} {
		cents, err1 := decimal.NewFromString(p[0])
		exact, err2 := decimal.NewFromString(p[1])
		hidden = hidden || err1 == nil && err2 == nil && cents.IsZero() && !exact.IsZero()
	}
	if !hidden {
		return ""
	}
	if f.NetEURExact == "" {
		return "; exactly " + f.GrossEURExact + " EUR"
	}
	return "; exactly " + money(f.GrossEURExact, f.NetEURExact, f.VATEURExact, "EUR")
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedFields(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
