package receipt

// A decoder for signed payloads in the exact form Sign writes, without
// reflection. It is the first try of decodePayload, which then re-encodes
// the result with encoding/json and requires the payload's exact bytes: so
// this decoder cannot make Verify accept anything it would not accept
// otherwise. On anything it does not expect (an unknown member, null, a
// number where a string belongs) it gives up, and decodePayload falls back
// to encoding/json and the strict comparison.

type fastDecoder struct {
	jsonParser
	// text is data as one string: a string value without escapes is a
	// substring of it, so decoding allocates once for all of them.
	text string
}

func newFastDecoder(payload []byte) *fastDecoder {
	return &fastDecoder{jsonParser: jsonParser{data: payload}, text: string(payload)}
}

// member iterates over the members of an object, calling value with each
// name; value must consume the member's value and report success.
func (d *fastDecoder) object(value func(name []byte) bool) bool {
	d.space()
	if d.pos == len(d.data) || d.data[d.pos] != '{' {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return true
	}
	for {
		d.space()
		name, ok := d.rawName()
		if !ok {
			return false
		}
		d.space()
		if d.pos == len(d.data) || d.data[d.pos] != ':' {
			return false
		}
		d.pos++
		d.space()
		if !value(name) {
			return false
		}
		d.space()
		if d.pos == len(d.data) {
			return false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return true
		default:
			return false
		}
	}
}

// rawName reads a member name without escapes (every name of the format
// is plain ASCII). Callers switch on string(name), which does not allocate.
func (d *fastDecoder) rawName() ([]byte, bool) {
	if d.pos == len(d.data) || d.data[d.pos] != '"' {
		return nil, false
	}
	start := d.pos + 1
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return d.data[start:i], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

func (d *fastDecoder) str(dst *string) bool {
	if d.pos == len(d.data) || d.data[d.pos] != '"' {
		return false
	}
	if end, ok := plainString(d.data[d.pos+1:]); ok {
		*dst = d.text[d.pos+1 : d.pos+1+end]
		d.pos += end + 2
		return true
	}
	s, err := d.jsonParser.str()
	if err != nil {
		return false
	}
	*dst = s
	return true
}

func (d *fastDecoder) uint(dst *uint64) bool {
	start := d.pos
	var n uint64
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		if n > (1<<63-1)/10 {
			return false
		}
		n = n*10 + uint64(d.data[d.pos]-'0')
		d.pos++
	}
	if d.pos == start || n > 1<<63-1 {
		return false
	}
	*dst = n
	return true
}

func (d *fastDecoder) int(dst *int64) bool {
	neg := d.pos < len(d.data) && d.data[d.pos] == '-'
	if neg {
		d.pos++
	}
	var u uint64
	if !d.uint(&u) {
		return false
	}
	*dst = int64(u)
	if neg {
		*dst = -*dst
	}
	return true
}

func (d *fastDecoder) bool(dst *bool) bool {
	switch {
	case len(d.data)-d.pos >= 4 && string(d.data[d.pos:d.pos+4]) == "true":
		*dst, d.pos = true, d.pos+4
	case len(d.data)-d.pos >= 5 && string(d.data[d.pos:d.pos+5]) == "false":
		*dst, d.pos = false, d.pos+5
	default:
		return false
	}
	return true
}

func (d *fastDecoder) strings(dst *[]string) bool {
	if d.pos == len(d.data) || d.data[d.pos] != '[' {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		*dst = []string{}
		return true
	}
	var out []string
	for {
		d.space()
		var s string
		if !d.str(&s) {
			return false
		}
		out = append(out, s)
		d.space()
		if d.pos == len(d.data) {
			return false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			*dst = out
			return true
		default:
			return false
		}
	}
}

func (d *fastDecoder) stringMap(dst *map[string]string) bool {
	m := make(map[string]string, 16) // a receipt has a dozen commitments
	ok := d.object(func(name []byte) bool {
		var v string
		if !d.str(&v) {
			return false
		}
		// name is data[start:end] (rawName): the same bytes of text.
		start := cap(d.data) - cap(name)
		m[d.text[start:start+len(name)]] = v
		return true
	})
	*dst = m
	return ok
}

// done reports whether only white space is left.
func (d *fastDecoder) done() bool {
	d.space()
	return d.pos == len(d.data)
}

// fastClaims decodes a SpecV1 or SpecV2 payload.
func fastClaims(payload []byte, c *Claims) bool {
	d := newFastDecoder(payload)
	return d.claims(c) && d.done()
}

