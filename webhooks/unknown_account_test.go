package webhooks_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestCreateEndpointUnknownAccount: an endpoint for an account the engine
// keeps no books for (a Go caller's mistyped id) was registered and stored,
// and never received anything; it is now NOT_FOUND and nothing is stored.
func TestCreateEndpointUnknownAccount(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	ctx := context.Background()
	ep, err := env.svc.CreateEndpoint(ctx, "acct_typo", webhooks.EndpointRequest{URL: "https://example.com/hook"})
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeNotFound || ep != nil {
		t.Errorf("CreateEndpoint(acct_typo) = %v, %v; want NOT_FOUND", ep, err)
	}
	if list, err := env.svc.Endpoints(ctx, "acct_typo"); err == nil && len(list) != 0 {
		t.Errorf("an endpoint was stored for acct_typo: %+v", list)
	}
	if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://example.com/hook"}); err != nil {
		t.Errorf("CreateEndpoint(acct_0): %v", err)
	}
}
