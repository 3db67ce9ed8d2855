package receipt

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// A JSON encoder for claims without reflection. It writes exactly what
// encoding/json writes for these structs (member order, omitempty, sorted
// map keys, string escaping; TestEncodeMatchesMarshal, TestAppendJSONString
// and FuzzEncodeClaims hold it to json.Marshal, and the golden receipts to
// the bytes already signed). json.Marshal of the claims stays the
// definition of the payload (doc.go); this encoder is how Sign writes it,
// and the fast path of decodePayload: a payload is in the form Sign writes
// when it is byte for byte the re-encoding of what it decodes to. Should a
// future encoding/json spell a value differently, Verify loses only speed
// (decodePayload falls back to encoding/json and the comparison as JSON
// values) and TestEncodeMatchesMarshal fails before Sign could drift.

type jsonWriter struct {
	b []byte
	n int // members written in the current object
}

func (w *jsonWriter) key(name string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(name, v string) {
	w.key(name)
	w.b = appendJSONString(w.b, v)
}

func (w *jsonWriter) optStr(name, v string) {
	if v != "" {
		w.str(name, v)
	}
}

func (w *jsonWriter) int(name string, v int64) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jsonWriter) optUint(name string, v uint64) {
	if v != 0 {
		w.key(name)
		w.b = strconv.AppendUint(w.b, v, 10)
	}
}

func (w *jsonWriter) optBool(name string, v *bool) {
	if v != nil {
		w.key(name)
		w.b = strconv.AppendBool(w.b, *v)
	}
}

func (w *jsonWriter) optStrings(name string, v []string) {
	if len(v) == 0 {
		return
	}
	w.key(name)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// object writes {…} with the members body writes.
func (w *jsonWriter) object(body func()) {
	saved := w.n
	w.n = 0
	w.b = append(w.b, '{')
	body()
	w.b = append(w.b, '}')
	w.n = saved
}

func (w *jsonWriter) member(name string, body func()) {
	w.key(name)
	w.object(body)
}

// optMap writes m's members in key order, as encoding/json does, unless
// m is empty.
func (w *jsonWriter) optMap(name string, m map[string]string) {
	var small [16]commitment // a receipt has a dozen commitments
	ms := small[:0]
	for k, v := range m {
		ms = append(ms, commitment{k, v})
	}
	slices.SortFunc(ms, byField)
	w.sortedMembers(name, ms)
}

// sortedMembers writes what optMap writes for the map of the members
// ms, which are sorted by name.
func (w *jsonWriter) sortedMembers(name string, ms []commitment) {
	if len(ms) == 0 {
		return
	}
	w.member(name, func() {
		for _, m := range ms {
			w.key2(m.field)
			w.b = appendJSONString(w.b, m.value)
		}
	})
}

// key2 writes a member name that may need escaping (a map key).
func (w *jsonWriter) key2(name string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendJSONString(w.b, name)
	w.b = append(w.b, ':')
}

// jsonSafe marks the bytes appendJSONString copies as they are: printable
// ASCII but '"', '\\', '<', '>' and '&'.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString writes s as encoding/json does (encodeState.string with
// HTML escaping, its default): printable ASCII other than '"', '\\', '<',
// '>' and '&' as is; '"' and '\\' escaped by a backslash; \b, \f, \n, \r
// and \t by name; other control characters and the HTML characters as
// \u00XX; valid UTF-8 as is except U+2028 and U+2029 (\u2028, \u2029);
// each byte of invalid UTF-8 as \ufffd. TestAppendJSONString and
// FuzzEncodeClaims hold it to json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func (w *jsonWriter) settlement(s *Settlement) {
	w.member("settlement", func() {
		w.str("protocol", s.Protocol)
		w.str("network", s.Network)
		w.str("tx_hash", s.TxHash)
		if s.LogIndex != nil {
			w.int("log_index", *s.LogIndex)
		}
		w.str("asset", s.Asset)
		w.optStr("asset_contract", s.AssetContract)
		w.str("amount_usdc", s.AmountUSDC)
		w.str("payer", s.Payer)
		w.str("receiver", s.Receiver)
		w.str("timestamp", s.Timestamp)
		w.optStr("scheme", s.Scheme)
		w.member("chain", func() {
			ch := &s.Chain
			w.str("verification", ch.Verification)
			w.optUint("block_number", ch.BlockNumber)
			w.optStr("block_hash", ch.BlockHash)
			w.optStr("block_time", ch.BlockTime)
			w.optUint("confirmations", ch.Confirmations)
			w.optBool("finalized", ch.Finalized)
		})
	})
}

