package index

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sonda-search/sonda/extract/exteval"
	"github.com/sonda-search/sonda/fetch"
	"github.com/sonda-search/sonda/parse"
)

func TestPageText(t *testing.T) {
	const page = `<html><body>
<div class="menu"><a href="/">Home</a> | <a href="/list">Browse</a> | <a href="/about">About</a></div>
<div class="crumbs"><a href="/">Home</a> › <a href="/list">Library</a> › Abstract 7</div>
<h2>Slender cones</h2>
<p>Pressure on slender cones, with <a href="/doc/3">an earlier study</a> for comparison at low speeds and high.</p>
<ul><li><a href="/doc/9">Heat transfer in slabs</a></li><li><a href="/doc/12">Flutter of panels</a></li></ul>
<nav><p>Site map and contact details</p></nav>
</body></html>`
	p, err := parse.Parse([]byte(page), "http://a.test/doc/7", parse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Slender cones\nPressure on slender cones, with an earlier study for comparison at low speeds and high."
	if got := bodyOf(p); got != want {
		t.Errorf("pageText:\n%q\nwant\n%q", got, want)
	}
	// A page of links alone is its links.
	p, _ = parse.Parse([]byte(`<ul><li><a href="/a">First</a></li><li><a href="/b">Second</a></li></ul>`), "http://a.test/", parse.Options{})
	if got := bodyOf(p); got != p.Text() {
		t.Errorf("all links: %q, want the page's text %q", got, p.Text())
	}
}

// TestPageTextOnDragnet checks the indexed text of real pages against what people chose
// as their main text (Dragnet's 1,381 news and blog pages; no ranking choice was made on
// them): what pageText drops must be mostly boilerplate, so its shingle precision against
// the gold text must rise clearly over the landmarks-only text (parse.Page.MainText) and
// its recall fall by little. Measured: precision 0.373 (whole page), 0.403 (landmarks
// removed), 0.565 (indexed text); recall 0.988, 0.986, 0.936 — the recall lost is mostly
// paragraphs that are lists of links (and a link-dense paragraph's words still reach the
// pages it links to as their anchor text).
func TestPageTextOnDragnet(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "testdata", "dragnet")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the Dragnet set is not at %s: %v", dir, err)
	}
	if testing.Short() {
		t.Skip("-short: parses 1,381 pages")
	}
	cases, err := exteval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	type pr struct{ p, r float64 }
	var whole, landmarks, indexed pr
	n := 0
	for _, c := range cases {
		utf8 := fetch.ToUTF8(c.Source, "text/html")
		p, err := parse.Parse(utf8, "http://dragnet.test/"+c.Name, parse.Options{})
		if err != nil || c.Expected == "" {
			continue
		}
		n++
		for _, x := range []struct {
			text string
			into *pr
		}{{p.Text(), &whole}, {p.MainText(), &landmarks}, {bodyOf(p), &indexed}} {
			tp, fp, fn := exteval.BodyCounts(x.text, c.Expected)
			if tp+fp > 0 {
				x.into.p += float64(tp) / float64(tp+fp)
			}
			if tp+fn > 0 {
				x.into.r += float64(tp) / float64(tp+fn)
			}
		}
	}
	for _, x := range []*pr{&whole, &landmarks, &indexed} {
		x.p /= float64(n)
		x.r /= float64(n)
	}
	t.Logf("%d pages: precision / recall against the gold main text: whole page %.3f / %.3f, landmarks removed %.3f / %.3f, indexed text %.3f / %.3f",
		n, whole.p, whole.r, landmarks.p, landmarks.r, indexed.p, indexed.r)
	if n < 1300 {
		t.Fatalf("only %d pages read", n)
	}
	if indexed.p < landmarks.p+0.1 || indexed.r < landmarks.r-0.06 {
		t.Errorf("the indexed text does not drop mostly boilerplate: precision %.3f (landmarks only %.3f), recall %.3f (%.3f)", indexed.p, landmarks.p, indexed.r, landmarks.r)
	}
}

// bodyOf is the body pageText gives p.
func bodyOf(p *parse.Page) string {
	body, _ := pageText(p)
	return body
}
