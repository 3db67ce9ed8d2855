package receipt

// The signed form of a SpecV3 receipt. Claims is the Go view of every
// version; a SpecV3 payload is written from this narrower struct, which has
// no member for a personal field and no log index, so that neither can be
// signed in clear by mistake. doc.go "# Version 3.0.0" is the normative
// description; the member order here is the order of the payload.

// claimsV3 is the signed payload of a SpecV3 receipt.
type claimsV3 struct {
	Spec           string            `json:"spec"`
	ReceiptID      string            `json:"receipt_id"`
	EventID        string            `json:"event_id"`
	IssuedAt       int64             `json:"iat"`
	Issuer         string            `json:"iss,omitempty"`
	Environment    string            `json:"environment"`
	Watermark      string            `json:"watermark,omitempty"`
	Custody        string            `json:"custody"`
	Jurisdiction   string            `json:"jurisdiction"`
	Ruleset        string            `json:"ruleset"`
	ReviewStatus   string            `json:"review_status"`
	ReviewReasons  []string          `json:"review_reasons,omitempty"`
	Supersedes     string            `json:"supersedes,omitempty"`
	Settlement     settlementV3      `json:"settlement"`
	Seller         Party             `json:"seller"`
	Buyer          buyerV3           `json:"buyer"`
	Classification *Classification   `json:"classification,omitempty"`
	FX             *FX               `json:"fx,omitempty"`
	FXTaxCurrency  *FXTaxCurrency    `json:"fx_tax_currency,omitempty"`
	Invoice        *invoiceV3        `json:"invoice,omitempty"`
	Fee            *Fee              `json:"fee,omitempty"`
	Commitments    map[string]string `json:"commitments,omitempty"`
	Log            logV3             `json:"log"`

	// commitList, when set, is written instead of Commitments: the same
	// members sorted by name (ConcealSealAppend, which builds no map).
	commitList []commitment
}

// settlementV3 is Settlement without the identifiers that lead to the
// wallets on chain (tx_hash, log_index, payer, receiver): they are committed.
type settlementV3 struct {
	Protocol      string  `json:"protocol"`
	Network       string  `json:"network"`
	Asset         string  `json:"asset"`
	AssetContract string  `json:"asset_contract,omitempty"`
	AmountUSDC    string  `json:"amount_usdc"`
	Timestamp     string  `json:"timestamp"`
	Scheme        string  `json:"scheme,omitempty"`
	Chain         chainV3 `json:"chain"`
}

// chainV3 is ChainFacts without block_number and block_hash, which locate
// the transfer on chain as exactly as its transaction hash: committed.
type chainV3 struct {
	Verification  string `json:"verification"`
	BlockTime     string `json:"block_time,omitempty"`
	Confirmations uint64 `json:"confirmations,omitempty"`
	Finalized     *bool  `json:"finalized,omitempty"`
}

// buyerV3 is what a SpecV3 receipt says in clear about the buyer: the
// country (the tax fact), the kinds and countries of the location evidence,
// and which registry answered what, when.
type buyerV3 struct {
	Country          string       `json:"country,omitempty"`
	Registry         *registryV3  `json:"registry,omitempty"`
	LocationEvidence []evidenceV3 `json:"location_evidence,omitempty"`
}

type registryV3 struct {
	Registry  string `json:"registry"`
	Status    string `json:"status"`
	CheckedAt string `json:"checked_at"`
}

type evidenceV3 struct {
	Kind    string `json:"kind"`
	Country string `json:"country,omitempty"`
}

// invoiceV3 names the invoice; its UBL hash is committed.
type invoiceV3 struct {
	ID string `json:"id"`
}

// logV3 names the log; the index is bound by the inclusion proof.
type logV3 struct {
	Origin string `json:"origin"`
}

