package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// ErrorKind is a stable, short name for why a fetch failed. The names are
// used as metric labels and in crawl records, so they never change meaning.
type ErrorKind string

// The kinds a Fetch can fail with. A truncated body (by size or by time) and a
// skipped body (unwanted content type) are not failures: see Result.Truncated
// and Result.Skipped.
const (
	KindBadURL              ErrorKind = "bad-url"              // not an absolute http(s) URL, or an unusable redirect target
	KindDNS                 ErrorKind = "dns"                  // host name did not resolve (includes DNS timeouts)
	KindBlockedAddress      ErrorKind = "blocked-address"      // SSRF guard refused a private/loopback/... address
	KindRefused             ErrorKind = "refused"              // TCP connection refused
	KindConnect             ErrorKind = "connect"              // any other failure to open a TCP connection
	KindConnectTimeout      ErrorKind = "timeout-connect"      // ConnectTimeout expired while dialing
	KindTLS                 ErrorKind = "tls"                  // TLS handshake failed (certificate, protocol)
	KindTLSTimeout          ErrorKind = "timeout-tls"          // TLSTimeout expired during the handshake
	KindFirstByteTimeout    ErrorKind = "timeout-first-byte"   // FirstByteTimeout expired waiting for response headers
	KindTimeout             ErrorKind = "timeout"              // Timeout (the whole fetch) expired before the response headers
	KindClosed              ErrorKind = "closed"               // server closed or reset the connection before a response
	KindProtocol            ErrorKind = "protocol"             // malformed or oversized HTTP response head
	KindBody                ErrorKind = "body"                 // connection failed while reading the body (partial body kept)
	KindUnsupportedEncoding ErrorKind = "unsupported-encoding" // Content-Encoding we cannot decode (raw bytes kept in Wire)
	KindDecompress          ErrorKind = "decompress"           // corrupt compressed body (partial body kept)
	KindDecompressionBomb   ErrorKind = "decompression-bomb"   // decoded/wire ratio above MaxDecompressionRatio
	KindTooManyRedirects    ErrorKind = "too-many-redirects"   // more hops than Request.MaxRedirects
	KindRedirectLoop        ErrorKind = "redirect-loop"        // a redirect pointed back to a URL already in the chain
	KindCanceled            ErrorKind = "canceled"             // the caller's context ended
)

// Error is the only error type a Result carries.
type Error struct {
	Kind ErrorKind
	URL  string // the URL being fetched when the failure happened (a redirect hop, if following)
	Err  error  // underlying cause; never nil
}

func (e *Error) Error() string {
	return "fetch " + e.URL + ": " + string(e.Kind) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a fetch error, or "" when err is nil or not from
// this package.
func KindOf(err error) ErrorKind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return ""
}

// newError builds an *Error, reusing the kind of an *Error already inside err
// (dial errors are classified where they happen, before the URL is known).
func newError(kind ErrorKind, url string, err error) *Error {
	var inner *Error
	if errors.As(err, &inner) {
		return &Error{Kind: inner.Kind, URL: url, Err: inner.Err}
	}
	return &Error{Kind: kind, URL: url, Err: err}
}

// isConnBroken reports whether err means the peer closed or reset the
// connection, as opposed to sending something we could not parse.
func isConnBroken(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// classifyRoundTrip names the failure of a round trip that produced no
// response. ctx is the caller's context; wrote says whether the request had
// been fully written (so a timeout can only be the first-byte timeout).
func classifyRoundTrip(ctx context.Context, err error, wrote bool) ErrorKind {
	var fe *Error
	switch {
	case errors.As(err, &fe):
		return fe.Kind
	case ctx.Err() != nil:
		return KindCanceled
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if wrote {
			return KindFirstByteTimeout
		}
		return KindConnectTimeout
	}
	if isConnBroken(err) {
		return KindClosed
	}
	return KindProtocol
}
