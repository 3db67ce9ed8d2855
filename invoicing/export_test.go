package invoicing

import "github.com/fiscal402/fiscal402/fiscal"

// SummaryBuyers lets the tests see which summaries Issue would make of a
// month.
func SummaryBuyers(b *fiscal.Books, period string) ([]SummaryRequest, error) {
	return summaryBuyers(b, period)
}
