package fetch

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	xcharset "golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

func latin1(s string) []byte {
	b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

func TestToUTF8(t *testing.T) {
	const text = "Ação e reação: café, pão, coração."
	utf16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(text))
	sjis, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte("日本語のページ"))
	metaLatin1 := append([]byte(`<html><head><meta charset="iso-8859-1"><title>`), latin1(text)...)
	tests := []struct {
		name       string
		body       []byte
		mediaType  string
		header     string
		wantText   string // substring expected in the output
		wantName   string
		wantSource string
	}{
		{"ascii no declaration", []byte("<p>plain</p>"), "text/html", "", "plain", "utf-8", SourceSniff},
		{"utf-8 no declaration", []byte(text), "text/html", "", text, "utf-8", SourceSniff},
		{"latin-1 no declaration", latin1(text), "text/html", "", text, "windows-1252", SourceDefault},
		{"utf-8 BOM beats header", append([]byte("\xEF\xBB\xBF"), text...), "text/html", "iso-8859-1", text, "utf-8", SourceBOM},
		{"utf-16 BOM", utf16le, "text/plain", "", text, "utf-16le", SourceBOM},
		{"header latin-1", latin1(text), "text/html", "ISO-8859-1", text, "windows-1252", SourceHeader},
		{"header shift_jis", sjis, "text/html", "Shift_JIS", "日本語", "shift_jis", SourceHeader},
		{"header beats meta", metaLatin1, "text/html", "windows-1252", text, "windows-1252", SourceHeader},
		{"meta charset", metaLatin1, "text/html", "", text, "windows-1252", SourceMeta},
		{"meta http-equiv", append([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`), latin1(text)...), "text/html", "", text, "windows-1252", SourceMeta},
		{"meta ignored for text/plain", metaLatin1, "text/plain", "", text, "windows-1252", SourceDefault},
		{"meta utf-16 means utf-8", []byte(`<meta charset="utf-16">` + text), "text/html", "", text, "utf-8", SourceMeta},
		{"xml declaration", append([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><a>`), latin1(text)...), "application/rss+xml", "", text, "windows-1252", SourceXMLDecl},
		{"unknown header label falls through to meta", metaLatin1, "text/html", "x-no-such-charset", text, "windows-1252", SourceMeta},
		{"unknown header label falls through to sniff", []byte(text), "text/html", "klingon", text, "utf-8", SourceSniff},
		{"replacement label is ignored", []byte(text), "text/html", "iso-2022-kr", text, "utf-8", SourceSniff},
		// The lies.
		{"header says utf-8, bytes are latin-1", latin1(text), "text/html", "utf-8", text, "windows-1252", SourceHeader + "-invalid"},
		{"meta says utf-8, bytes are latin-1", append([]byte(`<meta charset=utf-8>`), latin1(text)...), "text/html", "", text, "windows-1252", SourceMeta + "-invalid"},
		{"header says latin-1, bytes are utf-8", []byte(text), "text/html", "iso-8859-1", text, "utf-8", SourceHeader + "-utf8"},
		{"meta says windows-1252, bytes are utf-8", []byte(`<meta charset="windows-1252">` + text), "text/html", "", text, "utf-8", SourceMeta + "-utf8"},
		{"meta says gb2312, bytes are utf-8", []byte(`<meta charset="gb2312">中文 ` + text), "text/html", "", "中文 " + text, "utf-8", SourceMeta + "-utf8"},
		{"header says latin-1, ascii body", []byte("plain"), "text/html", "iso-8859-1", "plain", "windows-1252", SourceHeader},
		{"utf-8 with one stray byte is repaired", []byte(text + "\xff" + text), "text/html", "utf-8", "café, pão, coração.\uFFFDAção", "utf-8", SourceHeader},
		{"utf-8 cut mid-character", []byte(text)[:6], "text/html", "utf-8", "Aç", "utf-8", SourceHeader},
		{"undeclared utf-8 cut mid-character", []byte(text)[:6], "text/html", "", "Aç", "utf-8", SourceSniff},
		{"empty", []byte{}, "text/html", "", "", "utf-8", SourceSniff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, name, source := toUTF8(tt.body, tt.mediaType, tt.header)
			if !utf8.Valid(out) {
				t.Fatalf("output is not valid UTF-8: %q", out)
			}
			if name != tt.wantName || source != tt.wantSource {
				t.Errorf("charset %q from %q, want %q from %q", name, source, tt.wantName, tt.wantSource)
			}
			if !strings.Contains(string(out), tt.wantText) {
				t.Errorf("output %q does not contain %q", out, tt.wantText)
			}
			if bytes.HasPrefix(out, []byte("\xEF\xBB\xBF")) {
				t.Errorf("output keeps the BOM")
			}
		})
	}
}

func TestToUTF8SharesValidUTF8(t *testing.T) {
	body := []byte("já é UTF-8")
	out, _, _ := toUTF8(body, "text/html", "utf-8")
	if &out[0] != &body[0] {
		t.Error("valid UTF-8 was copied; it should be returned as is")
	}
}

