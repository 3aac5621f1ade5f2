package warc

import (
	"bytes"
	"fmt"
	"strings"
)

// Field is one named field: a WARC header line, or a line of an
// application/warc-fields block (warcinfo and metadata records).
type Field struct {
	Name, Value string
}

// Header is a record's named fields in the order they appear. Names are
// compared case-insensitively, as the specification requires; WARC allows a
// few fields (WARC-Concurrent-To) to repeat, so a Header is a list, not a map.
type Header []Field

// Get returns the value of the first field called name, or "" if there is none.
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Values returns the values of every field called name, in order.
func (h Header) Values(name string) []string {
	var vs []string
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			vs = append(vs, f.Value)
		}
	}
	return vs
}

// Set replaces the value of the first field called name, dropping any later
// fields of that name, or appends the field if there is none.
func (h *Header) Set(name, value string) {
	out := (*h)[:0]
	found := false
	for _, f := range *h {
		if strings.EqualFold(f.Name, name) {
			if found {
				continue
			}
			found = true
			f.Value = value
		}
		out = append(out, f)
	}
	if !found {
		out = append(out, Field{name, value})
	}
	*h = out
}

// Add appends a field, keeping any others of the same name.
func (h *Header) Add(name, value string) {
	*h = append(*h, Field{name, value})
}

// Names of the fields this package writes or interprets.
const (
	FieldType          = "WARC-Type"
	FieldRecordID      = "WARC-Record-ID"
	FieldDate          = "WARC-Date"
	FieldContentLength = "Content-Length"
	FieldContentType   = "Content-Type"
	FieldConcurrentTo  = "WARC-Concurrent-To"
	FieldBlockDigest   = "WARC-Block-Digest"
	FieldPayloadDigest = "WARC-Payload-Digest"
	FieldIPAddress     = "WARC-IP-Address"
	FieldRefersTo      = "WARC-Refers-To"
	// WARC 1.1 revisit records may also name the target and date of the
	// record they refer to.
	FieldRefersToTargetURI = "WARC-Refers-To-Target-URI"
	FieldRefersToDate      = "WARC-Refers-To-Date"
	FieldTargetURI         = "WARC-Target-URI"
	FieldTruncated         = "WARC-Truncated"
	FieldWarcinfoID        = "WARC-Warcinfo-ID"
	FieldFilename          = "WARC-Filename"
	FieldProfile           = "WARC-Profile"
	FieldSegmentNumber     = "WARC-Segment-Number"
	FieldIdentifiedType    = "WARC-Identified-Payload-Type"
)

// Record types defined by WARC 1.1.
const (
	TypeWarcinfo     = "warcinfo"
	TypeResponse     = "response"
	TypeResource     = "resource"
	TypeRequest      = "request"
	TypeMetadata     = "metadata"
	TypeRevisit      = "revisit"
	TypeConversion   = "conversion"
	TypeContinuation = "continuation"
)

// Content types of the blocks this package writes.
const (
	ContentTypeHTTPRequest  = "application/http;msgtype=request"
	ContentTypeHTTPResponse = "application/http;msgtype=response"
	ContentTypeWarcFields   = "application/warc-fields"
)

// isToken reports whether s is a non-empty RFC 2616 token, the grammar of
// field names: visible US-ASCII without separators.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// checkField reports why a field cannot be written as one header line, or nil.
// Values may hold any UTF-8 but no line breaks: a CR or LF would let content
// forge fields or end the header early.
func checkField(f Field) error {
	if !isToken(f.Name) {
		return fmt.Errorf("field name %q is not a token", f.Name)
	}
	if strings.ContainsAny(f.Value, "\r\n") {
		return fmt.Errorf("field %s: value contains a line break", f.Name)
	}
	return nil
}

// cleanFieldValue makes arbitrary text (a page's outlink, a charset label)
// safe as a warc-fields value: control characters, line breaks included,
// become spaces, which is what an unfolding reader would see anyway.
func cleanFieldValue(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c == 0x7f {
			b[i] = ' '
		}
	}
	return string(b)
}

// appendFields writes fields as "Name: Value\r\n" lines.
func appendFields(buf *bytes.Buffer, fields []Field) {
	for _, f := range fields {
		buf.WriteString(f.Name)
		buf.WriteString(": ")
		buf.WriteString(f.Value)
		buf.WriteString("\r\n")
	}
}

// ParseFields parses an application/warc-fields block (the body of warcinfo
// and metadata records): "name: value" lines, continuation lines starting
// with a space or tab folded into the previous value. Blank lines are
// skipped; a line without a colon is an error naming its line number.
func ParseFields(block []byte) (Header, error) {
	h, err := parseFields(block)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	return h, nil
}

func parseFields(block []byte) (Header, error) {
	var h Header
	for n := 1; len(block) > 0; n++ {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(h) == 0 {
				return nil, fmt.Errorf("fields line %d: continuation line before any field", n)
			}
			last := &h[len(h)-1]
			last.Value = strings.TrimSpace(last.Value + " " + string(bytes.TrimSpace(line)))
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return nil, fmt.Errorf("fields line %d: no colon in %q", n, truncateForError(line))
		}
		h = append(h, Field{string(bytes.TrimSpace(name)), string(bytes.TrimSpace(value))})
	}
	return h, nil
}

// truncateForError keeps error messages short when input is long or binary.
func truncateForError(b []byte) string {
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
