package vies

import (
	"fmt"
	"strings"
)

// Mode switches registry lookups on or off.
type Mode string

const (
	// ModeOff makes no network calls: syntax is still checked, every other
	// number is unavailable with REGISTRY_OFF (so the engine holds B2B
	// sales for review instead of guessing). The zero Mode is off.
	ModeOff Mode = "off"
	// ModeLive asks VIES and, with credentials, HMRC.
	ModeLive Mode = "live"
)

// ParseMode reads "live" or "off" (case-insensitive; empty = off).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", ModeOff:
		return ModeOff, nil
	case ModeLive:
		return ModeLive, nil
	default:
		return "", fmt.Errorf("%w: vies mode %q is neither %q nor %q", ErrConfig, s, ModeLive, ModeOff)
	}
}

// Config is the whole lookup configuration in one value, for the engine's
// configuration: mode, base URLs, requester numbers, cache TTLs, rate
// limits, retries.
type Config struct {
	// Mode: zero = ModeOff.
	Mode Mode
	// VIES configures the EU client (used in ModeLive).
	VIES VIESConfig
	// HMRC configures the UK client, used in ModeLive when ClientID is
	// set; without it GB numbers are unavailable with REGISTRY_OFF.
	HMRC HMRCConfig
	// Service: TTLs, rate limits, retries, clock; Syntax is required. Its
	// VIES and HMRC fields must be nil: New builds them from the fields above.
	Service ServiceConfig
}

// New builds the Service that c describes.
func New(c Config) (*Service, error) {
	mode, err := ParseMode(string(c.Mode))
	if err != nil {
		return nil, err
	}
	if c.Service.VIES != nil || c.Service.HMRC != nil {
		return nil, fmt.Errorf("%w: set Config.VIES/Config.HMRC, not Service.VIES/Service.HMRC", ErrConfig)
	}
	sc := c.Service
	if mode == ModeLive {
		if (c.VIES.RequesterCountry == "") != (c.VIES.RequesterNumber == "") {
			return nil, fmt.Errorf("%w: VIES requester country and number must be set together", ErrConfig)
		}
		if c.HMRC.RequesterVRN != "" && !isVRN(ukVRN(c.HMRC.RequesterVRN)) {
			return nil, fmt.Errorf("%w: HMRC requester VRN %q is not 9 or 12 digits", ErrConfig, c.HMRC.RequesterVRN)
		}
		if c.HMRC.ClientID != "" && c.HMRC.ClientSecret == "" {
			return nil, fmt.Errorf("%w: HMRC client secret missing", ErrConfig)
		}
		if c.VIES.Clock == nil {
			c.VIES.Clock = sc.Clock
		}
		if c.HMRC.Clock == nil {
			c.HMRC.Clock = sc.Clock
		}
		sc.VIES = NewVIES(c.VIES)
		if c.HMRC.ClientID != "" {
			sc.HMRC = NewHMRC(c.HMRC)
		}
	}
	return NewService(sc)
}
