package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestUnfetchableSeedsFailAtOnce (issue 14 §2): a crawl whose seeds cannot be fetched says
// why as it happens, under the error's own kind, ends without waiting for the retries,
// and exits non-zero; a private address names the flag that permits it.
func TestUnfetchableSeedsFailAtOnce(t *testing.T) {
	// A port nothing listens on: connections are refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	for _, c := range []struct {
		name  string
		args  []string
		kinds []string // error kinds the output must name
		hint  string
	}{
		{"loopback without --allow-private", []string{"--seed", "http://" + closed + "/"}, []string{"blocked-address"}, "--allow-private"},
		{"refused connection", []string{"--allow-private", "--seed", "http://" + closed + "/"}, []string{"refused"}, "connection refused"},
		// --allow-private=LIST opens the guard for those destinations only.
		{"loopback allowed by range", []string{"--allow-private=127.0.0.0/8", "--seed", "http://" + closed + "/"}, []string{"refused"}, "connection refused"},
		{"loopback outside the allowed range", []string{"--allow-private=10.0.0.0/8,wiki.corp.example", "--seed", "http://" + closed + "/"}, []string{"blocked-address"}, "--allow-private"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			data := t.TempDir()
			args := append([]string{"crawl", "--data", data}, c.args...)
			out, stderr, code := run(t, nil, args...)
			took := time.Since(start)
			if code == 0 {
				t.Fatalf("exit 0 for a crawl that fetched nothing\nstdout: %s\nstderr: %s", out, stderr)
			}
			if took > 20*time.Second {
				t.Errorf("took %v: a seed that cannot be fetched must say so at once", took)
			}
			all := out + stderr
			for _, k := range c.kinds {
				if !strings.Contains(all, k) {
					t.Errorf("output does not name the error kind %q:\n%s", k, all)
				}
			}
			if !strings.Contains(all, c.hint) {
				t.Errorf("output does not say %q:\n%s", c.hint, all)
			}
			if strings.Contains(all, "AllowPrivate") {
				t.Errorf("output names the Go field AllowPrivate:\n%s", all)
			}
			if !strings.Contains(stderr, "no request got an answer") {
				t.Errorf("the error does not say nothing could be fetched:\n%s", stderr)
			}
			// sonda status tells the same afterwards: the host waits, and why.
			status, serr, _ := run(t, nil, "status", "--data", data)
			if !strings.Contains(status, "waiting:") || !strings.Contains(status, "robots.txt unreachable") || !strings.Contains(status, c.kinds[0]) {
				t.Errorf("status after the failed crawl does not show the waiting host:\n%s%s", status, serr)
			}
		})
	}
}
