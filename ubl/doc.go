// Package ubl renders deterministic UBL 2.1 invoices and credit notes that
// conform to EN 16931 (and to Peppol BIS Billing 3.0 for business buyers).
package ubl
