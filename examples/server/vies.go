package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// viesFlags configure the VAT-number registries (issue 4). The offline demo
// default is -vies off: no registry is asked and a B2B claim is stored
// PENDING_MANUAL_REVIEW (vat_number_unverified), never reverse-charged on
// trust. Production runs -vies live with the requester's own VAT number, so
// that every confirmation carries a VIES requestIdentifier (the proof).
type viesFlags struct {
	mode, viesURL, requester               string
	hmrcURL, hmrcTokenURL, hmrcID, hmrcVRN string
	validTTL, invalidTTL                   time.Duration
	perSecond                              float64
	recheckBase, recheckMax, recheckGiveUp time.Duration
}

func (v *viesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&v.mode, "vies", "off", "VAT-number registries: live or off")
	fs.StringVar(&v.viesURL, "vies-url", vies.DefaultVIESBaseURL, "VIES REST base URL")
	fs.StringVar(&v.requester, "vies-requester", "", "the requester's own EU VAT number (e.g. IE1234567T): VIES then returns a requestIdentifier")
	fs.StringVar(&v.hmrcURL, "hmrc-url", vies.DefaultHMRCBaseURL, "HMRC API base URL")
	fs.StringVar(&v.hmrcTokenURL, "hmrc-token-url", "", "HMRC OAuth token URL (default <hmrc-url>/oauth/token)")
	fs.StringVar(&v.hmrcID, "hmrc-client-id", "", "HMRC client id (the secret comes from FISCAL402_HMRC_CLIENT_SECRET); empty = GB numbers are not checked")
	fs.StringVar(&v.hmrcVRN, "hmrc-requester", "", "the requester's own UK VRN: HMRC then returns a consultation number")
	fs.DurationVar(&v.validTTL, "vies-valid-ttl", vies.DefaultValidTTL, "how long a valid answer is reused")
	fs.DurationVar(&v.invalidTTL, "vies-invalid-ttl", vies.DefaultInvalidTTL, "how long an invalid answer is reused")
	fs.Float64Var(&v.perSecond, "vies-rate", float64(vies.DefaultRate), "registry calls per second per member state")
	fs.DurationVar(&v.recheckBase, "recheck-base", time.Minute, "first delay before re-asking a registry that was unavailable")
	fs.DurationVar(&v.recheckMax, "recheck-max", time.Hour, "longest delay between re-checks")
	fs.DurationVar(&v.recheckGiveUp, "recheck-give-up", 72*time.Hour, "stop re-asking after this long; the record stays pending for a person")
}

// apply sets cfg.VIES and cfg.Recheck from the flags.
func (v *viesFlags) apply(cfg *fiscal.Config) error {
	mode, err := vies.ParseMode(v.mode)
	if err != nil {
		return fmt.Errorf("-vies: %w", err)
	}
	c := vies.Config{
		Mode: mode,
		VIES: vies.VIESConfig{BaseURL: v.viesURL},
		HMRC: vies.HMRCConfig{BaseURL: v.hmrcURL, TokenURL: v.hmrcTokenURL, ClientID: v.hmrcID,
			ClientSecret: os.Getenv("FISCAL402_HMRC_CLIENT_SECRET"), RequesterVRN: v.hmrcVRN},
		Service: vies.ServiceConfig{Syntax: vat.Syntax, ValidTTL: v.validTTL, InvalidTTL: v.invalidTTL,
			Rate: rate.Limit(v.perSecond)},
	}
	if v.requester != "" {
		n, err := vat.ValidateNumber(v.requester)
		if err != nil {
			return fmt.Errorf("-vies-requester: %w", err)
		}
		c.VIES.RequesterCountry, c.VIES.RequesterNumber = n.Prefix, n.Body
	}
	svc, err := vies.New(c)
	if err != nil {
		return err
	}
	cfg.VIES = svc
	cfg.Recheck = fiscal.RecheckPolicy{BaseDelay: v.recheckBase, MaxDelay: v.recheckMax, GiveUpAfter: v.recheckGiveUp}
	return nil
}
