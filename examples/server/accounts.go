package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
)

// The accounts commands administer the accounts file while the server runs
// or not:
//
//	server accounts list          [-data DIR | -accounts FILE] [-json]
//	server accounts create        -id ID (-legal-name ... -country ... | -seller-json JSON) [-allow-review]
//	server accounts rotate-key    -id ID [-keep-old]
//	server accounts drop-old-keys -id ID
//
// Design: the file stays the one source of truth, and the commands edit it
// (under a lock, validated exactly as the server loads it, replaced whole
// by a rename); the running server re-reads it when it changes or on
// SIGHUP. So the commands work whether or not the server runs, need no
// network and no admin API that could hand out account keys, and a file
// edited by hand or by configuration management is picked up the same way.
// A new key is printed once, on stdout, alone on its line (the rest goes to
// stderr), so that a script can capture it; only its SHA-256 is stored.

const accountsUsage = `usage: server accounts <command> [flags]

commands:
  list           the accounts: id, seller, country, number of keys, webhooks
  create         a new account; prints its key once
  rotate-key     a new key for an account; prints it once (-keep-old keeps the old ones valid)
  drop-old-keys  keep only an account's newest key (the end of a -keep-old rotation)

common flags: -data DIR (default fiscal402-data), -accounts FILE (default <data>/accounts.json)`

func runAccounts(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, accountsUsage)
		return usagef("accounts: a command is required")
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, accountsUsage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("accounts "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var data, file, id string
	fs.StringVar(&data, "data", "fiscal402-data", "data directory")
	fs.StringVar(&file, "accounts", "", "accounts file (default <data>/accounts.json)")
	switch cmd {
	case "list":
		asJSON := fs.Bool("json", false, "print JSON instead of a table")
		if err := parseAccountsFlags(fs, args); err != nil {
			return err
		}
		return listAccounts(accountsPath(data, file), *asJSON, stdout)
	case "create":
		fs.StringVar(&id, "id", "", "the new account's id (1-64 of A-Z a-z 0-9 _ . -)")
		var s fiscal.Seller
		var sellerJSON string
		fs.StringVar(&sellerJSON, "seller-json", "", `the seller as JSON, as in the accounts file ({"legalName":…,"country":…}); replaces the seller flags`)
		fs.StringVar(&s.LegalName, "legal-name", "", "seller: legal name (required)")
		fs.StringVar(&s.Country, "country", "", "seller: ISO 3166-1 alpha-2 country of establishment (required)")
		fs.StringVar(&s.VATNumber, "vat-number", "", "seller: VAT number with its country prefix")
		fs.StringVar(&s.LegalID, "legal-id", "", "seller: company registration number")
		fs.StringVar(&s.Address.Street, "street", "", "seller: street")
		fs.StringVar(&s.Address.City, "city", "", "seller: city")
		fs.StringVar(&s.Address.PostalCode, "postal-code", "", "seller: postal code")
		fs.BoolVar(&s.OverThreshold, "over-threshold", false, "seller: over the EUR 10,000 of Art. 59c VAT Directive")
		fs.StringVar(&s.ItemName, "item-name", "", "seller: the invoice line's item name")
		allowReview := fs.Bool("allow-review", false, "create the account although some of its sales cannot be invoiced (they wait for review)")
		if err := parseAccountsFlags(fs, args); err != nil {
			return err
		}
		if sellerJSON != "" {
			s = fiscal.Seller{}
			if err := jsonUnmarshalStrict([]byte(sellerJSON), &s); err != nil {
				return fmt.Errorf("-seller-json: %w", err)
			}
		}
		// The id first: the invoicing check names the account.
		if id == "" {
			return usagef("-id is required")
		}
		// (The id alone: with a seller that passes, Normalised can refuse
		// only the id.)
		if _, err := (fiscal.Account{ID: id, Seller: fiscal.Seller{LegalName: "-", Country: "IE"}}).Normalised(); err != nil {
			return fmt.Errorf("-id: %w", err)
		}
		if err := checkInvoicing(id, s, *allowReview, stderr); err != nil {
			if sellerJSON == "" {
				return sellerFlagError(err)
			}
			return err
		}
		if err := checkAccountsPath(file, data); err != nil {
			return err
		}
		return createAccount(accountsPath(data, file), id, s, stdout, stderr)
	case "rotate-key":
		fs.StringVar(&id, "id", "", "the account")
		keepOld := fs.Bool("keep-old", false, "keep the account's other keys valid (drop them later with drop-old-keys)")
		if err := parseAccountsFlags(fs, args); err != nil {
			return err
		}
		return rotateKey(accountsPath(data, file), id, *keepOld, stdout, stderr)
	case "drop-old-keys":
		fs.StringVar(&id, "id", "", "the account")
		if err := parseAccountsFlags(fs, args); err != nil {
			return err
		}
		return dropOldKeys(accountsPath(data, file), id, stderr)
	}
	fmt.Fprintln(stderr, accountsUsage)
	return usagef("accounts: unknown command %q", cmd)
}

