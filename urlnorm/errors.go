package urlnorm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	whatwgerrors "github.com/nlnwa/whatwg-url/errors"
)

// Reasons a URL is refused. Errors returned by this package are *Error values wrapping one of
// these, so callers can tell an uncrawlable link (skip it quietly) from a malformed one
// (worth recording) with errors.Is.
var (
	ErrNotAbsolute  = errors.New("not an absolute URL (no scheme)")
	ErrNotCrawlable = errors.New("not crawlable (only http and https are)")
	ErrEmptyHost    = errors.New("empty host")
	ErrInvalidHost  = errors.New("invalid host")
	ErrInvalidPort  = errors.New("invalid port")
	ErrTooLong      = fmt.Errorf("longer than %d bytes", MaxLength)
	ErrMalformed    = errors.New("malformed URL")
)

// Error is the error returned for a URL that cannot be parsed or resolved.
type Error struct {
	Input string // the text that was refused, as given
	Err   error  // wraps one of the Err* reasons above
}

func (e *Error) Error() string {
	return "urlnorm: " + quoteShort(e.Input) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// quoteShort quotes s for an error message, cutting it if long: URLs in error logs should
// identify the input, not reproduce a 16 KB trap URL.
func quoteShort(s string) string {
	const keep = 100
	if len(s) <= keep+20 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:keep]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

func notCrawlable(scheme string) error {
	return fmt.Errorf("scheme %q: %w", scheme, ErrNotCrawlable)
}

// fromLibrary turns a whatwg-url failure into one of this package's reasons, keeping the
// library's description of what was wrong.
func fromLibrary(err error) error {
	t := whatwgerrors.Type(err)
	var reason error
	switch t {
	case whatwgerrors.HostMissing, whatwgerrors.InvalidCredentials:
		return ErrEmptyHost
	case whatwgerrors.PortInvalid, whatwgerrors.PortOutOfRange, whatwgerrors.PortMissing:
		reason = ErrInvalidPort
	case whatwgerrors.MissingSchemeNonRelativeURL:
		return ErrNotAbsolute
	case whatwgerrors.DomainToASCII, whatwgerrors.DomainToUnicode, whatwgerrors.DomainInvalidCodePoint,
		whatwgerrors.HostInvalidCodePoint:
		reason = ErrInvalidHost
	default:
		if strings.Contains(string(t), "IPv4") || strings.Contains(string(t), "IPv6") {
			reason = ErrInvalidHost
		} else {
			reason = ErrMalformed
		}
	}
	msg := string(t)
	if msg == "" {
		msg = err.Error()
	} else {
		msg = strings.ToLower(msg[:1]) + msg[1:]
		if d := whatwgerrors.Description(err); d != "" {
			msg += " " + strconv.Quote(d)
		}
		if c := errors.Unwrap(err); c != nil {
			msg += ": " + c.Error()
		}
	}
	return fmt.Errorf("%w: %s", reason, msg)
}
