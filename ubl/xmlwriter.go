package ubl

import "github.com/shopspring/decimal"

// writer appends an indented XML document to a byte slice. It is the
// renderer's only serializer: elements are opened, filled and closed in
// document order, so there is no tree to build, and the text is escaped on
// the way in. The output form is fixed (doc.go, "Wire format"): the XML
// declaration, two-space indentation, one element per line, text on the
// line of its element, LF line ends and a final newline.
//
// Escaping (XML 1.0 fifth edition §2.4, §3.3.3): text escapes &, < and >
// (">" because of "]]>") and CR as &#xD;, which a parser would otherwise
// turn into LF (§2.11); attribute values escape &, <, " and TAB, LF, CR as
// character references, which attribute-value normalisation would
// otherwise turn into spaces. Text is validated before rendering (no
// invalid UTF-8, no character outside the XML Char production), so nothing
// else needs escaping or replacing.
type writer struct {
	b     []byte
	depth int
}

const xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>`

// newWriter writes into buf (empty, with the capacity of a typical
// document: Renderer.buffer).
func newWriter(buf []byte) *writer {
	w := &writer{b: buf}
	w.b = append(w.b, xmlDecl...)
	return w
}

// root opens the document element with its default namespace and the cac
// and cbc prefixes.
func (w *writer) root(name, ns string) {
	w.b = append(w.b, '\n', '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, ` xmlns="`...)
	w.b = append(w.b, ns...)
	w.b = append(w.b, `" xmlns:cac="`+nsCAC+`" xmlns:cbc="`+nsCBC+`">`...)
	w.depth = 1
}

// finish closes the document element and returns the document.
func (w *writer) finish(root string) []byte {
	w.b = append(w.b, '\n', '<', '/')
	w.b = append(w.b, root...)
	w.b = append(w.b, '>', '\n')
	return w.b
}

func (w *writer) indent() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ', ' ')
	}
}

// open starts an aggregate element on a new line.
func (w *writer) open(name string) {
	w.indent()
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
	w.depth++
}

// close ends the aggregate element opened last.
func (w *writer) close(name string) {
	w.depth--
	w.indent()
	w.b = append(w.b, '<', '/')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// leaf writes an element with text content on one line.
func (w *writer) leaf(name, text string) {
	w.indent()
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
	w.text(text)
	w.end(name)
}

// leafAttr writes an element with one attribute and text content.
func (w *writer) leafAttr(name, attr, val, text string) {
	w.openAttr(name, attr, val)
	w.text(text)
	w.end(name)
}

// optional writes a leaf only when text is set.
func (w *writer) optional(name, text string) {
	if text != "" {
		w.leaf(name, text)
	}
}

func (w *writer) end(name string) {
	w.b = append(w.b, '<', '/')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// taxScheme writes cac:TaxScheme with its ID (VAT, or TAX for BT-32).
func (w *writer) taxScheme(id string) {
	w.open("cac:TaxScheme")
	w.leaf("cbc:ID", id)
	w.close("cac:TaxScheme")
}

// period writes cac:InvoicePeriod with its dates (BG-14 / BG-26).
func (w *writer) period(pr Period) {
	w.open("cac:InvoicePeriod")
	w.optional("cbc:StartDate", pr.Start)
	w.optional("cbc:EndDate", pr.End)
	w.close("cac:InvoicePeriod")
}

// amount writes a money amount with 2 decimals and its currency
// (PEPPOL-EN16931-R051). Values are already 2-decimal (validated or
// computed from validated values), so StringFixed only pads.
func (w *writer) amount(name, currency string, d decimal.Decimal) {
	w.openAttr(name, "currencyID", currency)
	w.b = appendFixed2(w.b, d) // digits, '-' and '.': nothing to escape
	w.end(name)
}

// number writes a leaf whose text is d.String() (a decimal needs no
// escaping).
func (w *writer) number(name string, d decimal.Decimal) {
	w.indent()
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
	w.b = appendString(w.b, d)
	w.end(name)
}

// openAttr writes the start tag of a leaf with one attribute.
func (w *writer) openAttr(name, attr, val string) {
	w.indent()
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, attr...)
	w.b = append(w.b, '=', '"')
	w.attr(val)
	w.b = append(w.b, '"', '>')
}

// text appends character data, escaping &, <, > and CR.
func (w *writer) text(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		w.b = append(w.b, s[last:i]...)
		w.b = append(w.b, esc...)
		last = i + 1
	}
	w.b = append(w.b, s[last:]...)
}

// attr appends an attribute value (in double quotes), escaping &, <, ",
// TAB, LF and CR.
func (w *writer) attr(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '"':
			esc = "&quot;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		w.b = append(w.b, s[last:i]...)
		w.b = append(w.b, esc...)
		last = i + 1
	}
	w.b = append(w.b, s[last:]...)
}
