package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// Content decoding is done here rather than by net/http's transparent gzip
// because the crawler needs the bytes as they came over the wire (for WARC),
// needs deflate and brotli too, and must stop decompression bombs early:
// net/http's gzip has no output limit.

// maxStackedEncodings bounds "Content-Encoding: gzip, br, ..." chains; real
// servers use one, occasionally two.
const maxStackedEncodings = 3

// bombFloor is how many decoded bytes are always allowed before the
// decoded/wire ratio is enforced, so that small, very repetitive pages are not
// mistaken for bombs.
const bombFloor = 1 << 20

var errWireLimit = errors.New("wire limit reached")

// eofReader is an always-empty flate.Reader: pooled decoders are reset onto
// it so that they do not keep the last body alive while parked.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
func (eofReader) ReadByte() (byte, error)  { return 0, io.EOF }

// parseEncodings turns Content-Encoding header values into the list of
// codings in the order they were applied ("identity" dropped, "x-gzip" read
// as "gzip"). Unknown codings and overlong chains are errors.
func parseEncodings(values []string) ([]string, error) {
	var encs []string
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			switch e {
			case "", "identity":
				continue
			case "x-gzip":
				e = "gzip"
			case "gzip", "deflate", "br":
			default:
				return nil, fmt.Errorf("unsupported Content-Encoding %q", e)
			}
			encs = append(encs, e)
		}
	}
	if len(encs) > maxStackedEncodings {
		return nil, fmt.Errorf("Content-Encoding stacks %d codings (at most %d supported)", len(encs), maxStackedEncodings)
	}
	return encs, nil
}

// bodyLimits bound one body read.
type bodyLimits struct {
	maxBytes int64        // decoded bytes kept; also the cap on wire bytes read
	maxRatio int64        // decoded/wire above this (past bombFloor) is a bomb
	admit    func() error // asked once before the body grows past LargeBody (nil: never)
}

// largeGate asks admit once, when a body (its wire bytes or its decoded ones) first
// grows past LargeBody, and remembers a refusal.
type largeGate struct {
	admit func() error
	asked bool
	err   error
}

// pass reports whether a body of n bytes may be read on.
func (g *largeGate) pass(n int64) bool {
	if n > LargeBody && !g.asked && g.admit != nil {
		g.asked = true
		g.err = g.admit()
	}
	return g.err == nil
}

// refused is the outcome of a body whose admission failed.
func (g *largeGate) refused() bodyOutcome {
	return bodyOutcome{kind: KindCanceled, err: fmt.Errorf("waiting for memory for a body over %d MiB: %w", LargeBody>>20, g.err)}
}

// bodyOutcome is what readBody saw.
type bodyOutcome struct {
	wire      []byte // bytes as read (content-encoded)
	body      []byte // decoded bytes; aliases wire when there is no encoding
	truncated bool   // stopped at maxBytes with more data available
	skipped   bool   // accept returned false
	kind      ErrorKind
	err       error // with kind; a network error here may be the caller's timeout
}

// wireReader reads the (de-chunked, still content-encoded) body, keeping a
// copy of every byte up to the limit.
type wireReader struct {
	r        io.Reader
	buf      *pieces
	gate     *largeGate
	limit    int64
	netErr   error // first non-EOF error from r
	overflow bool  // more than limit bytes were available
}

