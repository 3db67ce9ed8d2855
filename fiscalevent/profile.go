package fiscalevent

import (
	"encoding/json"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/parties"
)

// A fiscal event of the account's own sale is decided under the account's
// seller profile as it stood when the event was recorded: its
// registrations (vat.Registration, dated), its Art. 59c opening figures,
// its choices for special territories and Art. 9a, and the name and
// address its invoice states. A later change of the account must not
// change an old sale, as a settlement's registry re-check decides on the
// profile queued with it (fiscal.Recheck.Seller). So while an event can
// still be revised (pending review, waiting for a rate, or without the
// invoice its sale needs: Event.pending), the profile it was recorded with
// is kept in a side bucket of the ledger, written in the event's own
// transaction, and a person's resolution (Resolve) and the revision made
// once a rate is published (RetryRate) decide under it. The revision that
// leaves the event final removes it. An event recorded before the profile
// was kept has none: the account's current profile decides it, as before.

// bucketProfile is the side bucket: event id → the fiscal.Seller JSON the
// event of the account's own sale was recorded with.
const bucketProfile = "fiscal-event-profile"

// syncProfile adds to the writes of d, a state of a fiscal event of seller,
// the profile the event is decided under while revisable, or its removal.
func syncProfile(d *fiscal.Draft, seller parties.SellerFacts, revisable bool) error {
	put := ledger.Put{Bucket: bucketProfile, Key: []byte(d.Record.ID)}
	if revisable && seller.IsAccount && seller.Profile != nil {
		v, err := json.Marshal(seller.Profile)
		if err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Err: err}
		}
		put.Value = v
	} else if !seller.IsAccount {
		return nil // the event states all its seller's facts
	}
	d.Puts = append(d.Puts, put)
	return nil
}

// recordedProfile sets in's seller profile to the one the event id of the
// account's own sale was recorded with, when it was kept (syncProfile);
// otherwise in is left to the account's current profile.
func (s *Service) recordedProfile(id string, in *input) error {
	if !in.seller.IsAccount {
		return nil
	}
	var raw []byte
	err := s.e.Ledger().View(func(tx ledger.Tx) error {
		raw = tx.Get(bucketProfile, []byte(id))
		return nil
	})
	if err != nil {
		return &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "reading the fiscal event's seller profile failed", Err: err}
	}
	if len(raw) == 0 {
		return nil
	}
	var p fiscal.Seller
	if err := json.Unmarshal(raw, &p); err != nil {
		return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "the fiscal event's stored seller profile is unreadable", Err: err}
	}
	in.seller.Profile = &p
	return nil
}
