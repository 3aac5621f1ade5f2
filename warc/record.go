package warc

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"
)

// Record is one WARC record: its named fields and its content block.
type Record struct {
	Header Header
	// Content is the record block, Content-Length bytes.
	Content []byte
	// Offset is where the record starts in its file: the start of its gzip
	// member for compressed files, of its version line for plain ones. It is
	// -1 for a record that shares a gzip member with an earlier record, since
	// such a record cannot be read from an offset alone.
	Offset int64
}

// Type returns the record's WARC-Type.
func (r *Record) Type() string { return r.Header.Get(FieldType) }

// Payload returns the part of the block that WARC-Payload-Digest covers: the
// entity body after the HTTP header block for application/http records, the
// whole block for resource, conversion and continuation records, and nil for
// records that have no payload (warcinfo, metadata, revisit) or whose block
// this package cannot interpret.
func (r *Record) Payload() []byte {
	switch strings.ToLower(r.Type()) {
	case TypeResponse, TypeRequest:
		if isHTTPContentType(r.Header.Get(FieldContentType)) {
			return httpBody(r.Content)
		}
		return nil
	case TypeResource, TypeConversion, TypeContinuation:
		return r.Content
	}
	return nil
}

func isHTTPContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/http")
}

// httpBody returns what follows the header block of an HTTP message: the
// bytes after the first empty line (CRLF CRLF, or a bare LF LF from sloppy
// servers). A message with no empty line is all header and has no body.
func httpBody(msg []byte) []byte {
	crlf := bytes.Index(msg, []byte("\r\n\r\n"))
	lf := bytes.Index(msg, []byte("\n\n"))
	switch {
	case crlf >= 0 && (lf < 0 || crlf < lf):
		return msg[crlf+4:]
	case lf >= 0:
		return msg[lf+2:]
	}
	return msg[len(msg):]
}

// ErrDigestMismatch is wrapped by VerifyDigests when a digest field does not
// match the content.
var ErrDigestMismatch = errors.New("digest mismatch")

// VerifyDigests checks the record's WARC-Block-Digest against its block and
// its WARC-Payload-Digest against its payload. Absent fields are not checked,
// nor is the payload digest of a revisit record, which by definition
// describes content stored elsewhere. Algorithms md5, sha1, sha256 and sha512
// are understood, in base32 or base16, with the labels' usual spellings
// ("sha1", "SHA-1").
func VerifyDigests(rec *Record) error {
	id := rec.Header.Get(FieldRecordID)
	if v := rec.Header.Get(FieldBlockDigest); v != "" {
		if err := checkDigest(v, rec.Content); err != nil {
			return fmt.Errorf("warc: record %s: block: %w", id, err)
		}
	}
	if v := rec.Header.Get(FieldPayloadDigest); v != "" && !strings.EqualFold(rec.Type(), TypeRevisit) {
		payload := rec.Payload()
		if payload == nil {
			return fmt.Errorf("warc: record %s: has %s but its type %q or content type %q defines no payload",
				id, FieldPayloadDigest, rec.Type(), rec.Header.Get(FieldContentType))
		}
		if err := checkDigest(v, payload); err != nil {
			return fmt.Errorf("warc: record %s: payload: %w", id, err)
		}
	}
	return nil
}

func checkDigest(labelled string, data []byte) error {
	algo, value, ok := strings.Cut(strings.TrimSpace(labelled), ":")
	if !ok {
		return fmt.Errorf("digest %q has no algorithm label", labelled)
	}
	var h hash.Hash
	switch strings.ToLower(strings.ReplaceAll(algo, "-", "")) {
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return fmt.Errorf("digest algorithm %q is not supported", algo)
	}
	h.Write(data)
	sum := h.Sum(nil)
	want, err := decodeDigest(value, len(sum))
	if err != nil {
		return fmt.Errorf("digest %q: %w", labelled, err)
	}
	if !bytes.Equal(sum, want) {
		return fmt.Errorf("%w: field says %s, content hashes to %s", ErrDigestMismatch, labelled, encodeDigest(algo, sum))
	}
	return nil
}

// decodeDigest decodes a base32 or base16 digest of size bytes, telling the
// two apart by length; an MD5 is 32 characters in both, and base32 is chosen
// only when it carries its '=' padding, as the community recommendation says.
func decodeDigest(v string, size int) ([]byte, error) {
	v = strings.TrimSpace(v)
	b32 := base32.StdEncoding.EncodedLen(size)
	b32NoPad := base32.StdEncoding.WithPadding(base32.NoPadding).EncodedLen(size)
	switch {
	case len(v) == hex.EncodedLen(size) && !strings.Contains(v, "="):
		return hex.DecodeString(v)
	case len(v) == b32:
		return base32.StdEncoding.DecodeString(strings.ToUpper(v))
	case len(v) == b32NoPad:
		return base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(v))
	}
	return nil, fmt.Errorf("value has %d characters, want a base16 or base32 digest of %d bytes", len(v), size)
}

func encodeDigest(algo string, sum []byte) string {
	return algo + ":" + base32.StdEncoding.EncodeToString(sum)
}

// sha1Digest returns the labelled SHA-1 base32 digest of the parts taken
// together, the form WARC tools conventionally write ("sha1:" + 32 chars).
func sha1Digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// NewRecordID returns a fresh WARC-Record-ID: a random (version 4) UUID URN
// in angle brackets, as WARC 1.1 writes identifiers. Callers need it only to
// link records they write with WriteRecord (WARC-Refers-To and the like).
func NewRecordID() string {
	var u [16]byte
	// crypto/rand.Read never fails on supported platforms (Go 1.24+ crashes
	// the program rather than return an error).
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var buf [47]byte
	n := copy(buf[:], "<urn:uuid:")
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[n] = '-'
			n++
		}
		const digits = "0123456789abcdef"
		buf[n], buf[n+1] = digits[b>>4], digits[b&0xf]
		n += 2
	}
	buf[n] = '>'
	return string(buf[:n+1])
}

// formatDate renders a WARC-Date: UTC, to the second, with a microsecond
// fraction when the time has one (WARC 1.1 allows 1 to 9 fraction digits;
// microseconds is what replay tools commonly parse).
func formatDate(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// ParseDate parses a WARC-Date in any of the W3C-DTF granularities WARC 1.1
// allows, from a year alone to nanoseconds.
func ParseDate(s string) (time.Time, error) {
	for _, layout := range []string{
		time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("warc: date %q is not a W3C-DTF timestamp", s)
}
