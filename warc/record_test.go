package warc

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestVerifyDigests(t *testing.T) {
	block := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello world")
	payload := []byte("hello world")
	sha1Hex := func(b []byte) string { s := sha1.Sum(b); return hex.EncodeToString(s[:]) }
	sha256Hex := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	resp := func(fields ...Field) *Record {
		h := Header{{FieldType, TypeResponse}, {FieldContentType, "application/http; msgtype=response"}}
		return &Record{Header: append(h, fields...), Content: block}
	}
	for _, tc := range []struct {
		name     string
		rec      *Record
		want     string // "" for success
		mismatch bool
	}{
		{"both sha1 base32", resp(Field{FieldBlockDigest, sha1Digest(block)}, Field{FieldPayloadDigest, sha1Digest(payload)}), "", false},
		{"none", resp(), "", false},
		{"sha1 base16, SHA-1 label", resp(Field{FieldBlockDigest, "SHA-1:" + sha1Hex(block)}), "", false},
		{"sha256 base16", resp(Field{FieldPayloadDigest, "sha256:" + sha256Hex(payload)}), "", false},
		{"lowercase base32", resp(Field{FieldBlockDigest, strings.ToLower(sha1Digest(block))}), "", false},
		{"bad block", resp(Field{FieldBlockDigest, sha1Digest(payload)}), "block: digest mismatch", true},
		{"bad payload", resp(Field{FieldPayloadDigest, sha1Digest(block)}), "payload: digest mismatch", true},
		{"unknown algorithm", resp(Field{FieldBlockDigest, "crc32:ABCD"}), `algorithm "crc32" is not supported`, false},
		{"no label", resp(Field{FieldBlockDigest, "ABCD"}), "no algorithm label", false},
		{"wrong length", resp(Field{FieldBlockDigest, "sha1:ABCD"}), "4 characters", false},
		{"bad base32", resp(Field{FieldBlockDigest, "sha1:" + strings.Repeat("1", 32)}), "illegal base32", false},
		{"revisit payload not checked", &Record{Header: Header{{FieldType, TypeRevisit}, {FieldPayloadDigest, "sha1:AIKLJM2V2EOKR4WOIWUWRQTEMUN57P4D"}}, Content: block}, "", false},
		{"payload digest without payload", &Record{Header: Header{{FieldType, TypeMetadata}, {FieldPayloadDigest, sha1Digest(nil)}}}, "defines no payload", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyDigests(tc.rec)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if errors.Is(err, ErrDigestMismatch) != tc.mismatch {
				t.Errorf("errors.Is(ErrDigestMismatch) = %v", !tc.mismatch)
			}
		})
	}
}

func TestPayload(t *testing.T) {
	for _, tc := range []struct {
		typ, contentType, block string
		want                    any // string, or nil for no payload
	}{
		{TypeResponse, ContentTypeHTTPResponse, "HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\r\n\r\nmore", "body\r\n\r\nmore"},
		{TypeResponse, "Application/HTTP ; msgtype=response", "HTTP/1.0 200 OK\nA: b\n\nbody", "body"},
		{TypeRequest, ContentTypeHTTPRequest, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", ""},
		{TypeResponse, ContentTypeHTTPResponse, "HTTP/1.1 200 OK\r\nno end", ""},
		{TypeResponse, "text/dns", "whatever", nil},
		{TypeResource, "image/png", "PNG", "PNG"},
		{TypeWarcinfo, ContentTypeWarcFields, "a: b", nil},
		{TypeMetadata, ContentTypeWarcFields, "a: b", nil},
		{TypeRevisit, ContentTypeHTTPResponse, "HTTP/1.1 200 OK\r\n\r\n", nil},
	} {
		rec := &Record{Header: Header{{FieldType, tc.typ}, {FieldContentType, tc.contentType}}, Content: []byte(tc.block)}
		got := rec.Payload()
		if tc.want == nil {
			if got != nil {
				t.Errorf("%s %s: payload %q, want none", tc.typ, tc.contentType, got)
			}
		} else if got == nil || string(got) != tc.want.(string) {
			t.Errorf("%s %q: payload %q, want %q", tc.typ, tc.block, got, tc.want)
		}
	}
}

func TestHeader(t *testing.T) {
	var h Header
	h.Add("WARC-Concurrent-To", "<a>")
	h.Add("warc-concurrent-to", "<b>")
	h.Set("Content-Length", "1")
	if got := h.Values("WARC-CONCURRENT-TO"); fmt.Sprint(got) != "[<a> <b>]" {
		t.Errorf("Values = %v", got)
	}
	h.Set("WARC-Concurrent-To", "<c>")
	if got := fmt.Sprint(h); got != "[{WARC-Concurrent-To <c>} {Content-Length 1}]" {
		t.Errorf("after Set: %v", got)
	}
	if h.Get("content-length") != "1" || h.Get("missing") != "" {
		t.Errorf("Get failed on %v", h)
	}
}

func TestParseFields(t *testing.T) {
	h, err := ParseFields([]byte("software: x/1\r\n\r\nhttp-header-user-agent:\r\n Mozilla/5.0\r\n  (compatible)\nempty:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(h); got != "[{software x/1} {http-header-user-agent Mozilla/5.0 (compatible)} {empty }]" {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{" leading continuation\r\n", "a: b\r\nno colon here\r\n"} {
		if _, err := ParseFields([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "warc: fields line") {
			t.Errorf("ParseFields(%q) error %v", bad, err)
		}
	}
}

func TestDates(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05Z"},
		{time.Date(2024, 1, 2, 3, 4, 5, 120_000_000, time.FixedZone("X", 3600)), "2024-01-02T02:04:05.120000Z"},
		{time.Date(2024, 1, 2, 3, 4, 5, 999, time.UTC), "2024-01-02T03:04:05Z"}, // below a microsecond
	} {
		got := formatDate(tc.t)
		if got != tc.want {
			t.Errorf("formatDate(%v) = %q, want %q", tc.t, got, tc.want)
		}
		back, err := ParseDate(got)
		if err != nil || !back.Equal(tc.t.Truncate(time.Microsecond)) {
			t.Errorf("ParseDate(%q) = %v, %v", got, back, err)
		}
	}
	for in, want := range map[string]string{
		"2024":                           "2024-01-01T00:00:00Z",
		"2024-03":                        "2024-03-01T00:00:00Z",
		"2024-03-04":                     "2024-03-04T00:00:00Z",
		"2024-03-04T05:06Z":              "2024-03-04T05:06:00Z",
		"2024-03-04T05:06:07.123456789Z": "2024-03-04T05:06:07.123456789Z",
	} {
		got, err := ParseDate(in)
		if err != nil || got.Format(time.RFC3339Nano) != want {
			t.Errorf("ParseDate(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Error("ParseDate accepted nonsense")
	}
}

func TestNewRecordIDUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewRecordID()
		if seen[id] || len(id) != len("<urn:uuid:00000000-0000-0000-0000-000000000000>") {
			t.Fatalf("bad or repeated ID %q", id)
		}
		seen[id] = true
	}
}
