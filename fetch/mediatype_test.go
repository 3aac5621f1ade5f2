package fetch

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseContentType(t *testing.T) {
	tests := []struct{ in, mt, cs string }{
		{"text/html", "text/html", ""},
		{"Text/HTML; Charset=ISO-8859-1", "text/html", "ISO-8859-1"},
		{`text/html; charset="utf-8"`, "text/html", "utf-8"},
		{"text/html; foo=bar; charset=utf-8", "text/html", "utf-8"},
		{"text/html; charset=utf-8; charset=latin1", "text/html", "utf-8"},
		{"text/html;;; charset = 'x' ", "text/html", "x"},
		{"text/html; broken=\"", "text/html", ""},
		{"html", "", ""},
		{"", "", ""},
		{"text/", "", ""},
		{"/html", "", ""},
		{"text/html, text/plain", "", ""},
	}
	for _, tt := range tests {
		mt, cs := parseContentType(tt.in)
		if mt != tt.mt || cs != tt.cs {
			t.Errorf("parseContentType(%q) = %q, %q; want %q, %q", tt.in, mt, cs, tt.mt, tt.cs)
		}
	}
}

func TestAcceptsType(t *testing.T) {
	html := []string{"text/html", "application/xhtml+xml"}
	tests := []struct {
		patterns []string
		mt       string
		want     bool
	}{
		{nil, "image/png", true},
		{html, "text/html", true},
		{html, "application/xhtml+xml", true},
		{html, "text/plain", false},
		{html, "", false},
		{[]string{"text/*"}, "text/plain", true},
		{[]string{"text/*"}, "textual/plain", false},
		{[]string{"text/*"}, "application/pdf", false},
		{[]string{"*/*"}, "application/pdf", true},
	}
	for _, tt := range tests {
		if got := acceptsType(tt.patterns, tt.mt); got != tt.want {
			t.Errorf("acceptsType(%q, %q) = %v", tt.patterns, tt.mt, got)
		}
	}
}

func TestValidateAcceptType(t *testing.T) {
	for _, ok := range []string{"text/html", "text/*", "*/*", "application/rss+xml"} {
		if err := validateAcceptType(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "text", "text/", "*/html", "te*t/html", "text/h*", "text/html; q=1", "text/html,text/plain"} {
		if err := validateAcceptType(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSniff(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<!DOCTYPE html><html><body>x", "text/html"},
		{"  <html>", "text/html"},
		{"%PDF-1.4", "application/pdf"},
		{"\x89PNG\r\n\x1a\n", "image/png"},
		{"just words", "text/plain"},
		{"\x00\x01\x02\x03", "application/octet-stream"},
	}
	for _, tt := range tests {
		if got := sniff([]byte(tt.in)); got != tt.want {
			t.Errorf("sniff(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"120", 2 * time.Minute},
		{" 0 ", 0},
		{"Sat, 01 Mar 2025 12:05:00 GMT", 5 * time.Minute},
		{"Saturday, 01-Mar-25 12:00:30 GMT", 30 * time.Second},
		{"Sat Mar  1 12:01:00 2025", time.Minute},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0}, // in the past
		{"-5", 0},
		{"1.5", 0},
		{"soon", 0},
		{"", 0},
		{"99999999999999999999999", math.MaxInt64},
		{"9999999999999", math.MaxInt64},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"zero value", Options{}, ""},
		{"negative timeout", Options{BodyTimeout: -time.Second}, "BodyTimeout -1s is negative"},
		{"negative size", Options{MaxBodyBytes: -1}, "MaxBodyBytes -1 is negative"},
		{"negative ratio", Options{MaxDecompressionRatio: -1}, "MaxDecompressionRatio -1 is negative"},
		{"bad accept type", Options{AcceptTypes: []string{"html"}}, `accept type "html"`},
		{"header injection", Options{UserAgent: "x\r\nEvil: 1"}, "UserAgent"},
		{"bad mapping", Options{Resolve: []Mapping{{Host: "a.test", Addr: ""}}}, "empty address"},
	}
	for _, tt := range tests {
		f, err := New(tt.opts)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
				continue
			}
			if f.opts.MaxBodyBytes != DefaultMaxBodyBytes || f.opts.BodyTimeout != DefaultBodyTimeout ||
				!strings.HasPrefix(f.opts.UserAgent, "sonda/") || !strings.Contains(f.opts.UserAgent, "+https://") {
				t.Errorf("%s: defaults not applied: %+v", tt.name, f.opts)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}
