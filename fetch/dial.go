package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Mapping sends connections for matching host names to a fixed address, like
// curl's --resolve. The URL, Host header and TLS server name are unchanged;
// only the dialed address differs. The SSRF guard still applies to Addr.
type Mapping struct {
	// Host is an exact host name ("www.a.test"), a wildcard for every
	// subdomain ("*.test" matches "a.test" and "x.a.test" but not "test"),
	// or "*" for every host. Matching ignores case.
	Host string
	// Addr is "host:port" to dial instead, or just "host" to keep the URL's
	// port. The host may be an IP address or a name (resolved normally).
	Addr string
}

// ParseMapping parses "PATTERN=ADDR", e.g. "*.test=127.0.0.1:8080".
func ParseMapping(s string) (Mapping, error) {
	pattern, addr, ok := strings.Cut(s, "=")
	if !ok {
		return Mapping{}, fmt.Errorf("fetch: resolve mapping %q: want PATTERN=ADDR", s)
	}
	m := Mapping{Host: strings.TrimSpace(pattern), Addr: strings.TrimSpace(addr)}
	if err := m.validate(); err != nil {
		return Mapping{}, err
	}
	return m, nil
}

func (m Mapping) validate() error {
	h := strings.ToLower(m.Host)
	bad := func(why string) error {
		return fmt.Errorf("fetch: resolve mapping %q=%q: %s", m.Host, m.Addr, why)
	}
	switch {
	case h == "":
		return bad("empty host pattern")
	case h == "*":
	case strings.HasPrefix(h, "*."):
		if strings.Contains(h[2:], "*") || len(h) == 2 {
			return bad("a wildcard may only be a leading \"*.\" followed by a domain")
		}
	case strings.Contains(h, "*"):
		return bad("a wildcard may only be a leading \"*.\" followed by a domain")
	}
	if strings.ContainsAny(h, " /:@") {
		return bad("host pattern must be a bare host name")
	}
	if m.Addr == "" {
		return bad("empty address")
	}
	if host, port, err := net.SplitHostPort(m.Addr); err == nil {
		if host == "" {
			return bad("empty host in address")
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("port must be 1-65535")
		}
	} else if strings.Contains(strings.Trim(m.Addr, "[]"), ":") && net.ParseIP(strings.Trim(m.Addr, "[]")) == nil {
		return bad(err.Error())
	}
	return nil
}

func (m Mapping) matches(host string) bool {
	p := m.Host
	switch {
	case p == "*":
		return true
	case strings.HasPrefix(p, "*."):
		suffix := p[1:] // ".test"
		return len(host) > len(suffix) && strings.EqualFold(host[len(host)-len(suffix):], suffix)
	default:
		return strings.EqualFold(host, p)
	}
}

// target is the address to dial for a mapped host whose URL port is port.
func (m Mapping) target(port string) string {
	if _, _, err := net.SplitHostPort(m.Addr); err == nil {
		return m.Addr
	}
	return net.JoinHostPort(strings.Trim(m.Addr, "[]"), port)
}

// blockedPrefixes are the address ranges a crawler must not reach unless
// AllowPrivate is set: anything that is not a public unicast destination.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("fc00::/7"), "unique local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	v4Compatible = netip.MustParsePrefix("::/96")
)

// blockedReason returns why addr may not be dialed without AllowPrivate, or
// "" if it is a public address. IPv6 forms that embed an IPv4 address
// (mapped, compatible, NAT64, 6to4) are judged by the embedded address, so
// "::ffff:127.0.0.1" or "64:ff9b::a00:1" cannot sneak past the IPv4 rules.
func blockedReason(addr netip.Addr) string {
	addr = addr.Unmap()
	if addr.Is6() && !addr.Is4In6() {
		b := addr.As16()
		switch {
		case nat64Prefix.Contains(addr), v4Compatible.Contains(addr) && addr != netip.IPv6Unspecified() && addr != netip.IPv6Loopback():
			if r := blockedReason(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
				return r + " (embedded in IPv6)"
			}
		case sixToFour.Contains(addr):
			if r := blockedReason(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
				return r + " (embedded in 6to4)"
			}
		}
	}
	for _, p := range blockedPrefixes {
		if p.prefix.Contains(addr) {
			return p.what
		}
	}
	return ""
}

