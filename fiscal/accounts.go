package fiscal

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Account is a merchant account: the seller facts that EU VAT needs (spec §5.3:
// "the key identifies the merchant account, including the seller establishment")
// and the hashes of the API keys that authenticate it. Only SHA-256 hashes of
// keys are held: keys are 256-bit random strings, so a plain hash is not
// brute-forceable and needs no password-hashing function.
type Account struct {
	ID        string   `json:"id"`
	KeyHashes []string `json:"keyHashes"` // "sha256:<hex>" of each valid X-Service-Key
	Seller    Seller   `json:"seller"`
	// Webhooks are endpoints set by the operator; more can be added through
	// the API. See WebhookEndpointConfig for why their secrets are here.
	Webhooks []WebhookEndpointConfig `json:"webhooks,omitempty"`
}

// Seller is the account's seller profile: who issues the invoices and where it
// is established. Its zero values are documented per field.
type Seller struct {
	LegalName string  `json:"legalName"`           // required: BT-27 on every invoice
	VATNumber string  `json:"vatNumber,omitempty"` // with its country prefix; "" = not VAT-registered in the EU
	LegalID   string  `json:"legalId"`             // company registration number (BT-30), required: invoices to buyers outside the EU carry no VAT id (BR-O-02) and must identify the seller by it (BR-CO-26)
	Country   string  `json:"country"`             // ISO 3166-1 alpha-2 of the establishment (required)
	Address   Address `json:"address"`
	// OtherEstablishments are further EU member states with a fixed
	// establishment; a seller established in more than one state has no
	// Art. 59c threshold.
	OtherEstablishments []string `json:"otherEstablishments,omitempty"`
	// OverThreshold: the seller's cross-border B2C supplies of TBE services
	// plus distance sales exceeded EUR 10,000 this or last calendar year
	// (Art. 59c(1) VAT Directive). false (the zero value) means under it.
	OverThreshold bool `json:"overThreshold,omitempty"`
	// OptedForDestination: the Art. 59c(3) option to tax at destination.
	OptedForDestination bool `json:"optedForDestination,omitempty"`
	// SupplyKind is the default supply kind of the account's sales; ""
	// means "digital_service".
	SupplyKind string `json:"supplyKind,omitempty"`
	// ItemName is the invoice line's item name when a settlement has no
	// description; "" means "Digital service".
	ItemName string `json:"itemName,omitempty"`
}

// Address is a postal address (BG-5 / BG-8 of EN 16931).
type Address struct {
	Street     string `json:"street,omitempty"`
	City       string `json:"city,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	Country    string `json:"country,omitempty"` // defaults to Seller.Country
}

var accountIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Accounts is an immutable set of merchant accounts, safe for concurrent use.
type Accounts struct {
	list []Account
	byID map[string]int
	keys []keyEntry // every key hash, for the constant-time search
}

type keyEntry struct {
	hash    [sha256.Size]byte
	account int
}

// NewAccounts validates the accounts and returns the set. Every account needs
// an id, at least one key hash, a seller legal name and a seller country.
func NewAccounts(list []Account) (*Accounts, error) {
	a := &Accounts{byID: map[string]int{}}
	for i, acc := range list {
		if !accountIDRE.MatchString(acc.ID) {
			return nil, fmt.Errorf("fiscal: account %d: id %q must be 1-64 of [A-Za-z0-9_.-]", i, acc.ID)
		}
		if _, dup := a.byID[acc.ID]; dup {
			return nil, fmt.Errorf("fiscal: account %q appears twice", acc.ID)
		}
		if err := acc.Seller.validate(); err != nil {
			return nil, fmt.Errorf("fiscal: account %q: %w", acc.ID, err)
		}
		if len(acc.KeyHashes) == 0 {
			return nil, fmt.Errorf("fiscal: account %q has no key hash", acc.ID)
		}
		if err := validateWebhookConfigs(acc.Webhooks); err != nil {
			return nil, fmt.Errorf("fiscal: account %q: %w", acc.ID, err)
		}
		for _, kh := range acc.KeyHashes {
			h, err := parseKeyHash(kh)
			if err != nil {
				return nil, fmt.Errorf("fiscal: account %q: %w", acc.ID, err)
			}
			a.keys = append(a.keys, keyEntry{hash: h, account: len(a.list)})
		}
		acc.Seller = acc.Seller.normalised()
		a.byID[acc.ID] = len(a.list)
		a.list = append(a.list, acc)
	}
	return a, nil
}

func (s Seller) validate() error {
	if strings.TrimSpace(s.LegalName) == "" {
		return fmt.Errorf("seller.legalName is required")
	}
	if _, err := parseText("/seller/legalName", s.LegalName); err != nil {
		return fmt.Errorf("seller.legalName: %w", err)
	}
	if _, err := parseCountry("/seller/country", s.Country); err != nil {
		return fmt.Errorf("seller.country: %w", err)
	}
	for _, c := range s.OtherEstablishments {
		if _, err := parseCountry("/seller/otherEstablishments", c); err != nil {
			return fmt.Errorf("seller.otherEstablishments: %w", err)
		}
	}
	if strings.TrimSpace(s.LegalID) == "" {
		return fmt.Errorf("seller.legalId is required: an invoice to a buyer outside the EU may carry no VAT id (EN 16931 BR-O-02) and must then identify the seller by its registration number (BR-CO-26)")
	}
	if s.VATNumber != "" {
		if _, _, err := VATNumberSyntax(s.VATNumber); err != nil {
			return fmt.Errorf("seller.vatNumber: %w", err)
		}
	}
	return nil
}

func (s Seller) normalised() Seller {
	s.Country = strings.ToUpper(s.Country)
	if s.Address.Country == "" {
		s.Address.Country = s.Country
	}
	s.Address.Country = strings.ToUpper(s.Address.Country)
	if s.SupplyKind == "" {
		s.SupplyKind = "digital_service"
	}
	if s.ItemName == "" {
		s.ItemName = "Digital service"
	}
	return s
}

// Authenticate returns the account that key belongs to. It hashes the key
// once and compares the hash with every stored hash in constant time, so the
// time taken does not depend on which account (if any) matches.
func (a *Accounts) Authenticate(key string) (*Account, error) {
	if key == "" {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "the X-Service-Key header is required"}
	}
	h := sha256.Sum256([]byte(key))
	found := -1
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare(h[:], k.hash[:]) == 1 {
			found = k.account
		}
	}
	if found < 0 {
		return nil, &Error{Code: CodeAuthenticationFailed, Detail: "the X-Service-Key is not valid"}
	}
	acc := a.list[found]
	return &acc, nil
}

// Get returns the account with the given id.
func (a *Accounts) Get(id string) (*Account, bool) {
	i, ok := a.byID[id]
	if !ok {
		return nil, false
	}
	acc := a.list[i]
	return &acc, true
}

// IDs returns the account ids in sorted order.
func (a *Accounts) IDs() []string {
	ids := make([]string, 0, len(a.list))
	for _, acc := range a.list {
		ids = append(ids, acc.ID)
	}
	sort.Strings(ids)
	return ids
}

// HashKey returns the "sha256:<hex>" form of an API key, as stored in the
// accounts file.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(h[:])
}

func parseKeyHash(s string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	b, err := hex.DecodeString(hexPart)
	if !ok || err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("key hash %q must be \"sha256:\" followed by 64 hex digits (see fiscal.HashKey)", s)
	}
	copy(h[:], b)
	return h, nil
}

// NewAPIKey returns a new random API key ("sk_" + 43 base64url characters,
// 256 bits) read from rand.
func NewAPIKey(rand io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("fiscal: api key: %w", err)
	}
	return "sk_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// AccountsFile is the on-disk form of the accounts configuration.
type AccountsFile struct {
	Accounts []Account `json:"accounts"`
}

// LoadAccountsFile reads an accounts file (JSON, see AccountsFile; unknown
// fields are errors so that a typo in a seller setting cannot pass unnoticed).
func LoadAccountsFile(path string) (*Accounts, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fiscal: accounts file: %w", err)
	}
	var f AccountsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("fiscal: accounts file %s: %w", path, err)
	}
	return NewAccounts(f.Accounts)
}

// WriteAccountsFile writes f to path atomically (temporary file, fsync,
// rename) with mode 0600: it holds key hashes and seller data.
func WriteAccountsFile(path string, f AccountsFile) error {
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(raw, '\n'), 0o600)
}

// writeFileAtomic writes data to path so that a crash leaves either the old
// or the new file, never a torn one.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
