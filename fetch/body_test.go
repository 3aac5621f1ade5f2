package fetch

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// compress encodes b with one content coding ("deflate-raw" is deflate
// without the zlib wrapper, as some servers send it).
func compress(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "deflate-raw":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&buf)
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte { return compress(t, "gzip", b) }

// zeroMember is one gzip member holding 1 MiB of zeros (about 1 KiB).
var zeroMember = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(make([]byte, 1<<20))
	w.Close()
	return buf.Bytes()
})

// gzipBomb is a gzip stream of n MiB of zeros made of repeated members
// (valid multi-member gzip), so tests never compress, or hold, the decoded
// size.
type gzipBomb struct {
	left int // members still to send
	off  int
}

func gzipBombReader(mib int) io.Reader { return &gzipBomb{left: mib} }

func (g *gzipBomb) Read(p []byte) (int, error) {
	m := zeroMember()
	if g.left == 0 {
		return 0, io.EOF
	}
	n := copy(p, m[g.off:])
	g.off += n
	if g.off == len(m) {
		g.off, g.left = 0, g.left-1
	}
	return n, nil
}

func TestParseEncodings(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"gzip"}, []string{"gzip"}, ""},
		{[]string{" X-GZip "}, []string{"gzip"}, ""},
		{[]string{"identity"}, nil, ""},
		{[]string{"gzip, br"}, []string{"gzip", "br"}, ""},
		{[]string{"deflate", "br"}, []string{"deflate", "br"}, ""},
		{[]string{"gzip,,identity"}, []string{"gzip"}, ""},
		{[]string{"compress"}, nil, `unsupported Content-Encoding "compress"`},
		{[]string{"zstd"}, nil, `unsupported Content-Encoding "zstd"`},
		{[]string{"gzip, gzip, gzip, gzip"}, nil, "stacks 4 codings"},
	}
	for _, tt := range tests {
		got, err := parseEncodings(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseEncodings(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("parseEncodings(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestReadBodyDecoding(t *testing.T) {
	page := bytes.Repeat([]byte("<p>Olá, sonda! Página de teste.</p>\n"), 300)
	gz := gzipBytes(t, page)
	tests := []struct {
		name      string
		wire      []byte
		encodings []string
		limit     int64
		want      []byte
		truncated bool
		kind      ErrorKind
	}{
		{"identity", page, nil, 1 << 20, page, false, ""},
		{"identity exactly at limit", page, nil, int64(len(page)), page, false, ""},
		{"identity over limit", page, nil, 100, page[:100], true, ""},
		{"empty identity", nil, nil, 100, []byte{}, false, ""},
		{"gzip", gz, []string{"gzip"}, 1 << 20, page, false, ""},
		{"gzip exactly at decoded limit", gz, []string{"gzip"}, int64(len(page)), page, false, ""},
		{"gzip over decoded limit", gz, []string{"gzip"}, 1000, page[:1000], true, ""},
		{"gzip two members", append(gzipBytes(t, page[:50]), gzipBytes(t, page[50:])...), []string{"gzip"}, 1 << 20, page, false, ""},
		{"deflate zlib-wrapped", compress(t, "deflate", page), []string{"deflate"}, 1 << 20, page, false, ""},
		{"deflate raw", compress(t, "deflate-raw", page), []string{"deflate"}, 1 << 20, page, false, ""},
		{"brotli", compress(t, "br", page), []string{"br"}, 1 << 20, page, false, ""},
		{"gzip then br", compress(t, "br", gz), []string{"gzip", "br"}, 1 << 20, page, false, ""},
		{"br then deflate", compress(t, "deflate", compress(t, "br", page)), []string{"br", "deflate"}, 1 << 20, page, false, ""},
		{"empty gzip body", nil, []string{"gzip"}, 100, []byte{}, false, ""},
		{"empty br body", nil, []string{"br"}, 100, []byte{}, false, ""},
		{"empty deflate body", nil, []string{"deflate"}, 100, []byte{}, false, ""},
		{"not gzip", []byte("<html>plain</html>"), []string{"gzip"}, 1 << 20, nil, false, KindDecompress},
		{"gzip cut short", gz[:len(gz)/2], []string{"gzip"}, 1 << 20, nil, false, KindDecompress},
		{"gzip bad checksum", append(append([]byte{}, gz[:len(gz)-8]...), 0, 0, 0, 0, 0, 0, 0, 0), []string{"gzip"}, 1 << 20, nil, false, KindDecompress},
		{"gzip trailing garbage", append(append([]byte{}, gz...), "junk"...), []string{"gzip"}, 1 << 20, page, false, KindDecompress},
		{"not brotli", []byte("<html>plain</html>"), []string{"br"}, 1 << 20, nil, false, KindDecompress},
		{"one byte deflate", []byte{0x78}, []string{"deflate"}, 1 << 20, nil, false, KindDecompress},
		{"gzip wire over limit", gzipBytes(t, randomBytes(4000)), []string{"gzip"}, 1000, nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := readBody(bytes.NewReader(tt.wire), tt.encodings, int64(len(tt.wire)), bodyLimits{maxBytes: tt.limit, maxRatio: 100}, nil)
			if o.kind != tt.kind {
				t.Fatalf("kind = %q (err %v), want %q", o.kind, o.err, tt.kind)
			}
			if (o.err != nil) != (tt.kind != "") {
				t.Fatalf("err = %v with kind %q", o.err, o.kind)
			}
			if o.truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", o.truncated, tt.truncated)
			}
			if tt.want != nil && !bytes.Equal(o.body, tt.want) {
				t.Errorf("body = %d bytes %.40q..., want %d bytes", len(o.body), o.body, len(tt.want))
			}
			if int64(len(o.body)) > tt.limit || int64(len(o.wire)) > tt.limit {
				t.Errorf("limit %d broken: body %d, wire %d", tt.limit, len(o.body), len(o.wire))
			}
			if !bytes.HasPrefix(tt.wire, o.wire) {
				t.Errorf("wire is not a prefix of what was sent")
			}
			if tt.kind == "" && !tt.truncated && !bytes.Equal(o.wire, tt.wire) {
				t.Errorf("wire = %d bytes, want all %d", len(o.wire), len(tt.wire))
			}
		})
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func TestReadBodyBomb(t *testing.T) {
	// 1 GiB of zeros, about 1 MiB compressed: stopped just past bombFloor.
	o := readBody(gzipBombReader(1<<10), []string{"gzip"}, -1, bodyLimits{maxBytes: 10 << 20, maxRatio: 100}, nil)
	if o.kind != KindDecompressionBomb {
		t.Fatalf("kind = %q (%v), want decompression-bomb", o.kind, o.err)
	}
	if len(o.body) > 2*bombFloor {
		t.Errorf("decoded %d bytes before stopping; want about %d", len(o.body), bombFloor)
	}
	if !strings.Contains(o.err.Error(), "ratio limit 100") {
		t.Errorf("error %q does not explain the limit", o.err)
	}

	// A generous ratio lets the same stream run into the size limit instead.
	o = readBody(gzipBombReader(1<<10), []string{"gzip"}, -1, bodyLimits{maxBytes: 2 << 20, maxRatio: 1 << 20}, nil)
	if o.err != nil || !o.truncated || len(o.body) != 2<<20 {
		t.Fatalf("got err %v, truncated %v, %d bytes; want a 2 MiB truncated body", o.err, o.truncated, len(o.body))
	}

	// Repetitive but small pages are under bombFloor and pass.
	small := bytes.Repeat([]byte{' '}, 512<<10)
	o = readBody(bytes.NewReader(gzipBytes(t, small)), []string{"gzip"}, -1, bodyLimits{maxBytes: 10 << 20, maxRatio: 100}, nil)
	if o.err != nil || len(o.body) != len(small) {
		t.Fatalf("small repetitive page: err %v, %d bytes", o.err, len(o.body))
	}
}

// failingReader returns data, then a network-style error.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadBodyNetworkErrorIsNotDecompressError(t *testing.T) {
	page := bytes.Repeat([]byte("abcdefgh"), 10000)
	gz := gzipBytes(t, page)
	reset := errors.New("connection reset by peer")
	for _, enc := range []string{"", "gzip"} {
		wire, encs := page, []string(nil)
		if enc != "" {
			wire, encs = gz, []string{enc}
		}
		o := readBody(&failingReader{data: wire[:len(wire)/2], err: reset}, encs, -1, bodyLimits{maxBytes: 1 << 20, maxRatio: 100}, nil)
		if o.kind != KindBody || !errors.Is(o.err, reset) {
			t.Errorf("%q: kind %q err %v, want body / connection reset", enc, o.kind, o.err)
		}
		if len(o.wire) != len(wire)/2 {
			t.Errorf("%q: kept %d wire bytes, want %d", enc, len(o.wire), len(wire)/2)
		}
	}
}

func TestReadBodySniffCallback(t *testing.T) {
	page := bytes.Repeat([]byte("x"), 10000)
	for _, encs := range [][]string{nil, {"gzip"}} {
		wire := page
		if encs != nil {
			wire = gzipBytes(t, page)
		}
		var seen int
		o := readBody(bytes.NewReader(wire), encs, -1, bodyLimits{maxBytes: 1 << 20, maxRatio: 100}, func(p []byte) bool {
			seen = len(p)
			return false
		})
		if !o.skipped || seen != sniffLen {
			t.Errorf("%v: skipped %v after seeing %d bytes; want skip after %d", encs, o.skipped, seen, sniffLen)
		}
		calls := 0
		o = readBody(bytes.NewReader(wire), encs, -1, bodyLimits{maxBytes: 1 << 20, maxRatio: 100}, func(p []byte) bool {
			calls++
			return true
		})
		if o.skipped || calls != 1 || len(o.body) != len(page) {
			t.Errorf("%v: accepted body: skipped %v, %d calls, %d bytes", encs, o.skipped, calls, len(o.body))
		}
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder chain: no panic, the
// limits hold, and the wire bytes kept are a prefix of the input.
func FuzzDecode(f *testing.F) {
	page := []byte("<html><body>hello hello hello hello</body></html>")
	f.Add(gzipBytes(f, page), uint8(0), uint16(1000))
	f.Add(compress(f, "deflate", page), uint8(1), uint16(20))
	f.Add(compress(f, "deflate-raw", page), uint8(1), uint16(1000))
	f.Add(compress(f, "br", page), uint8(2), uint16(1000))
	f.Add(compress(f, "br", gzipBytes(f, page)), uint8(3), uint16(30))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint8(0), uint16(10))
	chains := [][]string{{"gzip"}, {"deflate"}, {"br"}, {"gzip", "br"}, {"deflate", "gzip"}, nil}
	f.Fuzz(func(t *testing.T, wire []byte, chain uint8, limit uint16) {
		lim := bodyLimits{maxBytes: int64(limit) + 1, maxRatio: 3}
		o := readBody(bytes.NewReader(wire), chains[int(chain)%len(chains)], -1, lim, nil)
		if int64(len(o.body)) > lim.maxBytes || int64(len(o.wire)) > lim.maxBytes {
			t.Fatalf("limit %d broken: body %d wire %d", lim.maxBytes, len(o.body), len(o.wire))
		}
		if !bytes.HasPrefix(wire, o.wire) {
			t.Fatalf("wire kept is not a prefix of the input")
		}
		if (o.err == nil) != (o.kind == "") {
			t.Fatalf("err %v with kind %q", o.err, o.kind)
		}
	})
}

// TestReadBodyBombsInBoundedMemory: a body that decompresses into much more than it is
// stops at the ratio limit, for every content coding sonda reads, and what reading it
// allocates does not grow with what the bomb would expand to.
func TestReadBodyBombsInBoundedMemory(t *testing.T) {
	for _, coding := range []string{"gzip", "deflate", "br"} {
		var allocs []uint64
		for _, mib := range []int{4, 32} {
			wire := compress(t, coding, make([]byte, mib<<20))
			var o bodyOutcome
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			o = readBody(bytes.NewReader(wire), []string{coding}, -1, bodyLimits{maxBytes: 10 << 20, maxRatio: 100}, nil)
			runtime.ReadMemStats(&b)
			if o.kind != KindDecompressionBomb || len(o.body) > 2*bombFloor {
				t.Errorf("%s, %d MiB of zeros in %d bytes: kind %q (%v), %d bytes decoded; want a decompression bomb stopped near %d bytes", coding, mib, len(wire), o.kind, o.err, len(o.body), bombFloor)
			}
			allocs = append(allocs, b.TotalAlloc-a.TotalAlloc)
		}
		t.Logf("%s: %d and %d KiB allocated for 4 and 32 MiB bombs", coding, allocs[0]>>10, allocs[1]>>10)
		if allocs[1] > allocs[0]+allocs[0]/2+(256<<10) {
			t.Errorf("%s: reading allocates with the bomb's size: %d then %d bytes", coding, allocs[0], allocs[1])
		}
	}
}
