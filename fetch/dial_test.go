package fetch

import (
	"net/netip"
	"strings"
	"testing"
)

func TestBlockedReason(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" = allowed
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"2606:4700:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "link-local"}, // cloud metadata endpoint
		{"fe80::1", "link-local"},
		{"0.0.0.0", "\"this network\""},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.128.0.1", ""},
		{"fd00::1", "unique local"},
		{"fc00::1", "unique local"},
		{"255.255.255.255", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::7f00:1", "loopback (embedded in IPv6)"},
		{"64:ff9b::808:808", ""},
		{"2002:a00:1::", "private (embedded in 6to4)"},
		{"2002:808:808::", ""},
		{"::a00:1", "private (embedded in IPv6)"},
	}
	for _, tt := range tests {
		if got := blockedReason(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("blockedReason(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestGuardControl(t *testing.T) {
	if err := guardControl("tcp4", "8.8.8.8:80", nil); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	err := guardControl("tcp4", "127.0.0.1:8080", nil)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("loopback: error %v should name the address and the reason", err)
	}
	if err := guardControl("tcp", "nonsense", nil); err == nil {
		t.Error("unparsable address accepted")
	}
}

func TestParseMapping(t *testing.T) {
	tests := []struct {
		in      string
		want    Mapping
		wantErr string
	}{
		{"*.test=127.0.0.1:8080", Mapping{"*.test", "127.0.0.1:8080"}, ""},
		{"www.a.test=127.0.0.2", Mapping{"www.a.test", "127.0.0.2"}, ""},
		{"*=[::1]:9000", Mapping{"*", "[::1]:9000"}, ""},
		{"a.test=::1", Mapping{"a.test", "::1"}, ""},
		{" a.test = localhost:81 ", Mapping{"a.test", "localhost:81"}, ""},
		{"a.test", Mapping{}, "want PATTERN=ADDR"},
		{"=127.0.0.1", Mapping{}, "empty host pattern"},
		{"a.test=", Mapping{}, "empty address"},
		{"a.*.test=127.0.0.1", Mapping{}, "wildcard"},
		{"*.=127.0.0.1", Mapping{}, "wildcard"},
		{"*=127.0.0.1:0", Mapping{}, "port must be 1-65535"},
		{"*=127.0.0.1:http", Mapping{}, "port must be 1-65535"},
		{"a.test:80=127.0.0.1", Mapping{}, "bare host name"},
		{"a.test=1:2:3", Mapping{}, "too many colons"},
	}
	for _, tt := range tests {
		got, err := ParseMapping(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMapping(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMapping(%q): %v", tt.in, err)
			continue
		}
		if tt.want != (Mapping{}) && got != tt.want {
			t.Errorf("ParseMapping(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestMappingMatchAndTarget(t *testing.T) {
	tests := []struct {
		m          Mapping
		host, port string
		match      bool
		target     string
	}{
		{Mapping{"*.test", "127.0.0.1:8080"}, "a.test", "80", true, "127.0.0.1:8080"},
		{Mapping{"*.test", "127.0.0.1:8080"}, "x.A.TEST", "443", true, "127.0.0.1:8080"},
		{Mapping{"*.test", "127.0.0.1:8080"}, "test", "80", false, ""},
		{Mapping{"*.test", "127.0.0.1:8080"}, "atest", "80", false, ""},
		{Mapping{"www.a.test", "127.0.0.2"}, "WWW.a.test", "8443", true, "127.0.0.2:8443"},
		{Mapping{"www.a.test", "127.0.0.2"}, "a.test", "80", false, ""},
		{Mapping{"*", "::1"}, "anything", "80", true, "[::1]:80"},
		{Mapping{"*", "[::1]"}, "anything", "81", true, "[::1]:81"},
	}
	for _, tt := range tests {
		if got := tt.m.matches(tt.host); got != tt.match {
			t.Errorf("%+v.matches(%q) = %v", tt.m, tt.host, got)
		}
		if tt.match {
			if got := tt.m.target(tt.port); got != tt.target {
				t.Errorf("%+v.target(%q) = %q, want %q", tt.m, tt.port, got, tt.target)
			}
		}
	}
}
