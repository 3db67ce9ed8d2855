package webhooks

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// Stats is the state of webhook delivery at one moment, for monitoring:
// the backlog, what failed for good, and the endpoints' health.
type Stats struct {
	// Pending is the backlog: deliveries waiting for an attempt (those in
	// flight included).
	Pending int
	// OldestDue is when the earliest pending delivery is or was due; zero
	// when nothing is pending. A time far in the past means the dispatcher
	// is not working the backlog.
	OldestDue time.Time
	// Failed is how many delivery states (kept within the retention window,
	// see Prune) failed for good: retries exhausted, the receiver
	// answered 410, or no replica of a shared log could send it within the
	// retry horizon.
	Failed int
	// Endpoints by state: enabled with a delivered (or no) last attempt,
	// enabled with a failed last attempt, and disabled (after a 410).
	EndpointsOK, EndpointsFailing, EndpointsDisabled int
}

// failedMarker is how a stored deliveryState in status DeliveryFailed
// reads: Stats counts failed deliveries by this byte match rather than
// decoding every state, because the deliveries bucket holds one state per
// (endpoint, event) of the retention window. Attempt.Status is a number, so
// nothing else in a state can read like it (TestFailedMarker).
var failedMarker = []byte(`"status":"` + DeliveryFailed + `"`)

// Stats reads the webhook state in one read transaction: the due index
// (the backlog, in the order it is due), the endpoints, and a scan of the
// stored delivery states for the failed ones.
func (w *Service) Stats() (Stats, error) {
	var st Stats
	err := w.read(func(tx ledger.Tx) error {
		first := true
		if err := tx.Scan(bucketWebhookDue, nil, nil, false, func(k, _ []byte) bool {
			if first && len(k) >= 8 {
				st.OldestDue = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
				first = false
			}
			st.Pending++
			return true
		}); err != nil {
			return err
		}
		var bad error
		if err := tx.Scan(bucketWebhookEndpoints, nil, nil, false, func(_, v []byte) bool {
			var ep endpointRecord
			if err := json.Unmarshal(v, &ep); err != nil {
				bad = err
				return false
			}
			switch {
			case ep.DisabledAt != nil:
				st.EndpointsDisabled++
			case ep.LastAttempt != nil && ep.LastAttempt.Outcome != "delivered":
				st.EndpointsFailing++
			default:
				st.EndpointsOK++
			}
			return true
		}); err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
		return tx.Scan(bucketWebhookDeliveries, nil, nil, false, func(_, v []byte) bool {
			if bytes.Contains(v, failedMarker) {
				st.Failed++
			}
			return true
		})
	})
	return st, err
}
