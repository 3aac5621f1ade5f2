package fetch

import (
	"bytes"
	"net/http"
)

// Decode rebuilds what Fetch made of a response from a recording of it: the header and the
// body as received (still content-encoded, as a WARC response record keeps it). It undoes
// the content codings with Fetch's limits, determines the media type (sniffing when the
// server declared none or a generic one) and transcodes text to UTF-8 exactly as Fetch
// does, so that an archived page parses to the same text it had when it was crawled. It is
// how the search index is rebuilt from the WARC files. maxBytes bounds the decoded body
// (0: 10 MiB). Problems are reported in Result.Err, as Fetch reports them.
func Decode(header http.Header, wire []byte, maxBytes int64) *Result {
	if maxBytes <= 0 {
		maxBytes = 10 << 20
	}
	res := &Result{Header: header}
	mediaType, charset := parseContentType(header.Get("Content-Type"))
	res.MediaType = mediaType
	var accept func([]byte) bool
	if needsSniff(mediaType) {
		accept = func(prefix []byte) bool {
			if len(prefix) > 0 {
				res.MediaType = sniff(prefix)
			}
			return true
		}
	}
	encodings, encErr := parseEncodings(header.Values("Content-Encoding"))
	var o bodyOutcome
	if encErr != nil {
		o = readBody(bytes.NewReader(wire), nil, int64(len(wire)), bodyLimits{maxBytes: maxBytes}, nil)
		o.body = nil
		res.Err = &Error{Kind: KindUnsupportedEncoding, Err: encErr}
	} else {
		o = readBody(bytes.NewReader(wire), encodings, int64(len(wire)), bodyLimits{maxBytes: maxBytes, maxRatio: DefaultMaxDecompressionRatio}, accept)
	}
	res.Wire, res.Body = o.wire, o.body
	if o.truncated {
		res.Truncated = TruncatedLength
	}
	if o.err != nil && res.Err == nil {
		res.Err = &Error{Kind: o.kind, Err: o.err}
	}
	if isText(res.MediaType) && res.Body != nil {
		res.UTF8, res.Charset, res.CharsetSource = toUTF8(res.Body, res.MediaType, charset)
	}
	return res
}
