// Package recordid makes the ids of production records: keyed, so that
// nobody who only saw a payment on chain can compute its record's id.
//
// A record's receipt is public (GET /v1/receipts/rcpt_<id>, no key), so
// its id must not be guessable from the payment. The id of the record of
// a payment (network, txHash) is "x402-" and the first 16 bytes, in hex
// (32 characters), of HMAC-SHA256 (RFC 2104, FIPS 198-1) under the
// record-id key of network ":" lower-case txHash: the same for every
// replay and every replica that holds the key, so a payment keeps one id.
// The key (record-id.key in the key directory: 32 random bytes in hex,
// mode 0600) is made on first use; replicas share it like the receipt and
// log keys. Records made before the key existed keep their ids (the
// (network, txHash) claim, not the id, makes a payment unique).
package recordid
