package receipt

import (
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Salted hash commitments to the personal fields of a SpecV3 receipt (doc.go
// "# Commitments"). The public receipt carries, for each personal field, only
//
//	"sha256:" + BASE64URL(SHA-256(lp(CommitmentTag) ‖ lp(field) ‖ lp(salt) ‖ lp(value)))
//
// where lp(x) is the 4-byte big-endian length of x followed by x, field is
// the JSON pointer of the field (RFC 6901, e.g. "/buyer/name"), salt is 16 to
// 64 random bytes and value the field's value as UTF-8 text. Whoever holds
// the Opening {field, value, salt} can show the value to anyone holding the
// receipt; whoever holds only the receipt learns nothing of it: the salt has
// at least 128 bits, so guessing a value (a postal code, a wallet address
// found on chain) means guessing the salt too.

// CommitmentTag separates these hashes from every other SHA-256 use
// (domain separation): no commitment can be read as another hash.
const CommitmentTag = "fiscal402/receipt-commitment/v1"

// Salt sizes in bytes: at least 128 bits (the floor of issue 19's
// unguessability), at most 512.
const (
	MinSaltSize = 16
	MaxSaltSize = 64
)

// commitmentPrefix opens every commitment string; the hash algorithm is
// named so that a later version can add another.
const commitmentPrefix = "sha256:"

// ErrBadOpening is matched (errors.Is) by every *OpeningError.
var ErrBadOpening = errors.New("receipt: the opening does not open a commitment of this receipt")

// OpeningError says why an opening fails. Field is the opening's field.
type OpeningError struct {
	Field   string
	Problem string
}

func (e *OpeningError) Error() string {
	if e.Field == "" {
		return "receipt: opening: " + e.Problem
	}
	return fmt.Sprintf("receipt: opening of %s: %s", e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrBadOpening) true.
func (e *OpeningError) Is(target error) bool { return target == ErrBadOpening }

// Opening reveals one committed field: its JSON pointer, its value as text
// (integers in decimal), and the salt, unpadded base64url. Its JSON form is
// {"field":…,"value":…,"salt":…}; ParseOpenings reads a list of them.
type Opening struct {
	Field string `json:"field"`
	Value string `json:"value"`
	Salt  string `json:"salt"`
}

// Commit returns the commitment to value for the field at JSON pointer
// field under salt. It refuses a salt outside MinSaltSize..MaxSaltSize bytes
// and text that is not UTF-8 (another implementation would hash other bytes).
func Commit(field, value string, salt []byte) (string, error) {
	if len(salt) < MinSaltSize || len(salt) > MaxSaltSize {
		return "", fmt.Errorf("receipt: commitment salt has %d bytes, want %d to %d", len(salt), MinSaltSize, MaxSaltSize)
	}
	if field == "" || !utf8.ValidString(field) || !utf8.ValidString(value) {
		return "", errors.New("receipt: commitment field and value must be non-empty UTF-8 text")
	}
	return commitmentString(commitmentHash(field, value, salt)), nil
}

// commitmentString is commitmentPrefix + BASE64URL(sum), built in one
// allocation.
func commitmentString(sum [sha256.Size]byte) string {
	var enc [43]byte // base64.RawURLEncoding.EncodedLen(sha256.Size)
	base64.RawURLEncoding.Encode(enc[:], sum[:])
	var b strings.Builder
	b.Grow(len(commitmentPrefix) + len(enc))
	b.WriteString(commitmentPrefix)
	b.Write(enc[:])
	return b.String()
}

func commitmentHash(field, value string, salt []byte) [sha256.Size]byte {
	// The hash input of a typical field fits the stack buffer.
	var small [256]byte
	buf := small[:0]
	lp := func(b []byte, s string) []byte {
		return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
	}
	buf = lp(buf, CommitmentTag)
	buf = lp(buf, field)
	buf = lp(buf, string(salt))
	buf = lp(buf, value)
	return sha256.Sum256(buf)
}

// Commitment returns the commitment this opening opens.
func (o Opening) Commitment() (string, error) {
	salt, err := decodeB64URLStrict(o.Salt)
	if err != nil {
		return "", fmt.Errorf("receipt: opening of %s: salt is not unpadded base64url: %v", o.Field, err)
	}
	return Commit(o.Field, o.Value, salt)
}

// isCommitment reports whether s is "sha256:" + the canonical unpadded
// base64url of 32 bytes.
func isCommitment(s string) bool {
	b64, ok := strings.CutPrefix(s, commitmentPrefix)
	// 32 bytes are 43 characters, the last carrying 2 padding bits that a
	// canonical encoding leaves zero (RFC 4648 §3.5).
	if !ok || len(b64) != 43 {
		return false
	}
	for i := 0; i < len(b64); i++ {
		if b64URLValue(b64[i]) < 0 {
			return false
		}
	}
	return b64URLValue(b64[42])&3 == 0
}

// b64URLValue is the value of a base64url character (RFC 4648 §5), -1 for
// any other byte.
func b64URLValue(c byte) int { return int(b64URLValues[c]) }

// b64URLValues maps every byte to its base64url value, -1 when it has none.
var b64URLValues = func() (t [256]int8) {
	for c := range t {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = int8(c - 'A')
		case c >= 'a' && c <= 'z':
			t[c] = int8(c-'a') + 26
		case c >= '0' && c <= '9':
			t[c] = int8(c-'0') + 52
		case c == '-':
			t[c] = 62
		case c == '_':
			t[c] = 63
		default:
			t[c] = -1
		}
	}
	return t
}()

// VerifyOpening checks that o opens the commitment c holds for o.Field: the
// receipt commits that field, and the value and salt hash to the commitment.
// c is the result of Verify (whose signature covers Commitments). The error
// is an *OpeningError (errors.Is ErrBadOpening).
func VerifyOpening(c *Claims, o Opening) error {
	fail := func(format string, args ...any) error {
		return &OpeningError{Field: o.Field, Problem: fmt.Sprintf(format, args...)}
	}
	if c == nil {
		return fail("no claims")
	}
	want, ok := c.Commitments[o.Field]
	if !ok {
		if len(c.Commitments) == 0 {
			return fail("receipt %s commits no fields (only %s and %s receipts do)", c.ReceiptID, SpecV3, SpecV4)
		}
		return fail("receipt %s has no commitment for this field; it commits %s", c.ReceiptID, strings.Join(sortedKeys(c.Commitments), ", "))
	}
	salt, err := decodeB64URLStrict(o.Salt)
	if err != nil {
		return fail("the salt is not unpadded base64url (%v)", err)
	}
	got, err := Commit(o.Field, o.Value, salt)
	if err != nil {
		return fail("%v", strings.TrimPrefix(err.Error(), "receipt: "))
	}
	if got != want {
		return fail("value %q with this salt hashes to %s, but the receipt commits %s: the value or the salt is not the one committed", o.Value, got, want)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// personalField is one field a SpecV3 receipt never signs in clear.
type personalField struct {
	ptr string
	get func(c *Claims) (string, bool)
	set func(c *Claims, v string) error
}

// personalFields lists the committed fields, location evidence values
// aside (they are per item), in the order Conceal returns openings. Why each
// is personal: the buyer's identity and address (name, postal code, VAT
// number, the registry's echo of it and its consultation number), and every
// identifier that finds the transfer on chain and hence the wallets: the
// transaction hash, the log index, the addresses, the block number and hash.
// The document hashes are committed because a plain hash of a document whose
// other contents are known is an oracle for its few unknown fields.
var personalFields = []personalField{
	{"/settlement/tx_hash",
		func(c *Claims) (string, bool) { return c.Settlement.TxHash, c.Settlement.TxHash != "" },
		func(c *Claims, v string) error { c.Settlement.TxHash = v; return nil }},
	{"/settlement/log_index",
		func(c *Claims) (string, bool) {
			if c.Settlement.LogIndex == nil {
				return "", false
			}
			return strconv.FormatInt(*c.Settlement.LogIndex, 10), true
		},
		func(c *Claims, v string) error {
			n, err := parseCanonicalInt(v)
			if err != nil {
				return err
			}
			c.Settlement.LogIndex = &n
			return nil
		}},
	{"/settlement/payer",
		func(c *Claims) (string, bool) { return c.Settlement.Payer, c.Settlement.Payer != "" },
		func(c *Claims, v string) error { c.Settlement.Payer = v; return nil }},
	{"/settlement/receiver",
		func(c *Claims) (string, bool) { return c.Settlement.Receiver, c.Settlement.Receiver != "" },
		func(c *Claims, v string) error { c.Settlement.Receiver = v; return nil }},
	{"/settlement/chain/block_number",
		func(c *Claims) (string, bool) {
			n := c.Settlement.Chain.BlockNumber
			return strconv.FormatUint(n, 10), n != 0
		},
		func(c *Claims, v string) error {
			n, err := parseCanonicalInt(v)
			if err != nil {
				return err
			}
			c.Settlement.Chain.BlockNumber = uint64(n)
			return nil
		}},
	{"/settlement/chain/block_hash",
		func(c *Claims) (string, bool) {
			return c.Settlement.Chain.BlockHash, c.Settlement.Chain.BlockHash != ""
		},
		func(c *Claims, v string) error { c.Settlement.Chain.BlockHash = v; return nil }},
	{"/buyer/postal_code",
		func(c *Claims) (string, bool) { return c.Buyer.PostalCode, c.Buyer.PostalCode != "" },
		func(c *Claims, v string) error { c.Buyer.PostalCode = v; return nil }},
	{"/buyer/vat_number",
		func(c *Claims) (string, bool) { return c.Buyer.VATNumber, c.Buyer.VATNumber != "" },
		func(c *Claims, v string) error { c.Buyer.VATNumber = v; return nil }},
	{"/buyer/name",
		func(c *Claims) (string, bool) { return c.Buyer.Name, c.Buyer.Name != "" },
		func(c *Claims, v string) error { c.Buyer.Name = v; return nil }},
	{"/buyer/registry/number",
		func(c *Claims) (string, bool) {
			if c.Buyer.Registry == nil {
				return "", false
			}
			return c.Buyer.Registry.Number, c.Buyer.Registry.Number != ""
		},
		func(c *Claims, v string) error {
			if c.Buyer.Registry == nil {
				return errors.New("the receipt has no buyer registry section")
			}
			c.Buyer.Registry.Number = v
			return nil
		}},
	{"/buyer/registry/request_identifier",
		func(c *Claims) (string, bool) {
			if c.Buyer.Registry == nil {
				return "", false
			}
			return c.Buyer.Registry.RequestIdentifier, c.Buyer.Registry.RequestIdentifier != ""
		},
		func(c *Claims, v string) error {
			if c.Buyer.Registry == nil {
				return errors.New("the receipt has no buyer registry section")
			}
			c.Buyer.Registry.RequestIdentifier = v
			return nil
		}},
	{"/invoice/ubl_sha256",
		func(c *Claims) (string, bool) {
			if c.Invoice == nil {
				return "", false
			}
			return c.Invoice.UBLSHA256, c.Invoice.UBLSHA256 != ""
		},
		func(c *Claims, v string) error {
			if c.Invoice == nil {
				return errors.New("the receipt has no invoice section")
			}
			c.Invoice.UBLSHA256 = v
			return nil
		}},
	{"/record_sha256",
		func(c *Claims) (string, bool) { return c.RecordSHA256, c.RecordSHA256 != "" },
		func(c *Claims, v string) error { c.RecordSHA256 = v; return nil }},
}

// evidenceField is the JSON pointer of the value of location evidence item i.
func evidenceField(i int) string {
	if i < len(evidenceFields) {
		return evidenceFields[i]
	}
	return "/buyer/location_evidence/" + strconv.Itoa(i) + "/value"
}

// evidenceFields are the pointers of the first items, written once.
var evidenceFields = func() (fs [8]string) {
	for i := range fs {
		fs[i] = "/buyer/location_evidence/" + strconv.Itoa(i) + "/value"
	}
	return fs
}()

// evidenceIndex parses an evidenceField pointer.
func evidenceIndex(field string) (int, bool) {
	rest, ok := strings.CutPrefix(field, "/buyer/location_evidence/")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, "/value")
	if !ok {
		return 0, false
	}
	n, err := parseCanonicalInt(num)
	if err != nil || n > 1<<20 {
		return 0, false
	}
	return int(n), true
}

func findPersonalField(ptr string) *personalField {
	for i := range personalFields {
		if personalFields[i].ptr == ptr {
			return &personalFields[i]
		}
	}
	return nil
}

// parseCanonicalInt reads a non-negative decimal integer without leading
// zeros, the one spelling an opened integer has.
func parseCanonicalInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%q is not a non-negative decimal integer without leading zeros", s)
	}
	return n, nil
}

// Conceal turns SpecV3 claims written in clear (personal fields filled, as
// the engine builds them) into the claims to sign and the openings to keep
// private. Every personal field present gets a fresh salt of MinSaltSize
// bytes from rand (nil means crypto/rand), its commitment in Commitments,
// and is emptied; the openings come back in a fixed field order. The
// clear claims must follow the rules of "# Claims" with the personal fields
// in clear (*ClaimsError otherwise) and carry no Commitments yet.
//
// Reveal(&public, openings...) gives the clear claims back (Log.Index
// aside, which Sign does not sign).
func Conceal(clear Claims, rand io.Reader) (public Claims, openings []Opening, err error) {
	cms, openings, err := commitAll(&clear, rand)
	if err != nil {
		return Claims{}, nil, err
	}
	public = cloneClaims(&clear)
	public.Commitments = make(map[string]string, len(cms))
	for _, c := range cms {
		public.Commitments[c.field] = c.value
	}
	blankPersonal(&public)
	// The public claims are in the format by construction (the clear
	// claims were checked, each field present is committed and blanked);
	// Sign checks them again before it signs.
	return public, openings, nil
}

// commitment is a member of Claims.Commitments.
type commitment struct{ field, value string }

// byField orders commitments by field, as encoding/json orders map keys.
func byField(a, b commitment) int { return strings.Compare(a.field, b.field) }

// commitAll is Conceal without the public claims: it checks the clear
// claims and returns the commitments of their personal fields, sorted by
// field, and the openings.
func commitAll(clear *Claims, rand io.Reader) ([]commitment, []Opening, error) {
	if err := checkClaimsMode(clear, modeClear); err != nil {
		return nil, nil, err
	}
	if rand == nil {
		rand = cryptorand.Reader
	}
	// The fields to commit, in the order of the openings.
	openings := make([]Opening, 0, len(personalFields)+len(clear.Buyer.LocationEvidence))
	for _, f := range personalFields {
		if v, ok := f.get(clear); ok {
			openings = append(openings, Opening{Field: f.ptr, Value: v})
		}
	}
	for i, e := range clear.Buyer.LocationEvidence {
		openings = append(openings, Opening{Field: evidenceField(i), Value: e.Value})
	}
	// One read of every salt, MinSaltSize bytes each in the order of the
	// fields: the same bytes of rand as one read per field.
	salts := make([]byte, len(openings)*MinSaltSize)
	if _, err := io.ReadFull(rand, salts); err != nil {
		return nil, nil, fmt.Errorf("receipt: conceal: read salt: %w", err)
	}
	// The salts' base64url texts, then the commitments: one string, sliced
	// per opening and per commitment.
	enc := base64.RawURLEncoding
	const saltLen = (MinSaltSize*8 + 5) / 6  // EncodedLen(MinSaltSize)
	const cmLen = len(commitmentPrefix) + 43 // 43: EncodedLen(sha256.Size)
	var text strings.Builder
	text.Grow(len(openings) * (saltLen + cmLen))
	var one [saltLen]byte
	for i := range openings {
		enc.Encode(one[:], salts[i*MinSaltSize:(i+1)*MinSaltSize])
		text.Write(one[:])
	}
	var cm [cmLen]byte
	copy(cm[:], commitmentPrefix)
	for i := range openings {
		o := &openings[i]
		if !utf8.ValidString(o.Value) {
			return nil, nil, errors.New("receipt: commitment field and value must be non-empty UTF-8 text")
		}
		sum := commitmentHash(o.Field, o.Value, salts[i*MinSaltSize:(i+1)*MinSaltSize])
		enc.Encode(cm[len(commitmentPrefix):], sum[:])
		text.Write(cm[:])
	}
	all := text.String()
	for i := range openings {
		openings[i].Salt = all[i*saltLen : (i+1)*saltLen]
	}
	cms := make([]commitment, len(openings))
	for i := range openings {
		cms[i] = commitment{openings[i].Field, all[len(openings)*saltLen+i*cmLen : len(openings)*saltLen+(i+1)*cmLen]}
	}
	slices.SortFunc(cms, byField)
	return cms, openings, nil
}

// blankPersonal empties every personal field of c, which must own its
// Buyer.Registry, Buyer.LocationEvidence and Invoice (cloneClaims).
func blankPersonal(c *Claims) {
	s := &c.Settlement
	s.TxHash, s.LogIndex, s.Payer, s.Receiver = "", nil, "", ""
	s.Chain.BlockNumber, s.Chain.BlockHash = 0, ""
	c.Buyer.PostalCode, c.Buyer.VATNumber, c.Buyer.Name = "", "", ""
	if c.Buyer.Registry != nil {
		c.Buyer.Registry.Number, c.Buyer.Registry.RequestIdentifier = "", ""
	}
	for i := range c.Buyer.LocationEvidence {
		c.Buyer.LocationEvidence[i].Value = ""
	}
	if c.Invoice != nil {
		c.Invoice.UBLSHA256 = ""
	}
	c.RecordSHA256 = ""
}

// cloneClaims copies c deeply enough that setting or blanking a personal
// field of the copy never writes through to c. Sections without personal
// fields (classification, fx, fee) stay shared.
func cloneClaims(c *Claims) Claims {
	out := *c
	if c.Settlement.LogIndex != nil {
		n := *c.Settlement.LogIndex
		out.Settlement.LogIndex = &n
	}
	if c.Buyer.Registry != nil {
		r := *c.Buyer.Registry
		out.Buyer.Registry = &r
	}
	out.Buyer.LocationEvidence = slices.Clone(c.Buyer.LocationEvidence)
	if c.Invoice != nil {
		inv := *c.Invoice
		out.Invoice = &inv
	}
	if c.Commitments != nil {
		out.Commitments = make(map[string]string, len(c.Commitments))
		for k, v := range c.Commitments {
			out.Commitments[k] = v
		}
	}
	return out
}

// Reveal checks each opening against c (VerifyOpening) and returns a copy
// of c with the opened values in their places; the commitments stay. The
// error names the first opening that fails (*OpeningError), or one that
// opens a field twice; nil claims (a failed Verify's) are an *OpeningError.
func Reveal(c *Claims, openings ...Opening) (*Claims, error) {
	if c == nil {
		return nil, &OpeningError{Problem: "no claims"}
	}
	out := cloneClaims(c)
	seen := make(map[string]bool, len(openings))
	for _, o := range openings {
		if seen[o.Field] {
			return nil, &OpeningError{Field: o.Field, Problem: "opened twice"}
		}
		seen[o.Field] = true
		if err := VerifyOpening(c, o); err != nil {
			return nil, err
		}
		if err := placeOpened(&out, o); err != nil {
			return nil, &OpeningError{Field: o.Field, Problem: err.Error()}
		}
	}
	return &out, nil
}

func placeOpened(c *Claims, o Opening) error {
	if f := findPersonalField(o.Field); f != nil {
		return f.set(c, o.Value)
	}
	if i, ok := evidenceIndex(o.Field); ok && i < len(c.Buyer.LocationEvidence) {
		c.Buyer.LocationEvidence[i].Value = o.Value
		return nil
	}
	return errors.New("not a field a receipt commits")
}

// ParseOpenings reads a JSON array of openings, as the service hands them
// to the account holder: each an object with exactly the string members
// field, value and salt (unpadded base64url of MinSaltSize..MaxSaltSize
// bytes), no field twice. The parse is strict in the sense of Verify (valid
// UTF-8, no repeated member, nothing after the array).
func ParseOpenings(data []byte) ([]Opening, error) {
	fail := func(format string, args ...any) ([]Opening, error) {
		return nil, &OpeningError{Problem: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxInputSize {
		return fail("larger than %d bytes", MaxInputSize)
	}
	v, err := decodeStrict(data)
	if err != nil {
		return fail("not JSON: %v", err)
	}
	list, ok := v.([]any)
	if !ok {
		return fail("not a JSON array of openings")
	}
	out := make([]Opening, 0, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 3 {
			return fail("item %d is not an object with exactly field, value and salt", i)
		}
		var o Opening
		for _, f := range []struct {
			name string
			dst  *string
		}{{"field", &o.Field}, {"value", &o.Value}, {"salt", &o.Salt}} {
			s, ok := m[f.name].(string)
			if !ok {
				return fail("item %d: %s missing or not a string", i, f.name)
			}
			*f.dst = s
		}
		if o.Field == "" {
			return fail("item %d: empty field", i)
		}
		if seen[o.Field] {
			return fail("item %d opens %s a second time", i, o.Field)
		}
		seen[o.Field] = true
		salt, err := decodeB64URLStrict(o.Salt)
		if err != nil || len(salt) < MinSaltSize || len(salt) > MaxSaltSize {
			return fail("item %d (%s): salt is not unpadded base64url of %d to %d bytes", i, o.Field, MinSaltSize, MaxSaltSize)
		}
		out = append(out, o)
	}
	return out, nil
}
