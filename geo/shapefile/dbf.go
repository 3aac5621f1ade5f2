package shapefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

// Field is one column of a .dbf table.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // dBASE type letter: C (text), N and F (number), D (date), L (logical), ...
	Length   int    `json:"length"`
	Decimals int    `json:"decimals,omitempty"`
}

// DBF reads the records of a dBASE III/IV table, as shapefiles use.
type DBF struct {
	Fields   []Field
	Records  int       // record count from the header (deleted records included)
	Updated  time.Time // last update date from the header (zero if invalid)
	Encoding string    // the code page used to decode text, e.g. "windows-1252"

	r       *bufio.Reader
	dec     *encoding.Decoder
	utf8    bool // text is UTF-8: no decoding
	recLen  int
	read    int
	buf     []byte
	offsets []int
}

const maxFields = 2046 // dBASE allows 255; some writers go further, none this far

// OpenDBF reads the header of a .dbf from r. cpg is the content of the shapefile's .cpg
// (its code page), or "" when there is none; then the header's language-driver byte decides,
// and when that says nothing, text that is valid UTF-8 is read as UTF-8 and anything else as
// ISO-8859-1 (GDAL's default).
func OpenDBF(r io.Reader, cpg string) (*DBF, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var h [32]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, errors.New("dbf: file is shorter than its 32-byte header")
	}
	d := &DBF{r: br, Records: int(binary.LittleEndian.Uint32(h[4:]))}
	if y, m, day := int(h[1])+1900, int(h[2]), int(h[3]); m >= 1 && m <= 12 && day >= 1 && day <= 31 {
		d.Updated = time.Date(y, time.Month(m), day, 0, 0, 0, 0, time.UTC)
	}
	headerLen := int(binary.LittleEndian.Uint16(h[8:]))
	d.recLen = int(binary.LittleEndian.Uint16(h[10:]))
	if headerLen < 33 {
		return nil, fmt.Errorf("dbf: header length %d is shorter than the 33 bytes of an empty table", headerLen)
	}
	if d.Records < 0 || d.recLen < 1 {
		return nil, fmt.Errorf("dbf: header says %d records of %d bytes", d.Records, d.recLen)
	}
	rest := make([]byte, headerLen-32)
	if _, err := io.ReadFull(br, rest); err != nil {
		return nil, fmt.Errorf("dbf: file ends inside its %d-byte header", headerLen)
	}
	at := 1 // byte 0 of each record is the deletion flag
	for i := 0; i+32 <= len(rest) && rest[i] != 0x0D; i += 32 {
		if len(d.Fields) == maxFields {
			return nil, fmt.Errorf("dbf: more than %d fields", maxFields)
		}
		fd := rest[i : i+32]
		name := fd[:11]
		if j := bytes.IndexByte(name, 0); j >= 0 {
			name = name[:j]
		}
		f := Field{Name: strings.TrimSpace(string(name)), Type: string(rune(fd[11])), Length: int(fd[16]), Decimals: int(fd[17])}
		if f.Type == "C" && f.Decimals > 0 { // Clipper/FoxPro: long text fields use the decimal byte as the high length byte
			f.Length += f.Decimals << 8
			f.Decimals = 0
		}
		d.Fields = append(d.Fields, f)
		d.offsets = append(d.offsets, at)
		at += f.Length
	}
	if at > d.recLen {
		return nil, fmt.Errorf("dbf: fields need %d bytes per record, the header says records have %d", at, d.recLen)
	}
	d.buf = make([]byte, d.recLen)
	d.setEncoding(cpg, h[29])
	return d, nil
}

// ldid maps dBASE language-driver IDs to code pages.
var ldid = map[byte]string{
	0x01: "IBM437", 0x02: "IBM850", 0x03: "windows-1252", 0x08: "IBM865", 0x09: "IBM437", 0x0A: "IBM850",
	0x0B: "IBM437", 0x0D: "IBM437", 0x0E: "IBM850", 0x0F: "IBM437", 0x10: "IBM850", 0x11: "IBM437",
	0x12: "IBM850", 0x13: "Shift_JIS", 0x14: "IBM850", 0x15: "IBM437", 0x16: "IBM850", 0x17: "IBM865",
	0x18: "IBM437", 0x19: "IBM437", 0x1A: "IBM850", 0x1B: "IBM437", 0x1C: "IBM863", 0x1D: "IBM850",
	0x1F: "IBM852", 0x22: "IBM852", 0x23: "IBM852", 0x24: "IBM860", 0x25: "IBM850", 0x26: "IBM866",
	0x37: "IBM850", 0x40: "IBM852", 0x4D: "GBK", 0x4E: "EUC-KR", 0x4F: "Big5", 0x50: "TIS-620",
	0x57: "ISO-8859-1", 0x58: "windows-1252", 0x59: "windows-1252", 0x64: "IBM852", 0x65: "IBM866",
	0x66: "IBM865", 0x67: "IBM861", 0x6A: "IBM737", 0x6B: "IBM857", 0x6C: "IBM863", 0x78: "Big5",
	0x79: "EUC-KR", 0x7A: "GBK", 0x7B: "Shift_JIS", 0x7C: "TIS-620", 0x7D: "windows-1255",
	0x7E: "windows-1256", 0x86: "IBM737", 0x87: "IBM852", 0x88: "IBM857", 0xC8: "windows-1250",
	0xC9: "windows-1251", 0xCA: "windows-1254", 0xCB: "windows-1253", 0xCC: "windows-1257",
}

