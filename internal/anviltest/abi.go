package anviltest

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
)

// A hand-written subset of the Solidity contract ABI encoding
// (docs.soliditylang.org, "Contract ABI Specification", "Formal
// Specification of the Encoding"): exactly the argument types the USDC
// set-up and payments use.
//
// Go values map to ABI types as follows:
//
//	address    → Address (0x + 40 hex)
//	uint256/8  → *big.Int or uint64
//	bytes32    → [32]byte
//	string     → string (dynamic)
//	address[]  → []Address (dynamic)

// Address is an ABI address argument.
type Address string

const word = 32

func wordUint(v *big.Int) ([]byte, error) {
	if v.Sign() < 0 || v.BitLen() > 256 {
		return nil, fmt.Errorf("abi: %s does not fit uint256", v)
	}
	return v.FillBytes(make([]byte, word)), nil
}

func wordAddress(a Address) ([]byte, error) {
	s, ok := strings.CutPrefix(string(a), "0x")
	if !ok || len(s) != 40 {
		return nil, fmt.Errorf("abi: bad address %q", a)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("abi: bad address %q", a)
	}
	w := make([]byte, word)
	copy(w[12:], b)
	return w, nil
}

func padRight(b []byte) []byte {
	n := (len(b) + word - 1) / word * word
	out := make([]byte, n)
	copy(out, b)
	return out
}

// encodeArgs ABI-encodes a tuple of arguments: static values in the head,
// dynamic values in the tail with their offsets (relative to the start of
// the tuple) in the head.
func encodeArgs(args ...any) ([]byte, error) {
	var head, tail []byte
	headSize := word * len(args)
	for i, a := range args {
		var w []byte
		var err error
		switch v := a.(type) {
		case Address:
			w, err = wordAddress(v)
		case *big.Int:
			w, err = wordUint(v)
		case uint64:
			w, err = wordUint(new(big.Int).SetUint64(v))
		case [32]byte:
			w = append([]byte(nil), v[:]...)
		case string:
			w, _ = wordUint(big.NewInt(int64(headSize + len(tail))))
			n, _ := wordUint(big.NewInt(int64(len(v))))
			tail = append(tail, n...)
			tail = append(tail, padRight([]byte(v))...)
		case []Address:
			w, _ = wordUint(big.NewInt(int64(headSize + len(tail))))
			n, _ := wordUint(big.NewInt(int64(len(v))))
			tail = append(tail, n...)
			for _, e := range v {
				ew, err := wordAddress(e)
				if err != nil {
					return nil, err
				}
				tail = append(tail, ew...)
			}
		default:
			return nil, fmt.Errorf("abi: argument %d: unsupported type %T", i, a)
		}
		if err != nil {
			return nil, fmt.Errorf("abi: argument %d: %w", i, err)
		}
		head = append(head, w...)
	}
	return append(head, tail...), nil
}

// argTypes lists the parameter types of a canonical signature such as
// "transfer(address,uint256)".
func argTypes(sig string) ([]string, error) {
	open := strings.IndexByte(sig, '(')
	if open <= 0 || !strings.HasSuffix(sig, ")") {
		return nil, fmt.Errorf("abi: bad signature %q", sig)
	}
	inner := sig[open+1 : len(sig)-1]
	if inner == "" {
		return nil, nil
	}
	return strings.Split(inner, ","), nil
}

// checkArgs guards against a signature and its Go arguments drifting apart,
// which would otherwise produce calldata for the wrong selector.
func checkArgs(sig string, args []any) error {
	types, err := argTypes(sig)
	if err != nil {
		return err
	}
	if len(types) != len(args) {
		return fmt.Errorf("abi: %s takes %d arguments, have %d", sig, len(types), len(args))
	}
	for i, typ := range types {
		ok := false
		switch args[i].(type) {
		case Address:
			ok = typ == "address"
		case *big.Int, uint64:
			ok = strings.HasPrefix(typ, "uint") && !strings.HasSuffix(typ, "]")
		case [32]byte:
			ok = typ == "bytes32"
		case string:
			ok = typ == "string"
		case []Address:
			ok = typ == "address[]"
		}
		if !ok {
			return fmt.Errorf("abi: %s argument %d is %s, have %T", sig, i, typ, args[i])
		}
	}
	return nil
}