// BlockedAddressError is the cause inside a KindBlockedAddress error.
type BlockedAddressError struct {
	Addr   netip.Addr
	Reason string // e.g. "loopback", "private"
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: %s address (to crawl it, run sonda crawl with --allow-private, or set fetch.allow-private in sonda.yaml)", e.Addr, e.Reason)
}

// guardControl runs after the socket is created and before connect(2), with
// the IP actually being dialed: checking here rather than after DNS means a
// name that resolves (or re-resolves, DNS rebinding) to a private address is
// refused no matter how it was obtained.
func guardControl(_, address string, _ syscall.RawConn) error { return guard(nil)("", address, nil) }

// guard is guardControl letting the addresses in allowed through.
func guard(allowed []netip.Prefix) func(string, string, syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("refusing to connect to unparsable address %q", address)
		}
		a := ap.Addr().Unmap()
		for _, p := range allowed {
			if p.Contains(a) {
				return nil
			}
		}
		if r := blockedReason(ap.Addr()); r != "" {
			return &BlockedAddressError{Addr: a, Reason: r}
		}
		return nil
	}
}

// parseAllowPrivateTo splits Options.AllowPrivateTo into address ranges and host patterns.
func parseAllowPrivateTo(items []string) (nets []netip.Prefix, hosts []Mapping, err error) {
	for _, it := range items {
		it = strings.TrimSpace(it)
		if p, err := netip.ParsePrefix(it); err == nil {
			nets = append(nets, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(it, "[]")); err == nil {
			nets = append(nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		m := Mapping{Host: it, Addr: "0.0.0.0"} // only its host pattern is used
		if it == "*" || m.validate() != nil {
			return nil, nil, fmt.Errorf("fetch: allow-private: %q is not a CIDR range, an IP address or a host name (*.corp.example for subdomains)", it)
		}
		hosts = append(hosts, m)
	}
	return nets, hosts, nil
}

// connTiming is measured once when a connection is opened and travels with
// the connection, because net/http may hand a connection dialed for one
// request to another.
type connTiming struct {
	dns, connect, tls time.Duration
}

// conn wraps every connection the Fetcher opens so that it can carry its
// dial timing and record the exact request bytes written on it.
type conn struct {
	net.Conn
	timing connTiming

	mu      sync.Mutex
	capture *[]byte      // request bytes go here while a request is being written
	guard   func() error // asked before each write of the request (WithSendGuard)
}

// maxCapture bounds the recorded request; a GET head never comes near it.
const maxCapture = 64 << 10

// Write records p before writing it: once the bytes are out, the server may
// answer and the round trip end (stopping the capture) before Write returns.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	guard := c.guard
	c.mu.Unlock()
	if guard != nil {
		// As late as a check can be: nothing of the request reaches the server once the
		// guard refuses, even if this process was stopped since its caller last checked.
		if err := guard(); err != nil {
			return 0, &Error{Kind: KindCanceled, Err: err}
		}
	}
	c.mu.Lock()
	dst := c.capture
	before := 0
	if dst != nil {
		before = len(*dst)
		if before+len(p) <= maxCapture {
			*dst = append(*dst, p...)
		}
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) && dst != nil {
		c.mu.Lock()
		if c.capture == dst && len(*dst) > before+n {
			*dst = (*dst)[:before+n] // keep only what was really sent
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *conn) startCapture(dst *[]byte, guard func() error) {
	c.mu.Lock()
	*dst = (*dst)[:0]
	c.capture, c.guard = dst, guard
	c.mu.Unlock()
}

func (c *conn) stopCapture() {
	c.mu.Lock()
	c.capture, c.guard = nil, nil
	c.mu.Unlock()
}

// dialer opens TCP (and TLS) connections with the SSRF guard, Resolve
// mappings and the connect and TLS timeouts.
type dialer struct {
	mappings       []Mapping
	connectTimeout time.Duration
	tlsTimeout     time.Duration
	tlsConfig      *tls.Config
	// dialTCP is net.Dialer.DialContext; tests replace it to simulate a
	// connect that never completes.
	dialTCP func(ctx context.Context, network, addr string) (net.Conn, error)
	// openHosts are the host names AllowPrivateTo lets through; dialOpen dials them
	// without the guard.
	openHosts []Mapping
	dialOpen  func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newDialer(o *Options) (*dialer, error) {
	nd := &net.Dialer{KeepAlive: 30 * time.Second}
	nets, hosts, err := parseAllowPrivateTo(o.AllowPrivateTo)
	if err != nil {
		return nil, err
	}
	if !o.AllowPrivate {
		nd.Control = guard(nets)
	}
	cfg := &tls.Config{}
	if o.TLSConfig != nil {
		cfg = o.TLSConfig.Clone()
	}
	// The fetcher speaks HTTP/1.1 only (see the package comment).
	cfg.NextProtos = []string{"http/1.1"}
	return &dialer{
		mappings:       o.Resolve,
		connectTimeout: o.ConnectTimeout,
		tlsTimeout:     o.TLSTimeout,
		tlsConfig:      cfg,
		dialTCP:        nd.DialContext,
		openHosts:      hosts,
		dialOpen:       (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
	}, nil
}

func (d *dialer) dialPlain(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.dial(ctx, network, addr, false)
}

func (d *dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.dial(ctx, network, addr, true)
}

// dial returns a *conn or an *Error whose Kind already says what failed; the
// URL is filled in by the caller.
func (d *dialer) dial(ctx context.Context, network, addr string, useTLS bool) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, Err: err}
	}
	target := addr
	for _, m := range d.mappings {
		if m.matches(host) {
			target = m.target(port)
			break
		}
	}

	var tm connTiming
	var dnsStart time.Time
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, d.connectTimeout)
	cctx = httptrace.WithClientTrace(cctx, &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { dnsStart = time.Now() },
		DNSDone:  func(httptrace.DNSDoneInfo) { tm.dns = time.Since(dnsStart) },
	})
	dialTCP := d.dialTCP
	for _, m := range d.openHosts {
		if m.matches(host) {
			dialTCP = d.dialOpen // a name the user allowed, wherever it points
			break
		}
	}
	raw, err := dialTCP(cctx, network, target)
	timedOut := cctx.Err() == context.DeadlineExceeded
	cancel()
	if err != nil {
		return nil, &Error{Kind: dialErrorKind(err, timedOut), Err: err}
	}
	tm.connect = time.Since(start) - tm.dns
	if !useTLS {
		return &conn{Conn: raw, timing: tm}, nil
	}

	cfg := d.tlsConfig.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(raw, cfg)
	tstart := time.Now()
	hctx, hcancel := context.WithTimeout(ctx, d.tlsTimeout)
	err = tc.HandshakeContext(hctx)
	timedOut = hctx.Err() == context.DeadlineExceeded
	hcancel()
	if err != nil {
		raw.Close()
		kind := KindTLS
		if timedOut {
			kind = KindTLSTimeout
		}
		return nil, &Error{Kind: kind, Err: fmt.Errorf("TLS handshake with %s: %w", target, err)}
	}
	tm.tls = time.Since(tstart)
	return &conn{Conn: tc, timing: tm}, nil
}

func dialErrorKind(err error, timedOut bool) ErrorKind {
	var blocked *BlockedAddressError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &blocked):
		return KindBlockedAddress
	case errors.As(err, &dnsErr):
		return KindDNS
	case timedOut:
		return KindConnectTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	}
	return KindConnect
}

// BlockedReason says why addr is refused without AllowPrivate ("loopback", "private",
// ...), or "" for a public address: the guard's own rule, for callers that judge an
// address before any dial (a renderer judging the URLs a page's scripts ask for).
func BlockedReason(addr netip.Addr) string { return blockedReason(addr) }

// Matches reports whether the mapping applies to host.
func (m Mapping) Matches(host string) bool { return m.matches(host) }
