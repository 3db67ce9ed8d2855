package vat

import (
	"strings"
	"testing"
)

// TestUnionOSSWithoutItsState: a Union OSS registration that does not name
// its member state of identification is, for a seller established in the
// EU, identified where it is established: Art. 369a(2) Directive
// 2006/112/EC leaves it no other state. The account accepts such an entry,
// the invoicing law and the OSS return read it so; the determination must
// too, instead of sending every sale to review as naming "" (not a member
// state) and as unregistered. A seller established outside the EU, whose
// state of identification depends on its fixed establishments and its
// choice, still waits for review: the engine does not guess it.
func TestUnionOSSWithoutItsState(t *testing.T) {
	unnamed := Registration{Scheme: RegistrationOSSUnion}
	ie := Seller{Country: "IE", OverThreshold: true, Registrations: []Registration{{Scheme: RegistrationNational, Country: "IE"}, unnamed}}
	named := ie
	named.Registrations = []Registration{{Scheme: RegistrationNational, Country: "IE"}, {Scheme: RegistrationOSSUnion, Country: "IE"}}
	got, want := Determine(Input{ie, b2c("DE"), digital}), Determine(Input{named, b2c("DE"), digital})
	if summaryPlace(got) != summaryPlace(want) || got.Status != StatusDetermined {
		t.Errorf("Irish seller, Union OSS without its state:\n got  %s %v\n want %s (as with IE named)", summaryPlace(got), got.Reasons, summaryPlace(want))
	}

	// Read as the establishment's state, it shares days with another
	// state's window: one member state of identification at a time.
	two := ie
	two.Registrations = append(append([]Registration(nil), ie.Registrations...), Registration{Scheme: RegistrationOSSUnion, Country: "FR", ValidTo: "2025-06-30"})
	d := Determine(Input{two, b2c("DE"), digital})
	if !hasReason(d, ReasonSellerRegistrationsInconsistent) {
		t.Errorf("unnamed Union OSS beside an overlapping FR one: %s %v", summaryPlace(d), d.Reasons)
	}

	us := Seller{Country: "US", OtherEstablishments: []string{"IE", "NL"}, Registrations: []Registration{unnamed}}
	d = Determine(Input{us, b2c("DE"), digital})
	if d.Status != StatusManualReview || !hasReason(d, ReasonSellerRegistrationsInconsistent) {
		t.Errorf("non-EU seller, Union OSS without its state: %s %v", summaryPlace(d), d.Reasons)
	}
}

// Its window counts as any other's: a supply before it is unregistered
// for that reason alone, and the reason names the window.
func TestUnionOSSWithoutItsStateWindow(t *testing.T) {
	s := Seller{Country: "IE", OverThreshold: true, Registrations: []Registration{{Scheme: RegistrationOSSUnion, ValidFrom: "2026-10-01"}}}
	d := Determine(Input{s, b2c("DE"), digital})
	if len(d.Reasons) == 0 || d.Reasons[0].Code != ReasonSellerNotRegistered || hasReason(d, ReasonSellerRegistrationsInconsistent) ||
		!strings.Contains(d.Reasons[0].Detail, "from 2026-10-01 does not apply that day") {
		t.Errorf("a supply before the unnamed registration's window: %s %v", summaryPlace(d), d.Reasons)
	}
}
