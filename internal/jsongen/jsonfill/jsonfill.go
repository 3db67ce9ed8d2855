// Package jsonfill fills Go values with random contents for the tests of
// generated JSON encoders (package jsongen): every settable field, strings
// from pieces that need every kind of escaping (quotes, backslashes,
// control characters, <, >, &, U+2028, U+2029, invalid UTF-8), integers
// at their extremes, and nil, empty and filled pointers, slices and maps.
package jsonfill

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
)

// Pieces are the bits random strings are made of.
var Pieces = []string{"", "a", "Zz09", " ", "\"", "\\", "/", "<", ">", "&", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t",
	"é", "€", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\xff", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\ufffd",
	"—", "Smith & Sons <Ltd>", "x402-", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "2026-04-10T14:30:00Z", "11.90"}

// Custom makes a value of a type the filler cannot fill field by field
// (unexported fields: decimals, times); ok false lets the filler do it.
type Custom func(t reflect.Type, r *rand.Rand) (v reflect.Value, ok bool)

// Filler fills values.
type Filler struct {
	R      *rand.Rand
	Custom Custom
	// Zero is the chance in 1/8 that a value is left zero (nil pointers,
	// slices and maps, empty strings, 0), so that omitempty is exercised.
	Zero int
}

// String returns a random string of pieces.
func (f *Filler) String() string {
	var b strings.Builder
	for range f.R.IntN(5) {
		b.WriteString(Pieces[f.R.IntN(len(Pieces))])
	}
	return b.String()
}

// Fill fills the settable value v.
func (f *Filler) Fill(v reflect.Value) { f.fill(v, 0) }

func (f *Filler) fill(v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	if f.Custom != nil {
		if c, ok := f.Custom(v.Type(), f.R); ok {
			v.Set(c)
			return
		}
	}
	if f.R.IntN(8) < f.Zero {
		v.SetZero()
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.String())
	case reflect.Bool:
		v.SetBool(f.R.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		switch f.R.IntN(4) {
		case 0:
			v.SetInt(-1 << (bits - 1))
		case 1:
			v.SetInt(1<<(bits-1) - 1)
		default:
			v.SetInt(int64(f.R.IntN(2001)) - 1000)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if f.R.IntN(4) == 0 {
			v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits()))
		} else {
			v.SetUint(uint64(f.R.IntN(1000)))
		}
	case reflect.Pointer:
		if depth > 6 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 6 {
			v.SetZero()
			return
		}
		n := f.R.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		if depth > 6 {
			v.SetZero()
			return
		}
		m := reflect.MakeMap(v.Type())
		for range f.R.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			f.fill(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f.fill(v.Field(i), depth+1)
		}
	}
}

// Source is a rand.Source reading its numbers from bytes (a fuzzer's
// input), then from a PCG generator (a constant stream would never leave
// the rejection loops of rand.Rand's bounded draws).
type Source struct {
	Data []byte
	pcg  *rand.PCG
}

// Uint64 returns the next 8 bytes of the data, or of the generator.
func (s *Source) Uint64() uint64 {
	if len(s.Data) == 0 {
		if s.pcg == nil {
			s.pcg = rand.NewPCG(22, 1)
		}
		return s.pcg.Uint64()
	}
	var b [8]byte
	n := copy(b[:], s.Data)
	s.Data = s.Data[n:]
	return binary.LittleEndian.Uint64(b[:])
}
