package ubl

import (
	"encoding/xml"
	"fmt"
)

// SellerTaxIDs reads what a rendered invoice or credit note states of the
// seller's tax identifiers: its VAT identifier (BT-31, the PartyTaxScheme
// whose TaxScheme is VAT) and its tax registration identifier (BT-32, any
// other TaxScheme), "" where it states none. A document that corrects
// another (a credit note) names the seller as the corrected one does.
func SellerTaxIDs(doc []byte) (vatNumber, taxRegistrationID string, err error) {
	var v struct {
		Schemes []struct {
			CompanyID string `xml:"CompanyID"`
			Scheme    string `xml:"TaxScheme>ID"`
		} `xml:"AccountingSupplierParty>Party>PartyTaxScheme"`
	}
	if err := xml.Unmarshal(doc, &v); err != nil {
		return "", "", fmt.Errorf("ubl: unreadable document: %w", err)
	}
	for _, s := range v.Schemes {
		if s.Scheme == "VAT" {
			vatNumber = s.CompanyID
		} else {
			taxRegistrationID = s.CompanyID
		}
	}
	return vatNumber, taxRegistrationID, nil
}