func (w *wireReader) Read(p []byte) (int, error) {
	room := w.limit - w.buf.n
	if room <= 0 {
		return 0, w.probe()
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := w.r.Read(p)
	w.buf.write(p[:n])
	if !w.gate.pass(w.buf.n) {
		return n, w.gate.err
	}
	return n, w.note(err)
}

// fill reads straight into w.buf's spare room (identity bodies, where the
// wire bytes are the body and a second copy would be waste).
func (w *wireReader) fill() error {
	room := w.limit - w.buf.n
	if room <= 0 {
		return w.probe()
	}
	sp := w.buf.spare()
	if int64(len(sp)) > room {
		sp = sp[:room]
	}
	n, err := w.r.Read(sp)
	w.buf.commit(n)
	if !w.gate.pass(w.buf.n) {
		return w.gate.err
	}
	return w.note(err)
}

// probe runs at the limit: one more byte means the body is longer than
// allowed; EOF means it fit exactly.
func (w *wireReader) probe() error {
	var one [1]byte
	for {
		n, err := w.r.Read(one[:])
		if n > 0 {
			w.overflow = true
			return errWireLimit
		}
		if err != nil {
			return w.note(err)
		}
	}
}

func (w *wireReader) note(err error) error {
	if err != nil && err != io.EOF && w.netErr == nil {
		w.netErr = err
	}
	return err
}

// readBody reads r (a response body after transfer decoding), undoes the
// content encodings with limits, and calls accept with the first decoded
// bytes (up to sniffLen) when accept is non-nil, stopping if it says no.
// sizeHint is the Content-Length or -1.
func readBody(r io.Reader, encodings []string, sizeHint int64, lim bodyLimits, accept func(prefix []byte) bool) bodyOutcome {
	w := &wireReader{r: r, limit: lim.maxBytes, gate: &largeGate{admit: lim.admit}}
	if sizeHint >= 0 {
		if !w.gate.pass(sizeHint) { // before the room for it is made
			return w.gate.refused()
		}
		w.buf = newPieces(min(sizeHint, lim.maxBytes) + 1)
	} else {
		w.buf = newPieces(min(firstPiece, lim.maxBytes+1))
	}
	if len(encodings) == 0 {
		return readIdentity(w, accept)
	}
	return readEncoded(w, encodings, lim, accept)
}

func readIdentity(w *wireReader, accept func([]byte) bool) bodyOutcome {
	var o bodyOutcome
	for {
		err := w.fill()
		if accept != nil && (w.buf.n >= sniffLen || err != nil) {
			if !accept(w.buf.prefix(sniffLen)) {
				return bodyOutcome{skipped: true}
			}
			accept = nil
		}
		if err == nil {
			continue
		}
		if w.gate.err != nil {
			return w.gate.refused()
		}
		o.wire = w.buf.bytes()
		o.body = o.wire
		switch {
		case err == io.EOF:
		case err == errWireLimit:
			o.truncated = true
		default:
			o.kind, o.err = KindBody, err
		}
		return o
	}
}

func readEncoded(w *wireReader, encodings []string, lim bodyLimits, accept func([]byte) bool) bodyOutcome {
	var o bodyOutcome
	var out *pieces // the decoded bytes
	fail := func(kind ErrorKind, err error) bodyOutcome {
		if w.gate.err != nil {
			return w.gate.refused()
		}
		o.wire = w.buf.bytes()
		if out != nil {
			o.body = out.bytes()
		}
		switch {
		case w.overflow:
			o.truncated = true
		case w.netErr != nil:
			// The decoder only saw the symptom; the network is the cause.
			o.kind, o.err = KindBody, w.netErr
		default:
			o.kind, o.err = kind, err
		}
		return o
	}

	var src io.Reader = w
	var release []func()
	defer func() {
		for _, f := range release {
			f()
		}
	}()
	// The last coding listed was applied last, so it is undone first.
	for i := len(encodings) - 1; i >= 0; i-- {
		dec, free, err := newDecoder(encodings[i], src)
		if free != nil {
			release = append(release, free)
		}
		if err != nil {
			if err == io.EOF && w.buf.n == 0 {
				// An empty body labelled as compressed: nothing to decode.
				o.wire = w.buf.bytes()
				o.body = o.wire
				if accept != nil && !accept(nil) {
					return bodyOutcome{skipped: true}
				}
				return o
			}
			return fail(KindDecompress, fmt.Errorf("%s: %w", encodings[i], err))
		}
		src = dec
	}

	out = newPieces(min(lim.maxBytes+1, max(int64(cap(w.buf.cur))*4, 4<<10)))
	for {
		sp := out.spare()
		if room := lim.maxBytes + 1 - out.n; int64(len(sp)) > room {
			sp = sp[:room]
		}
		n, err := src.Read(sp)
		out.commit(n)
		if !w.gate.pass(out.n) {
			return w.gate.refused()
		}
		if out.n > lim.maxBytes {
			o.wire, o.truncated = w.buf.bytes(), true
			o.body = out.bytes()[:lim.maxBytes]
			err = io.EOF // stop: the limit is reached
		} else if d := out.n; d > bombFloor && d > lim.maxRatio*w.buf.n {
			return fail(KindDecompressionBomb, fmt.Errorf("decoded %d bytes from %d wire bytes (ratio limit %d)", d, w.buf.n, lim.maxRatio))
		}
		if accept != nil && (out.n >= sniffLen || err != nil) {
			if !accept(out.prefix(sniffLen)) {
				return bodyOutcome{skipped: true}
			}
			accept = nil
		}
		if err != nil && w.buf.n == 0 && w.netErr == nil && errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF // an empty body labelled as compressed
		}
		if err == io.EOF {
			if !o.truncated {
				o.body = out.bytes()
			}
			o.wire = w.buf.bytes()
			return o
		}
		if err != nil {
			return fail(KindDecompress, fmt.Errorf("%s: %w", strings.Join(encodings, ", "), err))
		}
	}
}

