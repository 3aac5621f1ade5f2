package fetch

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
)

// Where the charset of a text body came from (Result.CharsetSource). The
// "-invalid" and "-utf8" forms record that a declaration was overruled by the
// bytes: the web lies about charsets often enough that believing it blindly
// produces mojibake.
const (
	SourceBOM     = "bom"     // byte order mark
	SourceHeader  = "header"  // charset parameter of Content-Type
	SourceMeta    = "meta"    // HTML <meta charset> / http-equiv, first 1024 bytes
	SourceXMLDecl = "xml"     // <?xml ... encoding="..."?>
	SourceSniff   = "sniff"   // undeclared; the bytes are (essentially) UTF-8
	SourceDefault = "default" // undeclared and not UTF-8: windows-1252, the HTML default

	// Declared UTF-8, but the bytes are not UTF-8 (typically Latin-1): decoded
	// as windows-1252 instead. Written as e.g. "header-invalid".
	suffixInvalid = "-invalid"
	// Declared a legacy charset (ISO-8859-1, windows-1252, GBK, Shift_JIS, ...)
	// but the bytes are valid UTF-8 with multibyte sequences: decoded as UTF-8,
	// since real legacy text almost never forms valid multibyte UTF-8 by chance.
	// Written as e.g. "header-utf8".
	suffixUTF8 = "-utf8"
)

// prescanLen is how much of an HTML body the <meta> prescan examines (the
// HTML standard's limit) and how far we look for an XML declaration.
const prescanLen = 1024

// toUTF8 determines the charset of a text body and returns it transcoded to
// valid UTF-8, the canonical WHATWG charset name and where the decision came
// from. The order is BOM > Content-Type charset > <meta> prescan (HTML) or
// XML declaration (XML) > sniffing. Unknown charset labels are skipped over,
// as browsers do. The result is always valid UTF-8 and shares memory with
// body when body already was valid UTF-8 (minus any BOM).
func toUTF8(body []byte, mediaType, headerCharset string) (out []byte, name, source string) {
	if bomName, n := bomCharset(body); bomName != "" {
		return decodeAs(body[n:], bomName), bomName, SourceBOM
	}
	if enc, name := lookupCharset(headerCharset); enc != nil {
		return declared(body, enc, name, SourceHeader)
	}
	head := body[:min(len(body), prescanLen)]
	if isXML(mediaType) {
		if enc, name := lookupCharset(xmlDeclEncoding(head)); enc != nil {
			return declared(body, enc, name, SourceXMLDecl)
		}
	}
	if isHTML(mediaType) {
		if label := prescanMeta(head); label != "" {
			if enc, name := lookupCharset(label); enc != nil {
				// A <meta> can only be read if the document is ASCII-compatible,
				// so a UTF-16 declaration there means UTF-8 (HTML standard).
				switch name {
				case "utf-16le", "utf-16be":
					name = "utf-8"
				case "x-user-defined":
					name = "windows-1252"
				}
				enc, _ = htmlindex.Get(name)
				return declared(body, enc, name, SourceMeta)
			}
		}
	}
	v := scanUTF8(body)
	if v.usable() {
		return v.text(body), "utf-8", SourceSniff
	}
	return decodeAs(body, "windows-1252"), "windows-1252", SourceDefault
}

// declared applies a charset declaration, overruling it when the bytes
// plainly contradict it (see the source suffixes).
func declared(body []byte, enc encoding.Encoding, name, source string) ([]byte, string, string) {
	switch _, singleByte := enc.(*charmap.Charmap); {
	case name == "utf-8":
		if v := scanUTF8(body); v.usable() {
			return v.text(body), name, source
		}
		return decodeAs(body, "windows-1252"), "windows-1252", source + suffixInvalid
	case name != "x-user-defined":
		// Legacy multibyte charsets (GBK, Shift_JIS, EUC-*, Big5) pair high bytes in ways
		// UTF-8 forbids just as often: their text is no more likely to pass for UTF-8 than
		// Latin text. Pages saved and re-encoded as UTF-8 keep a stale <meta charset=gb2312>.
		v := scanUTF8(body)
		if v.invalid == 0 && v.multibyte > 0 {
			return v.text(body), "utf-8", source + suffixUTF8
		}
		if singleByte && v.multibyte == 0 && v.invalid == 0 && v.tail == 0 {
			return body, name, source // pure ASCII reads the same in every Latin charset
		}
	}
	return transcode(body, enc), name, source
}

