// Package fx converts settlement amounts to EUR with European Central Bank
// reference rates, recording where every rate came from.
package fx
