package webhooks_test

import (
	"context"
	"errors"
	"strings"
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

// TestUnknownAccountIsNotFound: every call that names an account the engine
// keeps no books for answers NOT_FOUND naming the account, as
// CreateEndpoint does; the lists (Endpoints, Events) answered an empty
// list, as if the account existed and had nothing, so a Go caller's
// mistyped id (or a server whose keys name an account the engine does not
// keep) looked like a quiet account.
func TestUnknownAccountIsNotFound(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	ctx := context.Background()
	ep, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	const who = "acct_typo"
	calls := map[string]func() error{
		"Endpoints":      func() error { _, err := env.svc.Endpoints(ctx, who); return err },
		"Events":         func() error { _, err := env.svc.Events(ctx, who, "", 0); return err },
		"Endpoint":       func() error { _, err := env.svc.Endpoint(ctx, who, ep.ID); return err },
		"DeleteEndpoint": func() error { return env.svc.DeleteEndpoint(ctx, who, ep.ID) },
		"AddSecret":      func() error { _, err := env.svc.AddSecret(ctx, who, ep.ID); return err },
		"DeleteSecret":   func() error { _, err := env.svc.DeleteSecret(ctx, who, ep.ID, ep.SecretID); return err },
		"EnableEndpoint": func() error { _, err := env.svc.EnableEndpoint(ctx, who, ep.ID); return err },
		"Event":          func() error { _, err := env.svc.Event(ctx, who, "evt_1"); return err },
		"Redeliver":      func() error { _, err := env.svc.Redeliver(ctx, who, "evt_1", ""); return err },
	}
	for name, call := range calls {
		err := call()
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeNotFound || !strings.Contains(fe.Detail, who) {
			t.Errorf("%s(%s) = %v; want NOT_FOUND naming the account", name, who, err)
		}
	}
	if list, err := env.svc.Endpoints(ctx, "acct_0"); err != nil || len(list) != 1 {
		t.Errorf("acct_0's endpoints after the refused calls: %v %v", list, err)
	}
}