func (w *jsonWriter) party(name string, p *Party) {
	w.member(name, func() {
		w.str("legal_name", p.LegalName)
		w.optStr("vat_number", p.VATNumber)
		w.str("country", p.Country)
	})
}

func (w *jsonWriter) classification(k *Classification) {
	if k == nil {
		return
	}
	w.member("classification", func() {
		w.str("status", k.Status)
		w.optStr("regime", k.Regime)
		w.optStr("oss_scheme", k.OSSScheme)
		w.optStr("category", k.Category)
		w.optStr("rate_percent", k.RatePercent)
		w.optStr("taxing_country", k.TaxingCountry)
		w.optStr("vatex", k.VATEX)
		w.optStr("legal_basis", k.LegalBasis)
		w.optStr("invoice_note", k.InvoiceNote)
		w.optStr("buyer_treatment", k.BuyerTreatment)
		w.optStr("rate_table", k.RateTable)
		w.optStr("rate_effective_from", k.RateEffectiveFrom)
		w.optStrings("reasons", k.Reasons)
	})
}

func (w *jsonWriter) fxRate(name string, r *FXRate) {
	w.member(name, func() {
		w.str("raw", r.Raw)
		w.str("rate_date", r.RateDate)
		w.str("requested_date", r.RequestedDate)
		w.str("policy", r.Policy)
		w.str("source", r.Source)
		w.optStr("snapshot", r.Snapshot)
	})
}

func (w *jsonWriter) fx(f *FX) {
	if f == nil {
		return
	}
	w.member("fx", func() {
		w.str("pair", f.Pair)
		w.str("amount_usdc", f.AmountUSDC)
		w.str("usdc_usd_rate", f.USDCUSDRate)
		w.str("usdc_usd_source", f.USDCUSDSource)
		w.fxRate("usd_per_eur", &f.USDPerEUR)
		w.str("gross_eur", f.GrossEUR)
		w.optStr("net_eur", f.NetEUR)
		w.optStr("vat_eur", f.VATEUR)
		w.optStr("gross_eur_exact", f.GrossEURExact)
		w.optStr("net_eur_exact", f.NetEURExact)
		w.optStr("vat_eur_exact", f.VATEURExact)
		w.str("rounding", f.Rounding)
	})
}

func (w *jsonWriter) fxGBP(f *FXGBP) {
	if f == nil {
		return
	}
	w.member("fx_gbp", func() {
		w.str("pair", f.Pair)
		w.str("amount_usdc", f.AmountUSDC)
		w.str("usdc_usd_rate", f.USDCUSDRate)
		w.str("usdc_usd_source", f.USDCUSDSource)
		w.fxRate("usd_per_gbp", &f.USDPerGBP)
		w.str("gross_gbp", f.GrossGBP)
		w.optStr("net_gbp", f.NetGBP)
		w.optStr("vat_gbp", f.VATGBP)
		w.str("rounding", f.Rounding)
	})
}

func (w *jsonWriter) fxTaxCurrency(f *FXTaxCurrency) {
	if f == nil {
		return
	}
	w.member("fx_tax_currency", func() {
		w.str("currency", f.Currency)
		w.str("pair", f.Pair)
		w.str("amount_usdc", f.AmountUSDC)
		w.str("usdc_usd_rate", f.USDCUSDRate)
		w.str("usdc_usd_source", f.USDCUSDSource)
		w.fxRate("usd_per_unit", &f.USDPerUnit)
		w.str("gross", f.Gross)
		w.optStr("net", f.Net)
		w.optStr("vat", f.VAT)
		w.optStr("gross_exact", f.GrossExact)
		w.optStr("net_exact", f.NetExact)
		w.optStr("vat_exact", f.VATExact)
		w.str("rounding", f.Rounding)
	})
}

func (w *jsonWriter) fee(f *Fee) {
	if f == nil {
		return
	}
	w.member("fee", func() {
		w.str("model", f.Model)
		w.str("bps", f.BPS)
		w.str("accrued_eur", f.AccruedEUR)
		w.optStr("label", f.Label)
	})
}

func (w *jsonWriter) head(spec, receiptID, eventID string, iat int64, iss, env, watermark, custody, jurisdiction, ruleset, review string, reasons []string, supersedes string) {
	w.str("spec", spec)
	w.str("receipt_id", receiptID)
	w.str("event_id", eventID)
	w.int("iat", iat)
	w.optStr("iss", iss)
	w.str("environment", env)
	w.optStr("watermark", watermark)
	w.str("custody", custody)
	w.str("jurisdiction", jurisdiction)
	w.str("ruleset", ruleset)
	w.str("review_status", review)
	w.optStrings("review_reasons", reasons)
	w.optStr("supersedes", supersedes)
}

