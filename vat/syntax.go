package vat

// Syntax checks a VAT number's prefix, syntax and check digits
// (ValidateNumber) and returns its prefix and body, in the form
// vies.ServiceConfig.Syntax takes: a number that fails is invalid without
// asking a registry.
func Syntax(number string) (prefix, body string, err error) {
	n, err := ValidateNumber(number)
	if err != nil {
		return "", "", err
	}
	return n.Prefix, n.Body, nil
}