// fastClaimsV3 decodes a SpecV3 payload.
func fastClaimsV3(payload []byte, w *claimsV3) bool {
	d := newFastDecoder(payload)
	return d.claimsV3(w) && d.done()
}

func (d *fastDecoder) claims(c *Claims) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "spec":
			return d.str(&c.Spec)
		case "receipt_id":
			return d.str(&c.ReceiptID)
		case "event_id":
			return d.str(&c.EventID)
		case "iat":
			return d.int(&c.IssuedAt)
		case "iss":
			return d.str(&c.Issuer)
		case "environment":
			return d.str(&c.Environment)
		case "watermark":
			return d.str(&c.Watermark)
		case "custody":
			return d.str(&c.Custody)
		case "jurisdiction":
			return d.str(&c.Jurisdiction)
		case "ruleset":
			return d.str(&c.Ruleset)
		case "review_status":
			return d.str(&c.ReviewStatus)
		case "review_reasons":
			return d.strings(&c.ReviewReasons)
		case "supersedes":
			return d.str(&c.Supersedes)
		case "settlement":
			return d.settlement(&c.Settlement)
		case "seller":
			return d.party(&c.Seller)
		case "buyer":
			return d.buyer(&c.Buyer)
		case "classification":
			c.Classification = &Classification{}
			return d.classification(c.Classification)
		case "fx":
			c.FX = &FX{}
			return d.fx(c.FX)
		case "fx_gbp":
			c.FXGBP = &FXGBP{}
			return d.fxGBP(c.FXGBP)
		case "fx_tax_currency":
			c.FXTaxCurrency = &FXTaxCurrency{}
			return d.fxTaxCurrency(c.FXTaxCurrency)
		case "invoice":
			c.Invoice = &Invoice{}
			return d.object(func(name []byte) bool {
				switch string(name) {
				case "id":
					return d.str(&c.Invoice.ID)
				case "ubl_sha256":
					return d.str(&c.Invoice.UBLSHA256)
				}
				return false
			})
		case "fee":
			c.Fee = &Fee{}
			return d.fee(c.Fee)
		case "record_sha256":
			return d.str(&c.RecordSHA256)
		case "commitments":
			return d.stringMap(&c.Commitments)
		case "log":
			return d.object(func(name []byte) bool {
				switch string(name) {
				case "origin":
					return d.str(&c.Log.Origin)
				case "index":
					return d.int(&c.Log.Index)
				}
				return false
			})
		}
		return false
	})
}

func (d *fastDecoder) settlement(s *Settlement) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "protocol":
			return d.str(&s.Protocol)
		case "network":
			return d.str(&s.Network)
		case "tx_hash":
			return d.str(&s.TxHash)
		case "log_index":
			s.LogIndex = new(int64)
			return d.int(s.LogIndex)
		case "asset":
			return d.str(&s.Asset)
		case "asset_contract":
			return d.str(&s.AssetContract)
		case "amount_usdc":
			return d.str(&s.AmountUSDC)
		case "payer":
			return d.str(&s.Payer)
		case "receiver":
			return d.str(&s.Receiver)
		case "timestamp":
			return d.str(&s.Timestamp)
		case "scheme":
			return d.str(&s.Scheme)
		case "chain":
			return d.chain(&s.Chain)
		}
		return false
	})
}

func (d *fastDecoder) chain(ch *ChainFacts) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "verification":
			return d.str(&ch.Verification)
		case "block_number":
			return d.uint(&ch.BlockNumber)
		case "block_hash":
			return d.str(&ch.BlockHash)
		case "block_time":
			return d.str(&ch.BlockTime)
		case "confirmations":
			return d.uint(&ch.Confirmations)
		case "finalized":
			ch.Finalized = new(bool)
			return d.bool(ch.Finalized)
		}
		return false
	})
}

func (d *fastDecoder) party(p *Party) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "legal_name":
			return d.str(&p.LegalName)
		case "vat_number":
			return d.str(&p.VATNumber)
		case "country":
			return d.str(&p.Country)
		}
		return false
	})
}

func (d *fastDecoder) buyer(b *Buyer) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "country":
			return d.str(&b.Country)
		case "postal_code":
			return d.str(&b.PostalCode)
		case "vat_number":
			return d.str(&b.VATNumber)
		case "name":
			return d.str(&b.Name)
		case "registry":
			r := &RegistryProof{}
			b.Registry = r
			return d.object(func(name []byte) bool {
				switch string(name) {
				case "registry":
					return d.str(&r.Registry)
				case "status":
					return d.str(&r.Status)
				case "number":
					return d.str(&r.Number)
				case "request_identifier":
					return d.str(&r.RequestIdentifier)
				case "checked_at":
					return d.str(&r.CheckedAt)
				}
				return false
			})
		case "location_evidence":
			return d.evidence(func() (kind, country, value *string) {
				b.LocationEvidence = append(b.LocationEvidence, LocationEvidence{})
				e := &b.LocationEvidence[len(b.LocationEvidence)-1]
				return &e.Kind, &e.Country, &e.Value
			})
		}
		return false
	})
}

