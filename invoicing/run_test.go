package invoicing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestMonthRunIssuesTheOthers: a month's run (Issue without a buyer) whose
// summary of one buyer fails still issues every other buyer's, and reports
// each failure with its buyer, state and problem, instead of stopping at
// the first; a buyer whose supplies were all revised away is no failure.
// Only a cancelled run stops.
func TestMonthRunIssuesTheOthers(t *testing.T) {
	buyers := []invoicing.SummaryRequest{
		{Period: "2026-03", Buyer: "0xaaaa", TaxCountry: "IE"},
		{Period: "2026-03", Buyer: "0xbbbb", TaxCountry: "IE"},
		{Period: "2026-03", Buyer: "0xcccc", TaxCountry: "IE"},
		{Period: "2026-03", Buyer: "DE136695976", TaxCountry: "IE"},
	}
	rulesFailed := &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Detail: "the business customer's street is missing"}
	var called []string
	issue := func(q invoicing.SummaryRequest) (*invoicing.SummaryResult, error) {
		called = append(called, q.Buyer)
		switch q.Buyer {
		case "0xaaaa":
			return nil, rulesFailed
		case "0xcccc":
			return nil, &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "supplies revised away"}
		case "DE136695976":
			return nil, errors.New("disk on fire")
		}
		return &invoicing.SummaryResult{Outcome: fiscal.Created, Summary: &invoicing.SummaryInvoice{Buyer: q.Buyer}}, nil
	}
	got, err := invoicing.IssueEach(context.Background(), buyers, issue)
	if len(called) != len(buyers) {
		t.Fatalf("the run tried %v, want every buyer", called)
	}
	if len(got) != 1 || got[0].Summary.Buyer != "0xbbbb" {
		t.Fatalf("issued %+v, want 0xbbbb's summary", got)
	}
	var run *invoicing.RunError
	if !errors.As(err, &run) {
		t.Fatalf("error %v (%T), want a *invoicing.RunError", err, err)
	}
	want := []invoicing.SummaryFailure{
		{Buyer: "0xaaaa", TaxCountry: "IE", Code: fiscal.CodeInvoiceRulesFailed, Detail: rulesFailed.Detail},
		{Buyer: "DE136695976", TaxCountry: "IE", Code: fiscal.CodeInternal, Detail: "internal error"},
	}
	if len(run.Failures) != len(want) {
		t.Fatalf("failures %+v, want %+v", run.Failures, want)
	}
	for i, f := range run.Failures {
		if f.Buyer != want[i].Buyer || f.TaxCountry != want[i].TaxCountry || f.Code != want[i].Code || f.Detail != want[i].Detail || f.Err == nil {
			t.Errorf("failure %d: %+v, want %+v with its cause", i, f, want[i])
		}
	}

	// A cancelled run stops: the rest would fail the same way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called = nil
	_, err = invoicing.IssueEach(ctx, buyers[1:], func(q invoicing.SummaryRequest) (*invoicing.SummaryResult, error) {
		called = append(called, q.Buyer)
		return nil, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || len(called) != 1 {
		t.Errorf("cancelled run: %v after %v", err, called)
	}
}

// TestMonthRunThatIssuesNothingIsAnError: a month's run in which every
// summary failed answered like a success (no error a caller branches on:
// over HTTP 200 with an empty list and failures). It is now the error of
// its first failure (code, field, retry), whose detail names every failure
// and which carries the *RunError; a run that issued some (or found them
// issued before) still answers them with the *RunError beside.
func TestMonthRunThatIssuesNothingIsAnError(t *testing.T) {
	buyers := []invoicing.SummaryRequest{
		{Period: "2026-03", Buyer: "0xaaaa", TaxCountry: "IE"},
		{Period: "2026-03", Buyer: "0xbbbb", TaxCountry: "DE"},
	}
	got, err := invoicing.IssueEach(context.Background(), buyers, func(q invoicing.SummaryRequest) (*invoicing.SummaryResult, error) {
		if q.Buyer == "0xaaaa" {
			return nil, &fiscal.Error{Code: fiscal.CodeInvoiceRulesFailed, Field: "/buyer", Detail: "the business customer's street is missing"}
		}
		return nil, &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "the ledger cannot be written right now"}
	})
	var fe *fiscal.Error
	var run *invoicing.RunError
	if len(got) != 0 || !errors.As(err, &fe) || !errors.As(err, &run) {
		t.Fatalf("a run that issued nothing: %v, %v (%T); want a *fiscal.Error carrying the *RunError", got, err, err)
	}
	if fe.Code != fiscal.CodeInvoiceRulesFailed || fe.Field != "/buyer" || len(run.Failures) != 2 ||
		!strings.Contains(fe.Detail, "0xaaaa") || !strings.Contains(fe.Detail, "0xbbbb") || !strings.Contains(fe.Detail, string(fiscal.CodeDBUnavailable)) {
		t.Errorf("the run's error: %+v; want the first failure's code and field, every failure in the detail", fe)
	}
}
