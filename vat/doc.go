// Package vat determines the EU (and experimental UK) VAT treatment of a digital
// supply: place of supply, regime, UNCL5305 category, rate on the supply date,
// VATEX code and invoice mention, and checks the syntax and check digits of
// VAT identification numbers.
package vat
