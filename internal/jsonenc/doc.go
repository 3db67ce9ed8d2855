// Package jsonenc appends JSON values exactly as encoding/json writes them
// (strings with its HTML escaping, a MarshalJSON result compacted and
// escaped, shopspring decimals), without reflection: the one runtime of
// the encoders internal/jsongen generates and of the module's hand-written
// ones outside the leaf packages (settlement's fingerprint). Leaf
// packages import nothing of ours and keep their own (receipt/encode.go).
package jsonenc
