package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeGuards (issue 14 §6): sonda serve refuses requests that name a host it does not
// answer to (DNS rebinding) unless serve.hosts lists it, and a busy port leaves no data
// directory behind.
func TestServeGuards(t *testing.T) {
	t.Parallel()
	_, base, out := startServe(t, t.TempDir(), "SONDA_SERVE_HOSTS=search.example.org", "SONDA_LOG_LEVEL=warn")
	waitFor(t, 20*time.Second, "the server", func() bool { return strings.Contains(out.String(), "press Ctrl-C") })
	get := func(host string) (int, string) {
		req, err := http.NewRequest("GET", base+"/api/stats", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("rebind.attacker.example"); code != http.StatusMisdirectedRequest || !strings.Contains(body, "serve.hosts") {
		t.Errorf("a foreign Host: %d %s", code, body)
	}
	for _, h := range []string{"search.example.org", strings.TrimPrefix(base, "http://"), "localhost"} {
		if code, body := get(h); code != 200 {
			t.Errorf("Host %s: %d %s", h, code, body)
		}
	}

	// A busy port: the error names the address, and the data directory is not created.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "fresh")
	_, stderr, code := run(t, nil, "serve", "--data", data, "--addr", ln.Addr().String())
	if code == 0 || !strings.Contains(stderr, ln.Addr().String()) {
		t.Errorf("serve on a busy port: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(data)
		t.Errorf("serve on a busy port left %s behind (%v, %d entries)", data, err, len(entries))
	}
}
