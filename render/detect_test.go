package render

import (
	"strings"
	"testing"

	"github.com/sonda-search/sonda/parse"
)

func TestDetect(t *testing.T) {
	prose := strings.Repeat("The river rose three metres overnight and the town council met at dawn. ", 10)
	tests := []struct {
		name, html string
		want       bool
	}{
		{"static article", `<html><body><h1>Flood</h1><p>` + prose + `</p><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a></body></html>`, false},
		{"static with analytics", `<html><head><script>dataLayer.push({e:"v"})</script></head><body><p>` + prose + `</p><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a></body></html>`, false},
		{"react shell", `<html><head><script src="/main.js"></script></head><body><div id="root"></div></body></html>`, true},
		{"angular shell", `<html><body><app-root></app-root><script src="main.js"></script></body></html>`, true},
		{"noscript plea", `<html><body><p>Loading</p><noscript>Please enable JavaScript to view this site.</noscript><script src="x.js"></script></body></html>`, true},
		{"links in scripts", `<html><body><p>` + prose + `</p><script>const routes = ["/datasets/rivers", "/datasets/roads"];</script></body></html>`, true},
		{"next ssr page", `<html><body><div id="__next"><p>` + prose + `</p><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a></div><script id="__NEXT_DATA__">{}</script></body></html>`, false},
		{"empty root without script", `<html><body><div id="root"></div></body></html>`, false},
		{"thin page with script", `<html><head><script>window.x=1</script></head><body><p>Short note.</p><a href="/n">next</a></body></html>`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parse.Parse([]byte(tt.html), "http://example.test/", parse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := Detect(p, []byte(tt.html))
			if got := s.ScriptBuilt(); got != tt.want {
				t.Errorf("ScriptBuilt = %v (signals %+v, reasons %v), want %v", got, s, s.Reasons(), tt.want)
			}
		})
	}
}

func BenchmarkDetectStatic(b *testing.B) {
	html := []byte(`<html><head><script>dataLayer.push({e:"v"})</script></head><body><p>` +
		strings.Repeat("The river rose three metres overnight and the town council met at dawn. ", 200) + `</p>` + strings.Repeat(`<a href="/x">more</a> `, 20) + `</body></html>`)
	p, err := parse.Parse(html, "http://example.test/", parse.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(html)))
	for b.Loop() {
		Detect(p, html)
	}
}

func TestCountScripts(t *testing.T) {
	for _, tt := range []struct {
		html string
		want int
	}{
		{``, 0},
		{`<script>`, 1},
		{`<SCRIPT src=x></SCRIPT><Script>1</script>`, 2},
		{`<scripts><noscript>no</noscript><script`, 0},
		{`<script/><script	type=module>`, 2},
		{`a < b <scr`, 0},
	} {
		if got := countScripts([]byte(tt.html)); got != tt.want {
			t.Errorf("countScripts(%q) = %d, want %d", tt.html, got, tt.want)
		}
	}
}