// appendClaims appends what json.Marshal(c) writes.
func appendClaims(b []byte, c *Claims) []byte {
	w := &jsonWriter{b: b}
	w.object(func() {
		w.head(c.Spec, c.ReceiptID, c.EventID, c.IssuedAt, c.Issuer, c.Environment, c.Watermark, c.Custody,
			c.Jurisdiction, c.Ruleset, c.ReviewStatus, c.ReviewReasons, c.Supersedes)
		w.settlement(&c.Settlement)
		w.party("seller", &c.Seller)
		w.member("buyer", func() {
			b := &c.Buyer
			w.optStr("country", b.Country)
			w.optStr("postal_code", b.PostalCode)
			w.optStr("vat_number", b.VATNumber)
			w.optStr("name", b.Name)
			if r := b.Registry; r != nil {
				w.member("registry", func() {
					w.str("registry", r.Registry)
					w.str("status", r.Status)
					w.str("number", r.Number)
					w.optStr("request_identifier", r.RequestIdentifier)
					w.str("checked_at", r.CheckedAt)
				})
			}
			if len(b.LocationEvidence) > 0 {
				w.key("location_evidence")
				w.b = append(w.b, '[')
				for i := range b.LocationEvidence {
					if i > 0 {
						w.b = append(w.b, ',')
					}
					e := &b.LocationEvidence[i]
					w.object(func() {
						w.str("kind", e.Kind)
						w.optStr("country", e.Country)
						w.optStr("value", e.Value)
					})
				}
				w.b = append(w.b, ']')
			}
		})
		w.classification(c.Classification)
		w.fx(c.FX)
		w.fxGBP(c.FXGBP)
		w.fxTaxCurrency(c.FXTaxCurrency)
		if c.Invoice != nil {
			w.member("invoice", func() {
				w.str("id", c.Invoice.ID)
				w.str("ubl_sha256", c.Invoice.UBLSHA256)
			})
		}
		w.fee(c.Fee)
		w.optStr("record_sha256", c.RecordSHA256)
		w.optMap("commitments", c.Commitments)
		w.member("log", func() {
			w.str("origin", c.Log.Origin)
			w.int("index", c.Log.Index)
		})
	})
	return w.b
}

// appendClaimsV3 appends what json.Marshal(c) writes.
func appendClaimsV3(b []byte, c *claimsV3) []byte {
	w := &jsonWriter{b: b}
	w.object(func() {
		w.head(c.Spec, c.ReceiptID, c.EventID, c.IssuedAt, c.Issuer, c.Environment, c.Watermark, c.Custody,
			c.Jurisdiction, c.Ruleset, c.ReviewStatus, c.ReviewReasons, c.Supersedes)
		w.member("settlement", func() {
			s := &c.Settlement
			w.str("protocol", s.Protocol)
			w.str("network", s.Network)
			w.str("asset", s.Asset)
			w.optStr("asset_contract", s.AssetContract)
			w.str("amount_usdc", s.AmountUSDC)
			w.str("timestamp", s.Timestamp)
			w.optStr("scheme", s.Scheme)
			w.member("chain", func() {
				w.str("verification", s.Chain.Verification)
				w.optStr("block_time", s.Chain.BlockTime)
				w.optUint("confirmations", s.Chain.Confirmations)
				w.optBool("finalized", s.Chain.Finalized)
			})
		})
		w.party("seller", &c.Seller)
		w.member("buyer", func() {
			b := &c.Buyer
			w.optStr("country", b.Country)
			if r := b.Registry; r != nil {
				w.member("registry", func() {
					w.str("registry", r.Registry)
					w.str("status", r.Status)
					w.str("checked_at", r.CheckedAt)
				})
			}
			if len(b.LocationEvidence) > 0 {
				w.key("location_evidence")
				w.b = append(w.b, '[')
				for i := range b.LocationEvidence {
					if i > 0 {
						w.b = append(w.b, ',')
					}
					e := &b.LocationEvidence[i]
					w.object(func() {
						w.str("kind", e.Kind)
						w.optStr("country", e.Country)
					})
				}
				w.b = append(w.b, ']')
			}
		})
		w.classification(c.Classification)
		w.fx(c.FX)
		w.fxTaxCurrency(c.FXTaxCurrency)
		if c.Invoice != nil {
			w.member("invoice", func() { w.str("id", c.Invoice.ID) })
		}
		w.fee(c.Fee)
		if c.commitList != nil {
			w.sortedMembers("commitments", c.commitList)
		} else {
			w.optMap("commitments", c.Commitments)
		}
		w.member("log", func() { w.str("origin", c.Log.Origin) })
	})
	return w.b
}