// sellerFlags names the flag of accounts create that sets each seller
// member (its JSON pointer in a field error).
var sellerFlags = map[string]string{
	"/seller/legalName": "-legal-name", "/seller/country": "-country", "/seller/vatNumber": "-vat-number",
	"/seller/legalId": "-legal-id", "/seller/address/street": "-street", "/seller/address/city": "-city",
	"/seller/address/postalCode": "-postal-code", "/seller/itemName": "-item-name",
}

// sellerFlagError names the flag, not the member, of a seller given by
// flags: the operator typed -country, not /seller/country.
func sellerFlagError(err error) error {
	var fe *wire.FieldError
	if errors.As(err, &fe) {
		if name, ok := sellerFlags[fe.Field]; ok {
			return fmt.Errorf("%s: %s", name, fe.Detail)
		}
	}
	return err
}

func parseAccountsFlags(fs *flag.FlagSet, args []string) error {
	// -data and -accounts follow the server's variables, so that the
	// commands find the file the server reads.
	only := flag.NewFlagSet("", flag.ContinueOnError)
	for _, name := range []string{"data", "accounts"} {
		f := fs.Lookup(name)
		only.Var(f.Value, name, f.Usage)
	}
	if err := applyEnv(only, os.Getenv); err != nil {
		return err
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// checkAccountsPath refuses an accounts file the server or a command would
// make in the wrong place. path is the -accounts given (the flag or
// FISCAL402_ACCOUNTS), "" when not given; data is -data. -accounts names a
// file: an existing directory there (empty or not) is refused, never read
// as <dir>/accounts.json. A given file that is missing is made (the server:
// with the demo account, as on a first start) only in a directory that
// exists, or in -data, which the first start makes: a directory that does
// not exist is a mistyped path, and a demo account made there would be
// served instead of the operator's accounts.
func checkAccountsPath(path, data string) error {
	if path == "" {
		path = filepath.Join(data, "accounts.json")
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("-accounts %s: is a directory; -accounts names the accounts file (such as %s)", path, filepath.Join(path, "accounts.json"))
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("-accounts %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if filepath.Clean(dir) == filepath.Clean(data) {
		return nil // <data>/…: the data directory is made on first start
	}
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("-accounts %s: its directory %s does not exist; nothing was made there (a missing accounts file is created only in an existing directory or in -data: correct the path, or make the directory)", path, dir)
	case err != nil:
		return fmt.Errorf("-accounts %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("-accounts %s: %s is not a directory", path, dir)
	}
	return nil
}

func accountsPath(data, file string) string {
	if file != "" {
		return file
	}
	return filepath.Join(data, "accounts.json")
}

// editAccounts runs fn on the accounts file under the lock and writes the
// result back if fn succeeds, after checking it exactly as the server
// loads it. A missing file starts empty.
func editAccounts(path string, fn func(f *httpserver.AccountsFile) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return editAccountsIn(path, fn)
}

// editExistingAccounts is editAccounts of a file that must exist (a key
// command changes an account of it): a -data or -accounts that names no
// accounts file is refused by its name, and nothing is created.
func editExistingAccounts(path string, fn func(f *httpserver.AccountsFile) error) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s does not exist: give the server's data directory (-data DIR) or its accounts file (-accounts FILE)", path)
	}
	return editAccountsIn(path, func(f *httpserver.AccountsFile) error {
		if err := fn(f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

func editAccountsIn(path string, fn func(f *httpserver.AccountsFile) error) error {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("lock %s.lock: %w", path, err)
	}
	defer unlock()
	f, err := readAccountsFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := fn(&f); err != nil {
		return err
	}
	if _, err := f.Keys(); err != nil {
		return err
	}
	accounts := f.EngineAccounts()
	for _, a := range accounts {
		if _, err := a.Normalised(); err != nil { // its id and its seller, as fiscal.New checks them
			return err
		}
	}
	return httpserver.WriteAccountsFile(path, f)
}

func findAccount(f *httpserver.AccountsFile, id string) (*httpserver.AccountEntry, error) {
	if id == "" {
		return nil, usagef("-id is required")
	}
	for i := range f.Accounts {
		if f.Accounts[i].ID == id {
			return &f.Accounts[i], nil
		}
	}
	return nil, fmt.Errorf("no account %q in the accounts file", id)
}

// engineCanAddAccounts reports whether this build's engine takes new
// accounts while it runs (accountSetter).
func engineCanAddAccounts() bool {
	_, ok := any((*fiscal.Engine)(nil)).(accountSetter)
	return ok
}

// checkInvoicing tells, when an account is created, which of its sales
// could not be invoiced (invoicelaw.Check: per tax country and kind of
// sale, the seller's field and the rule), and refuses the account unless
// allowReview: those sales would wait for review.
func checkInvoicing(id string, s fiscal.Seller, allowReview bool, stderr io.Writer) error {
	if _, err := s.Normalised(); err != nil {
		return err // createAccount says so
	}
	var ie *invoicelaw.Error
	if err := invoicelaw.Check(s.ForInvoiceLaw()); !errors.As(err, &ie) {
		return err
	}
	fmt.Fprintf(stderr, "account %s: these sales cannot be invoiced with the seller as given; each would wait for review (invoice_rules_failed):\n", id)
	for _, p := range ie.Problems {
		fmt.Fprintf(stderr, "  %s\n", p)
	}
	if allowReview {
		fmt.Fprintln(stderr, "created anyway (-allow-review).")
		return nil
	}
	return fmt.Errorf("account %q: the seller cannot be invoiced for every sale (%s); complete the seller (-seller-json), or create it anyway with -allow-review",
		id, strings.Join(ie.Rules(), ", "))
}

func createAccount(path, id string, s fiscal.Seller, stdout, stderr io.Writer) error {
	if id == "" {
		return usagef("-id is required")
	}
	if _, err := (fiscal.Account{ID: id, Seller: s}).Normalised(); err != nil {
		return err
	}
	key, err := httpserver.NewAPIKey(rand.Reader)
	if err != nil {
		return err
	}
	err = editAccounts(path, func(f *httpserver.AccountsFile) error {
		if _, err := findAccount(f, id); err == nil {
			return fmt.Errorf("account %q exists already (rotate its key with: accounts rotate-key -id %s)", id, id)
		}
		f.Accounts = append(f.Accounts, httpserver.AccountEntry{ID: id, KeyHashes: []string{httpserver.HashKey(key)}, Seller: s})
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "account %s created in %s. Its key follows, shown only now: only its SHA-256 is kept.\n", id, path)
	if engineCanAddAccounts() {
		fmt.Fprintln(stderr, "A running server serves it within seconds (it re-reads the file; SIGHUP makes it at once).")
	} else {
		fmt.Fprintln(stderr, "A running server serves it after its next restart: this build's engine cannot add accounts while it runs.")
	}
	fmt.Fprintln(stdout, key)
	return nil
}

func rotateKey(path, id string, keepOld bool, stdout, stderr io.Writer) error {
	if id == "" {
		return usagef("-id is required")
	}
	key, err := httpserver.NewAPIKey(rand.Reader)
	if err != nil {
		return err
	}
	var kept int
	err = editExistingAccounts(path, func(f *httpserver.AccountsFile) error {
		a, err := findAccount(f, id)
		if err != nil {
			return err
		}
		if keepOld {
			a.KeyHashes = append(a.KeyHashes, httpserver.HashKey(key))
			kept = len(a.KeyHashes) - 1
		} else {
			a.KeyHashes = []string{httpserver.HashKey(key)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if keepOld {
		fmt.Fprintf(stderr, "account %s: new key added; its %d other key(s) stay valid until: accounts drop-old-keys -id %s\n", id, kept, id)
	} else {
		fmt.Fprintf(stderr, "account %s: new key; the old ones stop working as soon as the server re-reads the file (seconds; SIGHUP: at once)\n", id)
	}
	fmt.Fprintln(stderr, "The key follows, shown only now:")
	fmt.Fprintln(stdout, key)
	return nil
}

func dropOldKeys(path, id string, stderr io.Writer) error {
	if id == "" {
		return usagef("-id is required")
	}
	var dropped int
	err := editExistingAccounts(path, func(f *httpserver.AccountsFile) error {
		a, err := findAccount(f, id)
		if err != nil {
			return err
		}
		dropped = len(a.KeyHashes) - 1
		a.KeyHashes = a.KeyHashes[len(a.KeyHashes)-1:]
		return nil
	})
	if err == nil {
		fmt.Fprintf(stderr, "account %s: %d old key(s) dropped; the newest stays\n", id, dropped)
	}
	return err
}

// accountSummary is one line of accounts list: never a key or its hash.
type accountSummary struct {
	ID        string `json:"id"`
	LegalName string `json:"legalName"`
	Country   string `json:"country"`
	VATNumber string `json:"vatNumber,omitempty"`
	Keys      int    `json:"keys"`
	Webhooks  int    `json:"webhooks"`
}

func listAccounts(path string, asJSON bool, stdout io.Writer) error {
	f, err := readAccountsFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	list := make([]accountSummary, 0, len(f.Accounts))
	for _, a := range f.Accounts {
		list = append(list, accountSummary{ID: a.ID, LegalName: a.Seller.LegalName, Country: strings.ToUpper(a.Seller.Country), VATNumber: a.Seller.VATNumber, Keys: len(a.KeyHashes), Webhooks: len(a.Webhooks)})
	}
	slices.SortFunc(list, func(a, b accountSummary) int { return strings.Compare(a.ID, b.ID) })
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSELLER\tCOUNTRY\tVAT NUMBER\tKEYS\tWEBHOOKS")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", a.ID, a.LegalName, a.Country, a.VATNumber, a.Keys, a.Webhooks)
	}
	return tw.Flush()
}
