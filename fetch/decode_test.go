package fetch

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

func TestDecode(t *testing.T) {
	latin1, _ := charmap.ISO8859_1.NewEncoder().String("<title>Usinas elétricas</title>")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(latin1))
	zw.Close()
	tests := []struct {
		name   string
		header http.Header
		wire   []byte
		media  string
		text   string
		err    bool
	}{
		{"gzip, declared charset", http.Header{"Content-Type": {"text/html; charset=iso-8859-1"}, "Content-Encoding": {"gzip"}}, gz.Bytes(),
			"text/html", "<title>Usinas elétricas</title>", false},
		{"sniffed type", http.Header{}, []byte("<!DOCTYPE html><p>hi"), "text/html", "<!DOCTYPE html><p>hi", false},
		{"not text", http.Header{"Content-Type": {"application/pdf"}}, []byte("%PDF-1.4"), "application/pdf", "", false},
		{"unknown coding", http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"zstd2"}}, []byte("x"), "text/html", "", true},
		{"corrupt gzip", http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}}, []byte("not gzip"), "text/html", "", true},
	}
	for _, tt := range tests {
		res := Decode(tt.header, tt.wire, 0)
		if res.MediaType != tt.media || string(res.UTF8) != tt.text || (res.Err != nil) != tt.err {
			t.Errorf("%s: media %q text %q err %v", tt.name, res.MediaType, res.UTF8, res.Err)
		}
	}
}
