package webhooks_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestEndpointSameURLSpelledOtherwise: a second endpoint for the URL an
// endpoint of the account already delivers to is 409
// WEBHOOK_ENDPOINT_CONFLICT, however the URL is spelt: URLs that are
// equivalent under RFC 3986 section 6.2.2 (the host's case, percent-encoded
// unreserved characters) and 6.2.3 (the scheme's default port, an empty
// path as "/") reach the same receiver. They were compared byte for byte,
// so "https://HOOKS.example.com/a" or "https://hooks.example.com:443/a"
// registered a second endpoint and the receiver got every event twice.
// URLs that differ in path case, query or a reserved escape are other
// endpoints.
func TestEndpointSameURLSpelledOtherwise(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.endpoint("acct_0", "https://hooks.example.com/a")
	env.endpoint("acct_0", "https://hooks.example.com")
	for _, u := range []string{
		"https://HOOKS.Example.COM/a",
		"HTTPS://hooks.example.com/a",
		"https://hooks.example.com:443/a",
		"https://hooks.example.com/%61",
		"https://hooks.example.com/",
		"https://hooks.example.com:443",
	} {
		if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: u}); codeOf(err) != webhooks.CodeEndpointConflict {
			t.Errorf("%s: %v, want %s", u, err, webhooks.CodeEndpointConflict)
		}
	}
	for _, u := range []string{"https://hooks.example.com/A", "https://hooks.example.com/a?x=1", "https://hooks.example.com:8443/a", "https://hooks.example.com/a%2F"} {
		if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: u}); err != nil {
			t.Errorf("%s is another URL: %v", u, err)
		}
	}
}

// TestConfigSameURLSpelledOtherwise: the accounts file's endpoints of one
// account are checked for the same target as the API checks them
// (TestEndpointSameURLSpelledOtherwise). ValidateConfigs compared the URLs
// byte for byte, so a file listing "https://hooks.example.com/a" and
// "https://HOOKS.example.com:443/a" was accepted, made two endpoints, and
// the receiver got every event twice, one of them signed with a secret it
// may not have (retried for 72 h, then failed).
func TestConfigSameURLSpelledOtherwise(t *testing.T) {
	secret := "whsec_operator_chosen_secret_0001"
	for _, u := range []string{"https://HOOKS.Example.COM/a", "https://hooks.example.com:443/a", "https://hooks.example.com/%61"} {
		list := []webhooks.EndpointConfig{{URL: "https://hooks.example.com/a", Secrets: []string{secret}}, {URL: u, Secrets: []string{secret}}}
		if err := webhooks.ValidateConfigs(list); err == nil {
			t.Errorf("a file listing https://hooks.example.com/a and %s was accepted", u)
		}
	}
	other := []webhooks.EndpointConfig{{URL: "https://hooks.example.com/a", Secrets: []string{secret}}, {URL: "https://hooks.example.com/A", Secrets: []string{secret}}}
	if err := webhooks.ValidateConfigs(other); err != nil {
		t.Errorf("https://hooks.example.com/a and /A are other URLs: %v", err)
	}
}
