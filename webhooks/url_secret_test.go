package webhooks_test

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestConfiguredURLSecretsStayOutOfErrors: receivers often take a token in
// the endpoint URL (a query parameter, user:password). An error about a
// configured endpoint goes to the operator's log (a refused accounts file)
// and must not carry that token: it names the endpoint by scheme, host and
// path only.
func TestConfiguredURLSecretsStayOutOfErrors(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{NoDispatcher: true})
	const secret = "whsec_0123456789abcdef0123456789abcdef"
	for _, c := range []webhooks.EndpointConfig{
		{URL: "http://hookuser:pa55word@127.0.0.1:9/x?token=t0ken-value#frag-value", Secrets: []string{secret}}, // loopback refused
		{URL: "https://hookuser:pa55word@erp.example.com/x?token=t0ken-value", Secrets: []string{"short"}},      // bad secret
		{URL: "https://hookuser:pa55word@erp.example.com/x?token=t0ken-value"},                                  // no secret
	} {
		_, err := webhooks.New(env.engine, webhooks.Options{NoDispatcher: true, Configured: map[string][]webhooks.EndpointConfig{"acct_0": {c}}})
		if err == nil {
			t.Fatalf("accepted %+v", c)
		}
		for _, leak := range []string{"t0ken-value", "pa55word", "hookuser", "frag-value"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("the error for %s names %q: %v", c.URL, leak, err)
			}
		}
		if !strings.Contains(err.Error(), "/x") {
			t.Errorf("the error does not name the endpoint's path: %v", err)
		}
	}
	twice := webhooks.EndpointConfig{URL: "https://erp.example.com/x?token=t0ken-value", Secrets: []string{secret}}
	if err := webhooks.ValidateConfigs([]webhooks.EndpointConfig{twice, twice}); err == nil || strings.Contains(err.Error(), "t0ken-value") {
		t.Errorf("an endpoint listed twice: %v", err)
	}
}

// TestUnparsableURLSecretsStayOutOfErrors: a configured endpoint URL that
// does not parse (a port with a letter, a bad %-escape, a space in the host)
// is refused, and the refusal, which reaches the operator's log, names it
// as one that does not parse (shownURL) without quoting it: net/url's own
// error quotes the whole URL, user:password and query token included.
func TestUnparsableURLSecretsStayOutOfErrors(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{NoDispatcher: true})
	const secret = "whsec_0123456789abcdef0123456789abcdef"
	for _, raw := range []string{
		"https://hookuser:pa55word@erp.example.com:80a/x?token=t0ken-value",
		"https://hookuser:pa55word@erp.example.com/%zz?token=t0ken-value",
		"https://hookuser:pa55word@erp example.com/x?token=t0ken-value",
	} {
		c := webhooks.EndpointConfig{URL: raw, Secrets: []string{secret}}
		errs := map[string]error{"ValidateConfigs": webhooks.ValidateConfigs([]webhooks.EndpointConfig{c})}
		_, errs["New"] = webhooks.New(env.engine, webhooks.Options{NoDispatcher: true, Configured: map[string][]webhooks.EndpointConfig{"acct_0": {c}}})
		_, errs["CheckURL"] = webhooks.TargetPolicy{}.CheckURL(raw)
		for name, err := range errs {
			if err == nil {
				t.Fatalf("%s accepted %s", name, raw)
			}
			for _, leak := range []string{"t0ken-value", "pa55word", "hookuser"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%s: the error for %s names %q: %v", name, raw, leak, err)
				}
			}
		}
	}
}