// evidence reads a non-empty array of evidence objects; next appends one
// and returns where its members go (value nil in the SpecV3 signed form).
func (d *fastDecoder) evidence(next func() (kind, country, value *string)) bool {
	if d.pos == len(d.data) || d.data[d.pos] != '[' {
		return false
	}
	d.pos++
	for {
		kind, country, value := next()
		ok := d.object(func(name []byte) bool {
			switch {
			case string(name) == "kind":
				return d.str(kind)
			case string(name) == "country":
				return d.str(country)
			case string(name) == "value" && value != nil:
				return d.str(value)
			}
			return false
		})
		if !ok {
			return false
		}
		d.space()
		if d.pos == len(d.data) {
			return false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return true
		default:
			return false
		}
	}
}

func (d *fastDecoder) classification(k *Classification) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "status":
			return d.str(&k.Status)
		case "regime":
			return d.str(&k.Regime)
		case "oss_scheme":
			return d.str(&k.OSSScheme)
		case "category":
			return d.str(&k.Category)
		case "rate_percent":
			return d.str(&k.RatePercent)
		case "taxing_country":
			return d.str(&k.TaxingCountry)
		case "vatex":
			return d.str(&k.VATEX)
		case "legal_basis":
			return d.str(&k.LegalBasis)
		case "invoice_note":
			return d.str(&k.InvoiceNote)
		case "buyer_treatment":
			return d.str(&k.BuyerTreatment)
		case "rate_table":
			return d.str(&k.RateTable)
		case "rate_effective_from":
			return d.str(&k.RateEffectiveFrom)
		case "reasons":
			return d.strings(&k.Reasons)
		}
		return false
	})
}

func (d *fastDecoder) fxRate(r *FXRate) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "raw":
			return d.str(&r.Raw)
		case "rate_date":
			return d.str(&r.RateDate)
		case "requested_date":
			return d.str(&r.RequestedDate)
		case "policy":
			return d.str(&r.Policy)
		case "source":
			return d.str(&r.Source)
		case "snapshot":
			return d.str(&r.Snapshot)
		}
		return false
	})
}

func (d *fastDecoder) fx(f *FX) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "pair":
			return d.str(&f.Pair)
		case "amount_usdc":
			return d.str(&f.AmountUSDC)
		case "usdc_usd_rate":
			return d.str(&f.USDCUSDRate)
		case "usdc_usd_source":
			return d.str(&f.USDCUSDSource)
		case "usd_per_eur":
			return d.fxRate(&f.USDPerEUR)
		case "gross_eur":
			return d.str(&f.GrossEUR)
		case "net_eur":
			return d.str(&f.NetEUR)
		case "vat_eur":
			return d.str(&f.VATEUR)
		case "gross_eur_exact":
			return d.str(&f.GrossEURExact)
		case "net_eur_exact":
			return d.str(&f.NetEURExact)
		case "vat_eur_exact":
			return d.str(&f.VATEURExact)
		case "rounding":
			return d.str(&f.Rounding)
		}
		return false
	})
}

func (d *fastDecoder) fxGBP(f *FXGBP) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "pair":
			return d.str(&f.Pair)
		case "amount_usdc":
			return d.str(&f.AmountUSDC)
		case "usdc_usd_rate":
			return d.str(&f.USDCUSDRate)
		case "usdc_usd_source":
			return d.str(&f.USDCUSDSource)
		case "usd_per_gbp":
			return d.fxRate(&f.USDPerGBP)
		case "gross_gbp":
			return d.str(&f.GrossGBP)
		case "net_gbp":
			return d.str(&f.NetGBP)
		case "vat_gbp":
			return d.str(&f.VATGBP)
		case "rounding":
			return d.str(&f.Rounding)
		}
		return false
	})
}

