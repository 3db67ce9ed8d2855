package vat

// finish completes a determination once the place of supply and the
// regime are decided: the day of supply for outcomes that charged no rate
// (localday.go), the Art. 59c running total (threshold.go), the seller's
// registrations (registration.go) and the Art. 9a role (interface.go).
func (r *rules) finish() {
	r.fixDefaultDay()
	r.finishThreshold()
	r.checkRegistrations()
	r.electronicInterface()
}