// setEncoding picks the decoder: .cpg, then LDID, then "UTF-8 if valid, else Latin-1".
func (d *DBF) setEncoding(cpg string, lang byte) {
	if name, enc := lookupCodePage(cpg); enc != nil || name == "UTF-8" {
		d.Encoding, d.utf8 = name, name == "UTF-8"
		if enc != nil {
			d.dec = enc.NewDecoder()
		}
		return
	}
	if name, ok := ldid[lang]; ok {
		if _, enc := lookupCodePage(name); enc != nil {
			d.Encoding, d.dec = name, enc.NewDecoder()
			return
		}
	}
	d.Encoding = "" // decided per value: UTF-8 when valid, else ISO-8859-1
}

// lookupCodePage understands what .cpg files contain: "UTF-8", "UTF8", "1252", "CP1252",
// "ANSI 1251", "88591", "ISO-8859-1", "windows-1252", "LATIN1", "GBK".
func lookupCodePage(s string) (string, encoding.Encoding) {
	s = strings.ToUpper(strings.TrimSpace(strings.Trim(s, "\ufeff\x00")))
	if s == "" {
		return "", nil
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "ANSI "), "ANSI")
	s = strings.TrimPrefix(s, "CP")
	switch s {
	case "UTF-8", "UTF8", "65001":
		return "UTF-8", nil
	case "88591", "LATIN1", "ISO88591", "8859-1", "28591":
		return "ISO-8859-1", charmap.ISO8859_1
	case "936":
		return "GBK", simplifiedchinese.GBK
	case "932":
		return "Shift_JIS", japanese.ShiftJIS
	case "949":
		return "EUC-KR", korean.EUCKR
	case "950":
		return "Big5", traditionalchinese.Big5
	}
	if n, err := strconv.Atoi(s); err == nil {
		switch {
		case n >= 1250 && n <= 1258:
			s = "windows-" + s
		case n >= 28592 && n <= 28599:
			s = fmt.Sprintf("ISO-8859-%d", n-28590)
		case n >= 88592 && n <= 88599:
			s = fmt.Sprintf("ISO-8859-%d", n-88590)
		default:
			s = "IBM" + s
		}
	}
	enc, err := ianaindex.IANA.Encoding(s)
	if err != nil || enc == nil {
		return "", nil
	}
	if enc == unicode.UTF8 {
		return "UTF-8", nil
	}
	return s, enc // the label as written (IANA's canonical names are "ISO_8859-1:1987" and the like)
}

// Next returns the next live record's values, decoded to UTF-8 and trimmed, one per
// field; deleted records are skipped. It returns io.EOF after the last record.
func (d *DBF) Next() ([]string, error) {
	for d.read < d.Records {
		d.read++
		if _, err := io.ReadFull(d.r, d.buf); err != nil {
			return nil, fmt.Errorf("dbf: record %d of %d: file ends early", d.read, d.Records)
		}
		if d.buf[0] == 0x1A {
			return nil, io.EOF
		}
		if d.buf[0] == '*' {
			continue
		}
		vals := make([]string, len(d.Fields))
		for i, f := range d.Fields {
			raw := d.buf[d.offsets[i] : d.offsets[i]+f.Length]
			vals[i] = d.text(bytes.TrimRight(bytes.TrimLeft(raw, " \x00"), " \x00"))
		}
		return vals, nil
	}
	return nil, io.EOF
}

func (d *DBF) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	switch {
	case ascii, d.utf8 && utf8.Valid(b):
		return string(b)
	case d.dec != nil:
		if s, err := d.dec.Bytes(b); err == nil {
			return string(s)
		}
	case utf8.Valid(b):
		return string(b)
	}
	s, _ := charmap.ISO8859_1.NewDecoder().Bytes(b)
	return string(s)
}
