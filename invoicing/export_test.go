package invoicing

import (
	"context"

	"github.com/fiscal402/fiscal402/fiscal"
)

// SummaryBuyers lets the tests see which summaries Issue would make of a
// month.
func SummaryBuyers(b *fiscal.Books, period string) ([]SummaryRequest, error) {
	return summaryBuyers(b, period)
}

// IssueEach is the loop of a month's run (Issue without a buyer) over an
// issuer the test controls.
func IssueEach(ctx context.Context, buyers []SummaryRequest, issue func(SummaryRequest) (*SummaryResult, error)) ([]*SummaryResult, error) {
	return issueEach(ctx, buyers, issue)
}
