// Package vies looks up VAT identification numbers in the registries that can
// confirm them (EU VIES, UK HMRC) and reports valid, invalid or unavailable,
// with the registry's proof.
package vies
