package urlnorm

import (
	"fmt"
	"strings"

	"github.com/nlnwa/whatwg-url/url"
)

// slow normalizes s with the whatwg-url parser, for the inputs the scanner declines, then
// applies the same canonical rules to the parts the library returns.
func (n *Normalizer) slow(sc *scratch, s string, base *URL) (URL, error) {
	var u *url.Url
	var err error
	if base == nil {
		u, err = n.lib.Parse(s)
	} else {
		var b *url.Url
		if b, err = n.lib.Parse(base.s); err == nil {
			u, err = b.Parse(s)
		}
	}
	if err != nil {
		return URL{}, fromLibrary(err)
	}
	if sch := u.Scheme(); sch != "http" && sch != "https" {
		// Only reachable for "http:..." forms that resolve to another scheme, if any; the
		// scheme was checked before.
		return URL{}, notCrawlable(sch)
	}
	host := u.Hostname()
	if host == "" {
		return URL{}, ErrEmptyHost
	}
	if host[0] != '[' {
		host = strings.TrimSuffix(host, ".")
		if host == "" || host[0] == '.' || host[len(host)-1] == '.' || strings.Contains(host, "..") {
			return URL{}, fmt.Errorf("%w: empty label in %q", ErrInvalidHost, u.Hostname())
		}
	}

	b := append(sc.b[:0], u.Scheme()...)
	b = append(b, "://"...)
	hostStart := len(b)
	b = append(b, host...)
	hostEnd := len(b)
	if p := u.Port(); p != "" {
		b = append(b, ':')
		b = append(b, p...)
	}
	pathStart := len(b)
	sc.segs = sc.segs[:0]
	b = n.appendPath(b, sc, strings.TrimPrefix(u.Pathname(), "/"))
	return n.finish(sc, b, hostStart, hostEnd, pathStart, u.Query(), u.Fragment())
}