func (d *fastDecoder) fxTaxCurrency(f *FXTaxCurrency) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "currency":
			return d.str(&f.Currency)
		case "pair":
			return d.str(&f.Pair)
		case "amount_usdc":
			return d.str(&f.AmountUSDC)
		case "usdc_usd_rate":
			return d.str(&f.USDCUSDRate)
		case "usdc_usd_source":
			return d.str(&f.USDCUSDSource)
		case "usd_per_unit":
			return d.fxRate(&f.USDPerUnit)
		case "gross":
			return d.str(&f.Gross)
		case "net":
			return d.str(&f.Net)
		case "vat":
			return d.str(&f.VAT)
		case "gross_exact":
			return d.str(&f.GrossExact)
		case "net_exact":
			return d.str(&f.NetExact)
		case "vat_exact":
			return d.str(&f.VATExact)
		case "rounding":
			return d.str(&f.Rounding)
		}
		return false
	})
}

func (d *fastDecoder) fee(f *Fee) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "model":
			return d.str(&f.Model)
		case "bps":
			return d.str(&f.BPS)
		case "accrued_eur":
			return d.str(&f.AccruedEUR)
		case "label":
			return d.str(&f.Label)
		}
		return false
	})
}

func (d *fastDecoder) claimsV3(w *claimsV3) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "spec":
			return d.str(&w.Spec)
		case "receipt_id":
			return d.str(&w.ReceiptID)
		case "event_id":
			return d.str(&w.EventID)
		case "iat":
			return d.int(&w.IssuedAt)
		case "iss":
			return d.str(&w.Issuer)
		case "environment":
			return d.str(&w.Environment)
		case "watermark":
			return d.str(&w.Watermark)
		case "custody":
			return d.str(&w.Custody)
		case "jurisdiction":
			return d.str(&w.Jurisdiction)
		case "ruleset":
			return d.str(&w.Ruleset)
		case "review_status":
			return d.str(&w.ReviewStatus)
		case "review_reasons":
			return d.strings(&w.ReviewReasons)
		case "supersedes":
			return d.str(&w.Supersedes)
		case "settlement":
			s := &w.Settlement
			return d.object(func(name []byte) bool {
				switch string(name) {
				case "protocol":
					return d.str(&s.Protocol)
				case "network":
					return d.str(&s.Network)
				case "asset":
					return d.str(&s.Asset)
				case "asset_contract":
					return d.str(&s.AssetContract)
				case "amount_usdc":
					return d.str(&s.AmountUSDC)
				case "timestamp":
					return d.str(&s.Timestamp)
				case "scheme":
					return d.str(&s.Scheme)
				case "chain":
					ch := &s.Chain
					return d.object(func(name []byte) bool {
						switch string(name) {
						case "verification":
							return d.str(&ch.Verification)
						case "block_time":
							return d.str(&ch.BlockTime)
						case "confirmations":
							return d.uint(&ch.Confirmations)
						case "finalized":
							ch.Finalized = new(bool)
							return d.bool(ch.Finalized)
						}
						return false
					})
				}
				return false
			})
		case "seller":
			return d.party(&w.Seller)
		case "buyer":
			b := &w.Buyer
			return d.object(func(name []byte) bool {
				switch string(name) {
				case "country":
					return d.str(&b.Country)
				case "registry":
					r := &registryV3{}
					b.Registry = r
					return d.object(func(name []byte) bool {
						switch string(name) {
						case "registry":
							return d.str(&r.Registry)
						case "status":
							return d.str(&r.Status)
						case "checked_at":
							return d.str(&r.CheckedAt)
						}
						return false
					})
				case "location_evidence":
					return d.evidence(func() (kind, country, value *string) {
						b.LocationEvidence = append(b.LocationEvidence, evidenceV3{})
						e := &b.LocationEvidence[len(b.LocationEvidence)-1]
						return &e.Kind, &e.Country, nil
					})
				}
				return false
			})
		case "classification":
			w.Classification = &Classification{}
			return d.classification(w.Classification)
		case "fx":
			w.FX = &FX{}
			return d.fx(w.FX)
		case "fx_tax_currency":
			w.FXTaxCurrency = &FXTaxCurrency{}
			return d.fxTaxCurrency(w.FXTaxCurrency)
		case "invoice":
			w.Invoice = &invoiceV3{}
			return d.object(func(name []byte) bool {
				if string(name) == "id" {
					return d.str(&w.Invoice.ID)
				}
				return false
			})
		case "fee":
			w.Fee = &Fee{}
			return d.fee(w.Fee)
		case "commitments":
			return d.stringMap(&w.Commitments)
		case "log":
			return d.object(func(name []byte) bool {
				if string(name) == "origin" {
					return d.str(&w.Log.Origin)
				}
				return false
			})
		}
		return false
	})
}