// utf8Scan summarises how UTF-8-like a byte string is.
type utf8Scan struct {
	multibyte int // well-formed sequences of 2-4 bytes (at least 1 if any, when invalid == 0)
	invalid   int // bytes that start no well-formed sequence
	tail      int // length of an incomplete sequence cut off at the very end
}

// scanUTF8 counts well-formed multibyte sequences and invalid bytes. An
// incomplete sequence at the very end is counted as tail, not as invalid:
// bodies are often cut mid-character by a size limit.
func scanUTF8(b []byte) utf8Scan {
	var s utf8Scan
	if utf8.Valid(b) { // fast path (word-at-a-time over ASCII runs)
		if !isASCII(b) {
			s.multibyte = 1 // "some": callers only compare against zero and invalid
		}
		return s
	}
	i := 0
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(b[i:]) && len(b)-i < utf8.UTFMax {
				s.tail = len(b) - i
				break
			}
			s.invalid++
		} else {
			s.multibyte++
		}
		i += size
	}
	return s
}

// usable reports whether the bytes should be read as UTF-8: well-formed, or
// with more good multibyte sequences than stray bytes (a UTF-8 page with a
// few corrupted bytes is better repaired than re-read as Latin-1).
func (s utf8Scan) usable() bool { return s.invalid == 0 || s.multibyte > s.invalid }

// text returns b as valid UTF-8 under the scan: unchanged if well-formed,
// without the cut-off tail, or with invalid bytes replaced by U+FFFD.
func (s utf8Scan) text(b []byte) []byte {
	b = b[:len(b)-s.tail]
	if s.invalid == 0 {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

func decodeAs(b []byte, name string) []byte {
	enc, _ := htmlindex.Get(name)
	if name == "utf-8" {
		return scanUTF8(b).text(b)
	}
	return transcode(b, enc)
}

// transcode converts b to UTF-8. x/text decoders replace malformed input with
// U+FFFD; the final check guarantees the promise of valid output regardless.
func transcode(b []byte, enc encoding.Encoding) []byte {
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		out = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return out
}

// lookupCharset resolves a charset label the way browsers do (WHATWG labels:
// "latin1" and "us-ascii" mean windows-1252, and so on). Unknown labels and
// the "replacement" encoding (which would discard the whole body) give nil.
func lookupCharset(label string) (encoding.Encoding, string) {
	if label == "" {
		return nil, ""
	}
	enc, err := htmlindex.Get(label)
	if err != nil {
		return nil, ""
	}
	name, err := htmlindex.Name(enc)
	if err != nil || name == "replacement" {
		return nil, ""
	}
	return enc, name
}

func bomCharset(b []byte) (string, int) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return "utf-8", 3
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return "utf-16be", 2
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return "utf-16le", 2
	}
	return "", 0
}

// xmlDeclEncoding returns the encoding pseudo-attribute of an XML declaration
// at the start of b, or "".
func xmlDeclEncoding(b []byte) string {
	if !bytes.HasPrefix(b, []byte("<?xml")) || len(b) < 6 || !isSpace(b[5]) {
		return ""
	}
	end := bytes.Index(b, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := b[5:end]
	i := bytes.Index(decl, []byte("encoding"))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	j := bytes.IndexByte(rest[1:], rest[0])
	if j < 0 {
		return ""
	}
	return string(rest[1 : 1+j])
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ToUTF8 transcodes a body saved without its HTTP header (a page on disk, a test set) to
// UTF-8 exactly as Fetch would had the server declared no charset: byte order mark, then
// the <meta> prescan (HTML) or XML declaration (XML), then UTF-8 sniffing, else
// windows-1252. `sonda extract` and the extraction evaluation read pages through it, so
// that they see the text a crawl would.
func ToUTF8(body []byte, mediaType string) []byte {
	out, _, _ := toUTF8(body, mediaType, "")
	return out
}
