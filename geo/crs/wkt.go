package crs

import (
	"fmt"
	"strconv"
	"strings"
)

// node is one WKT element: KEYWORD[ value, value, CHILD[...], ... ]. Quoted strings and bare
// numbers or enumerations go to values in order; nested elements go to kids.
type node struct {
	name   string
	values []string
	kids   []*node
}

// Limits that keep a hostile .prj from costing more than a real one ever needs.
const (
	maxWKTBytes = 64 << 10
	maxWKTDepth = 32
)

// parseWKT parses WKT 1 (OGC and ESRI flavours) or WKT 2 text into a tree. Square brackets
// and parentheses are both accepted, as the standard allows.
func parseWKT(s string) (*node, error) {
	if len(s) > maxWKTBytes {
		return nil, fmt.Errorf("WKT of %d bytes is longer than the %d a CRS definition needs", len(s), maxWKTBytes)
	}
	p := wktParser{s: strings.TrimPrefix(strings.TrimSpace(s), "\ufeff")}
	n, err := p.element(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the WKT element at byte %d", p.s[p.i:min(len(p.s), p.i+10)], p.i)
	}
	return n, nil
}

type wktParser struct {
	s string
	i int
}

func (p *wktParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func isWord(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '+'
}

func (p *wktParser) word() string {
	start := p.i
	for p.i < len(p.s) && isWord(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *wktParser) element(depth int) (*node, error) {
	if depth > maxWKTDepth {
		return nil, fmt.Errorf("WKT nested deeper than %d levels", maxWKTDepth)
	}
	p.space()
	name := p.word()
	if name == "" {
		return nil, fmt.Errorf("expected a WKT keyword at byte %d", p.i)
	}
	p.space()
	if p.i >= len(p.s) || (p.s[p.i] != '[' && p.s[p.i] != '(') {
		return nil, fmt.Errorf("expected [ after %s at byte %d", name, p.i)
	}
	closer := byte(']')
	if p.s[p.i] == '(' {
		closer = ')'
	}
	p.i++
	n := &node{name: strings.ToUpper(name)}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("WKT ends inside %s", n.name)
		}
		switch c := p.s[p.i]; {
		case c == closer:
			p.i++
			return n, nil
		case c == ',':
			p.i++
		case c == '"':
			v, err := p.quoted()
			if err != nil {
				return nil, err
			}
			n.values = append(n.values, v)
		case isWord(c):
			save := p.i
			w := p.word()
			p.space()
			if p.i < len(p.s) && (p.s[p.i] == '[' || p.s[p.i] == '(') {
				p.i = save
				k, err := p.element(depth + 1)
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, k)
			} else {
				n.values = append(n.values, w)
			}
		default:
			return nil, fmt.Errorf("unexpected %q in %s at byte %d", c, n.name, p.i)
		}
	}
}

func (p *wktParser) quoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c == '"' {
			if p.i < len(p.s) && p.s[p.i] == '"' { // "" is an escaped quote
				b.WriteByte('"')
				p.i++
				continue
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("unterminated string in WKT")
}

// child returns the first child with one of the names.
func (n *node) child(names ...string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		for _, name := range names {
			if k.name == name {
				return k
			}
		}
	}
	return nil
}

// children returns every child with the name.
func (n *node) children(name string) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// str is the i-th value, "" when absent.
func (n *node) str(i int) string {
	if n == nil || i >= len(n.values) {
		return ""
	}
	return n.values[i]
}

// num is the i-th value as a number; ok is false when absent or not a number.
func (n *node) num(i int) (float64, bool) {
	v, err := strconv.ParseFloat(n.str(i), 64)
	return v, err == nil
}

// authority is the EPSG code of an AUTHORITY["EPSG","4326"] or ID["EPSG",4326] child.
func (n *node) authority() int {
	a := n.child("AUTHORITY", "ID")
	if a == nil || !strings.EqualFold(a.str(0), "EPSG") {
		return 0
	}
	code, err := strconv.Atoi(strings.TrimSpace(a.str(1)))
	if err != nil || code <= 0 {
		return 0
	}
	return code
}