// toV3 is the signed form of c, which checkClaims has accepted as SpecV3
// claims with no personal field in clear; Log.Index is not part of it.
func toV3(c *Claims) claimsV3 {
	w := claimsV3{
		Spec: c.Spec, ReceiptID: c.ReceiptID, EventID: c.EventID, IssuedAt: c.IssuedAt, Issuer: c.Issuer,
		Environment: c.Environment, Watermark: c.Watermark, Custody: c.Custody, Jurisdiction: c.Jurisdiction,
		Ruleset: c.Ruleset, ReviewStatus: c.ReviewStatus, ReviewReasons: c.ReviewReasons, Supersedes: c.Supersedes,
		Settlement: settlementV3{
			Protocol: c.Settlement.Protocol, Network: c.Settlement.Network, Asset: c.Settlement.Asset,
			AssetContract: c.Settlement.AssetContract, AmountUSDC: c.Settlement.AmountUSDC,
			Timestamp: c.Settlement.Timestamp, Scheme: c.Settlement.Scheme,
			Chain: chainV3{
				Verification: c.Settlement.Chain.Verification, BlockTime: c.Settlement.Chain.BlockTime,
				Confirmations: c.Settlement.Chain.Confirmations, Finalized: c.Settlement.Chain.Finalized,
			},
		},
		Seller:         c.Seller,
		Buyer:          buyerV3{Country: c.Buyer.Country},
		Classification: c.Classification,
		FX:             c.FX,
		FXTaxCurrency:  c.FXTaxCurrency,
		Fee:            c.Fee,
		Commitments:    c.Commitments,
		Log:            logV3{Origin: c.Log.Origin},
	}
	if r := c.Buyer.Registry; r != nil {
		w.Buyer.Registry = &registryV3{Registry: r.Registry, Status: r.Status, CheckedAt: r.CheckedAt}
	}
	if n := len(c.Buyer.LocationEvidence); n > 0 {
		w.Buyer.LocationEvidence = make([]evidenceV3, n)
		for i, e := range c.Buyer.LocationEvidence {
			w.Buyer.LocationEvidence[i] = evidenceV3{Kind: e.Kind, Country: e.Country}
		}
	}
	if c.Invoice != nil {
		w.Invoice = &invoiceV3{ID: c.Invoice.ID}
	}
	return w
}

// fromV3 is the Go view of a signed SpecV3 payload: personal fields empty,
// Log.Index zero until the proof sets it.
func fromV3(w *claimsV3) Claims {
	c := Claims{
		Spec: w.Spec, ReceiptID: w.ReceiptID, EventID: w.EventID, IssuedAt: w.IssuedAt, Issuer: w.Issuer,
		Environment: w.Environment, Watermark: w.Watermark, Custody: w.Custody, Jurisdiction: w.Jurisdiction,
		Ruleset: w.Ruleset, ReviewStatus: w.ReviewStatus, ReviewReasons: w.ReviewReasons, Supersedes: w.Supersedes,
		Settlement: Settlement{
			Protocol: w.Settlement.Protocol, Network: w.Settlement.Network, Asset: w.Settlement.Asset,
			AssetContract: w.Settlement.AssetContract, AmountUSDC: w.Settlement.AmountUSDC,
			Timestamp: w.Settlement.Timestamp, Scheme: w.Settlement.Scheme,
			Chain: ChainFacts{
				Verification: w.Settlement.Chain.Verification, BlockTime: w.Settlement.Chain.BlockTime,
				Confirmations: w.Settlement.Chain.Confirmations, Finalized: w.Settlement.Chain.Finalized,
			},
		},
		Seller:         w.Seller,
		Buyer:          Buyer{Country: w.Buyer.Country},
		Classification: w.Classification,
		FX:             w.FX,
		FXTaxCurrency:  w.FXTaxCurrency,
		Fee:            w.Fee,
		Commitments:    w.Commitments,
		Log:            LogRef{Origin: w.Log.Origin},
	}
	if r := w.Buyer.Registry; r != nil {
		c.Buyer.Registry = &RegistryProof{Registry: r.Registry, Status: r.Status, CheckedAt: r.CheckedAt}
	}
	if n := len(w.Buyer.LocationEvidence); n > 0 {
		c.Buyer.LocationEvidence = make([]LocationEvidence, n)
		for i, e := range w.Buyer.LocationEvidence {
			c.Buyer.LocationEvidence[i] = LocationEvidence{Kind: e.Kind, Country: e.Country}
		}
	}
	if w.Invoice != nil {
		c.Invoice = &Invoice{ID: w.Invoice.ID}
	}
	return c
}
