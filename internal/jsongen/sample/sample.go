// Package sample holds types that exercise every rule of encoding/json
// the generator implements (package jsongen), and their generated
// encoder, which its tests hold to json.Marshal.
package sample

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

//go:generate go run -tags jsongen_bootstrap ../cmd/jsongen

type (
	Name  string
	Level int8
	Count uint16
	Flag  bool
)

// Inner is a plain struct.
type Inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

// Embedded embeds Inner, whose a is shadowed by All's own.
type Embedded struct {
	E        string
	Shadowed string `json:"shadowed"`
	Inner
}

// Ptr is embedded by pointer: nil leaves out its fields.
type Ptr struct {
	P int `json:"p"`
}

type embeddedLower struct {
	Lower string `json:"lower"`
}

// Dup1 and Dup2 both have Same at one depth: neither is written.
type Dup1 struct{ Same string }
type Dup2 struct{ Same string }

// Tagged1's tagged X dominates Tagged2's untagged one.
type Tagged1 struct {
	X string `json:"x"`
}
type Tagged2 struct {
	X string
}

// EmbTagged is embedded under a tag: a member object.
type EmbTagged struct {
	Y string `json:"y,omitempty"`
}

// Text marshals as text; "fail" fails.
type Text struct{ S string }

func (t Text) MarshalText() ([]byte, error) {
	if t.S == "fail" {
		return nil, errors.New("text fails")
	}
	return []byte(t.S), nil
}

// Raw marshals as its JSON, whatever it is (invalid JSON fails
// json.Marshal).
type Raw struct{ J string }

func (r Raw) MarshalJSON() ([]byte, error) {
	if r.J == "fail" {
		return nil, errors.New("raw fails")
	}
	return []byte(r.J), nil
}

// All has a field of every supported kind, with and without omitempty.
type All struct {
	S      string `json:"s"`
	SO     string `json:"so,omitempty"`
	N      Name   `json:"n,omitempty"`
	I      int
	I8     int8   `json:"i8,omitempty"`
	I64    int64  `json:"i64"`
	U      uint   `json:"u,omitempty"`
	U64    uint64 `json:"u64"`
	L      Level
	C      Count               `json:",omitempty"`
	F      Flag                `json:"f"`
	B      bool                `json:"b,omitempty"`
	PS     *string             `json:"ps"`
	PSO    *string             `json:"pso,omitempty"`
	PPI    **int               `json:"ppi"`
	Sl     []string            `json:"sl"`
	SlO    []string            `json:"slo,omitempty"`
	SlI    []Inner             `json:"sli"`
	SlP    []*Inner            `json:"slp"`
	By     []byte              `json:"by"`
	ByO    []byte              `json:"byo,omitempty"`
	Arr    [3]uint8            `json:"arr"`
	Arr0   [0]int              `json:"arr0,omitempty"`
	M      map[string]int      `json:"m"`
	MO     map[Name]Inner      `json:"mo,omitempty"`
	MS     map[string][]string `json:"ms"`
	In     Inner               `json:"in,omitempty"`
	PIn    *Inner              `json:"pin,omitempty"`
	Dec    decimal.Decimal     `json:"dec"`
	PDec   *decimal.Decimal    `json:"pdec,omitempty"`
	T      time.Time           `json:"t"`
	PT     *time.Time          `json:"pt"`
	Tx     Text                `json:"tx"`
	PTx    *Text               `json:"ptx,omitempty"`
	MTx    map[string]Text     `json:"mtx,omitempty"`
	R      Raw                 `json:"r"`
	PR     *Raw                `json:"pr"`
	RM     json.RawMessage     `json:"rm"`
	RMs    []json.RawMessage   `json:"rms,omitempty"`
	Skip   string              `json:"-"`
	Dash   string              `json:"-,"`
	Bad    string              `json:"a\"b"`
	Punct  string              `json:"<&>"`
	Uni    string              `json:"名前,omitempty"`
	Shadow string              `json:"a"`
	hidden string
	Embedded
	*Ptr
	embeddedLower
	Dup1
	Dup2
	Tagged1
	Tagged2
	EmbTagged `json:"embTagged"`
}

// Hidden reads the unexported field, so that it is not unused.
func (a *All) Hidden() string { return a.hidden }

// Empty has no members.
type Empty struct {
	unused int
}

// OnlyOptional has only omitempty members: {} when all are empty.
type OnlyOptional struct {
	A string `json:"a,omitempty"`
	B *Empty `json:"b,omitempty"`
	e Empty
}
