package webhooks_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestSecondNewRefused: a second dispatching webhooks.New on an engine
// whose dispatcher already runs would start a second dispatcher over the
// same outbox cursor and deliveries; it is refused with an error saying
// so. A service that does not dispatch (NoDispatcher) may sit beside it.
func TestSecondNewRefused(t *testing.T) {
	e, _ := openService(t, t.TempDir(), time.Now, &fiscaltest.Rand{}, webhooks.Options{})
	defer e.Close()
	if _, err := webhooks.New(e, webhooks.Options{Logger: testLogger()}); err == nil {
		t.Fatal("a second webhooks.New on the same engine started a second dispatcher")
	} else {
		if !errors.Is(err, ledger.ErrReserved) {
			t.Errorf("the refusal does not wrap ledger.ErrReserved: %v", err)
		}
	}
	if _, err := webhooks.New(e, webhooks.Options{NoDispatcher: true, Logger: testLogger()}); err != nil {
		t.Fatalf("a service without a dispatcher beside the running one: %v", err)
	}
}