var (
	gzipPool   sync.Pool // *gzip.Reader
	flatePool  sync.Pool // io.ReadCloser implementing flate.Resetter
	zlibPool   sync.Pool // io.ReadCloser implementing zlib.Resetter
	brotliPool sync.Pool // *brotli.Reader
	bufioPool  sync.Pool // *bufio.Reader
)

// newDecoder returns a reader undoing one content coding, and a function
// that returns pooled state once decoding is over (possibly non-nil even on
// error).
func newDecoder(enc string, src io.Reader) (io.Reader, func(), error) {
	switch enc {
	case "gzip":
		if z, ok := gzipPool.Get().(*gzip.Reader); ok {
			err := z.Reset(src)
			return z, func() { z.Reset(eofReader{}); gzipPool.Put(z) }, err
		}
		z, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Reset(eofReader{}); gzipPool.Put(z) }, nil
	case "br":
		b, ok := brotliPool.Get().(*brotli.Reader)
		if ok {
			b.Reset(src)
		} else {
			b = brotli.NewReader(src)
		}
		return b, func() { b.Reset(eofReader{}); brotliPool.Put(b) }, nil
	case "deflate":
		return newDeflateReader(src)
	}
	return nil, nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
}

// newDeflateReader accepts both forms servers send as "deflate": the zlib
// wrapping RFC 9110 specifies, and raw RFC 1951 data (old IIS and others).
// A zlib stream starts with a CMF/FLG pair whose compression method is 8 and
// whose 16-bit value is a multiple of 31; raw deflate data almost never does.
func newDeflateReader(src io.Reader) (io.Reader, func(), error) {
	br, ok := bufioPool.Get().(*bufio.Reader)
	if ok {
		br.Reset(src)
	} else {
		br = bufio.NewReaderSize(src, 4096)
	}
	release := []func(){func() { br.Reset(eofReader{}); bufioPool.Put(br) }}
	free := func() {
		for i := len(release) - 1; i >= 0; i-- {
			release[i]()
		}
	}
	head, err := br.Peek(2)
	if len(head) < 2 {
		if err == nil || err == io.EOF && len(head) == 1 {
			err = io.ErrUnexpectedEOF
		}
		return nil, free, err
	}
	if head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		if z, ok := zlibPool.Get().(io.ReadCloser); ok {
			err := z.(zlib.Resetter).Reset(br, nil)
			release = append(release, func() { z.(zlib.Resetter).Reset(eofReader{}, nil); zlibPool.Put(z) })
			return z, free, err
		}
		z, err := zlib.NewReader(br)
		if err != nil {
			return nil, free, err
		}
		release = append(release, func() { z.(zlib.Resetter).Reset(eofReader{}, nil); zlibPool.Put(z) })
		return z, free, nil
	}
	f, ok := flatePool.Get().(io.ReadCloser)
	if ok {
		f.(flate.Resetter).Reset(br, nil)
	} else {
		f = flate.NewReader(br)
	}
	release = append(release, func() { f.(flate.Resetter).Reset(eofReader{}, nil); flatePool.Put(f) })
	return f, free, nil
}