func TestPrescanMeta(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`<meta charset="iso-8859-2">`, "iso-8859-2"},
		{`<META CHARSET=ISO-8859-2>`, "iso-8859-2"},
		{`<meta charset='koi8-r'/>`, "koi8-r"},
		{`<meta name="x" charset = "latin1">`, "windows-1252"},
		{`<meta http-equiv="content-type" content="text/html; charset=shift_jis">`, "shift_jis"},
		{`<meta content="text/html;charset='euc-jp'" http-equiv="Content-Type">`, "euc-jp"},
		{`<meta content="text/html; charset=euc-kr">`, ""}, // content= without http-equiv
		{`<meta http-equiv="content-type" content="text/html">`, ""},
		{`<meta charset="no-such-charset">`, ""},
		{`<meta charset="no-such" content="text/html; charset=utf-8" http-equiv="content-type">`, ""},
		{`<meta charset="utf-8"><meta charset="latin1">`, "utf-8"},
		{`<!-- <meta charset="latin1"> --><meta charset="utf-8">`, "utf-8"},
		{`<!--><meta charset="latin1">`, "windows-1252"},
		{`<div title='<meta charset="latin1">'><meta charset="utf-8">`, "utf-8"},
		{`<?xml x="<meta charset=latin1>"?>`, ""},
		{`</p><meta charset="big5">`, "big5"},
		{`<metacharset="latin1">`, ""},
		{`<meta charset="latin1"`, ""}, // input ends inside the tag
		{`<meta charset="latin1`, ""},
		{`<meta charset=`, ""},
		{`<meta`, ""},
		{`<!--`, ""},
		{`<`, ""},
		{``, ""},
		{`<meta a b c charset=gbk>`, "gbk"},
		{`<meta charset=gbk charset=big5>`, "gbk"},
		{`<meta ==x charset=gbk>`, "gbk"},
	}
	for _, tt := range tests {
		if got := prescanMeta([]byte(tt.in)); got != tt.want {
			t.Errorf("prescanMeta(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCharsetFromContent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"text/html; charset=utf-8", "utf-8"},
		{"text/html;charset = 'latin1'", "latin1"},
		{`charset="x;y"`, "x;y"},
		{`charset="unterminated`, ""},
		{"charsetx; charset=gbk", "gbk"},
		{"charset=", ""},
		{"text/html", ""},
		{"charset=big5 trailing", "big5"},
	}
	for _, tt := range tests {
		if got := charsetFromContent(tt.in); got != tt.want {
			t.Errorf("charsetFromContent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestXMLDeclEncoding(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<?xml version="1.0" encoding="ISO-8859-1"?>`, "ISO-8859-1"},
		{`<?xml version='1.0' encoding = 'utf-8' ?><rss/>`, "utf-8"},
		{`<?xml version="1.0"?>`, ""},
		{`<?xmlfoo encoding="latin1"?>`, ""},
		{`<?xml encoding="latin1"`, ""},
		{`<?xml encoding=latin1 ?>`, ""},
		{` <?xml encoding="latin1"?>`, ""},
	}
	for _, tt := range tests {
		if got := xmlDeclEncoding([]byte(tt.in)); got != tt.want {
			t.Errorf("xmlDeclEncoding(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzCharset checks that any body with any declared charset comes out as
// valid UTF-8 without panicking, and that the meta prescan agrees with the
// detection it feeds.
func FuzzCharset(f *testing.F) {
	f.Add([]byte(`<meta charset="iso-8859-1">caf\xe9`), "text/html", "")
	f.Add([]byte("caf\xc3\xa9"), "text/html", "iso-8859-1")
	f.Add([]byte("caf\xe9"), "text/plain", "utf-8")
	f.Add([]byte("\xff\xfeh\x00i\x00"), "text/html", "")
	f.Add([]byte(`<?xml version="1.0" encoding="shift_jis"?>`), "application/xml", "")
	f.Add([]byte(`<meta http-equiv=content-type content="charset='gb18030'">`), "text/html", "")
	f.Add([]byte("\x1b$B"), "text/html", "iso-2022-jp")
	f.Fuzz(func(t *testing.T, body []byte, mediaType, header string) {
		out, name, source := toUTF8(body, mediaType, header)
		if !utf8.Valid(out) {
			t.Fatalf("invalid UTF-8 output %q (charset %q from %q)", out, name, source)
		}
		if name == "" || source == "" {
			t.Fatalf("empty charset %q or source %q", name, source)
		}
	})
}

// FuzzPrescanMeta checks the <meta> prescan against the one inside
// golang.org/x/net/html/charset (built on its HTML tokenizer, so an
// independent implementation): whenever either finds a declaration, they
// must agree. DetermineEncoding does not say whether its answer came from a
// <meta> or from its fallback guess, so a guess ("utf-8" or "windows-1252")
// where we found nothing is not a disagreement.
func FuzzPrescanMeta(f *testing.F) {
	f.Add([]byte(`<meta charset="iso-8859-2">`))
	f.Add([]byte(`<meta http-equiv="content-type" content="text/html; charset=shift_jis">`))
	f.Add([]byte(`<!-- x --><meta charset=gbk>`))
	f.Add([]byte(`<div title='<meta charset="koi8-r">'><meta charset="big5">`))
	f.Add([]byte(`<meta content="text/html;charset='euc-jp'" http-equiv="Content-Type">`))
	f.Add([]byte(`<html><head><META HTTP-EQUIV=content-type CONTENT="text/html; charset=iso-8859-7"></head>`))
	f.Add([]byte(`<?xml version="1.0"?><!DOCTYPE html><meta name=a charset = "euc-kr" />`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ours := prescanMeta(b)
		if ours != "" {
			if enc, _ := lookupCharset(ours); enc == nil {
				t.Fatalf("prescan returned unknown charset %q", ours)
			}
		}
		if len(b) > prescanLen || len(b) == 0 || b[0] == 0xEF || b[0] == 0xFE || b[0] == 0xFF {
			return // x/net would look at a BOM or cut the input first
		}
		_, theirs, _ := xcharset.DetermineEncoding(b, "")
		if ours == "" && (theirs == "utf-8" || theirs == "windows-1252") {
			return
		}
		if ours != theirs {
			t.Fatalf("prescanMeta(%q) = %q, x/net/html/charset says %q", b, ours, theirs)
		}
	})
}
