package extract

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonda-search/sonda/fetch"
	nethtml "golang.org/x/net/html"
)

func TestAgreement(t *testing.T) {
	set := func(texts ...string) shingleSet {
		var bs []Block
		for _, s := range texts {
			bs = append(bs, Block{Kind: "p", Text: s})
		}
		return newShingleSet(bs)
	}
	tests := []struct {
		a, b shingleSet
		want float64
	}{
		{set("one two three four five"), set("One, two; three four five."), 1}, // case and punctuation do not count
		{set("one two three four five"), set("one two three four"), 2.0 / 3},   // 1 shared of 2 + 1 shingles
		{set("one two three four"), set("five six seven eight"), 0},
		{set("one two three four five"), set("one two", "three four five"), 1}, // blocks are one text
		{set(), set(), 1},
		{set("one two three four"), set(), 0},
		{set("a b c d a b c d"), set("a b c d"), 2.0 / 6}, // multisets: 5 shingles against 1, 1 shared
	}
	for i, tt := range tests {
		if got := agreement(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%d: agreement = %v, want %v", i, got, tt.want)
		}
		if got := agreement(tt.b, tt.a); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%d: agreement is not symmetric: %v, want %v", i, got, tt.want)
		}
	}
}

func TestMedoid(t *testing.T) {
	cand := func(from, text string) bodyCandidate {
		bs := []Block{{Kind: "p", Text: text}}
		return bodyCandidate{from: from, blocks: bs, sh: newShingleSet(bs)}
	}
	story := "the council voted on tuesday to close the old bridge for repairs until spring"
	sidebar := "most read today weather traffic sports subscribe to our newsletter for more"
	tests := []struct {
		name string
		cs   []bodyCandidate
		want string
	}{
		{"the odd one out loses", []bodyCandidate{cand("trafilatura", sidebar), cand("readability", story), cand("distiller", story+" share this")}, "readability"},
		{"two that agree keep the first", []bodyCandidate{cand("trafilatura", story), cand("readability", sidebar), cand("distiller", story)}, "trafilatura"},
		{"no agreement: the first", []bodyCandidate{cand("trafilatura", story), cand("readability", sidebar), cand("distiller", "")}, "trafilatura"},
		// Empty bodies abstain: two of them do not agree with each other.
		{"two empty bodies do not outvote a text", []bodyCandidate{cand("trafilatura", story), cand("readability", ""), cand("distiller", "")}, "trafilatura"},
		// A one-shingle body inside one of two texts does not break their tie.
		{"a single shingle does not decide", []bodyCandidate{cand("trafilatura", story), cand("readability", sidebar+" october 17 2012 permalink"), cand("distiller", "October 17, 2012 | Permalink")}, "trafilatura"},
		{"an empty first loses to two that agree", []bodyCandidate{cand("trafilatura", ""), cand("readability", story), cand("distiller", story)}, "readability"},
		{"all empty: the first", []bodyCandidate{cand("trafilatura", ""), cand("readability", "one"), cand("distiller", "")}, "trafilatura"},
	}
	for _, tt := range tests {
		if got := medoid(tt.cs).from; got != tt.want {
			t.Errorf("%s: medoid = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestConsensusOverrulesOddExtractor runs the vote on a real page (Dragnet's R163, a
// TypePad blog post) where go-trafilatura takes the comment-preview box and the sidebar
// for the article while Readability and DOM Distiller both find the post.
func TestConsensusOverrulesOddExtractor(t *testing.T) {
	page := dragnetPage(t, "R163")
	const post = "Experimental philosophers nicely fit the description"
	alone, err := mustNew(t, Options{NoFallback: true}).Extract(page, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(alone.Text(), post) {
		t.Fatalf("go-trafilatura alone now finds the post (body from %s): pick another page for this test", alone.Sources["body"])
	}
	a, err := mustNew(t, Options{}).Extract(page, "")
	if err != nil {
		t.Fatal(err)
	}
	if from := a.Sources["body"]; from != "readability" && from != "distiller" {
		t.Errorf("body from %q, want the vote to overrule go-trafilatura", from)
	}
	if !strings.Contains(a.Text(), post) || strings.Contains(a.Text(), "Your comment has not yet been posted") {
		t.Errorf("body is not the post:\n%s", a.Text())
	}
}

// TestConsensusIgnoresNearEmptyExtractor runs the vote on a real page (Dragnet's R44, a
// TypePad post) where go-trafilatura finds the post, Readability the post with its
// trackback block, and DOM Distiller only the "October 17, 2012 | Permalink" line, which
// Readability's body holds: one shingle must not decide between the two long bodies.
func TestConsensusIgnoresNearEmptyExtractor(t *testing.T) {
	a, err := mustNew(t, Options{}).Extract(dragnetPage(t, "R44"), "")
	if err != nil {
		t.Fatal(err)
	}
	if from := a.Sources["body"]; from != "trafilatura" {
		t.Errorf("body from %q, want go-trafilatura's (DOM Distiller's one-line body must abstain)", from)
	}
	text := a.Text()
	if !strings.Contains(text, "Today we launched something huge") || strings.Contains(text, "TrackBack URL for this entry") {
		t.Errorf("body is not the post alone:\n%s", text)
	}
}

// dragnetPage reads Dragnet's page id (decoded as the crawler decodes it), or skips the
// test when the test data is absent.
func dragnetPage(t *testing.T, id string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "shared", "testdata", "dragnet", "html", id+".html"))
	if err != nil {
		t.Skipf("Dragnet page not found (%v): this test needs ../shared/testdata/dragnet", err)
	}
	return fetch.ToUTF8(raw, "text/html")
}

// votedBody is the body the extractors' vote returns for page, before the rules that
// trim its end (body), as one string, and the extractor it came from.
func votedBody(t *testing.T, page []byte) (string, string) {
	t.Helper()
	doc, err := nethtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	restore := detachHidden(doc)
	defer restore()
	bs, from := mustNew(t, Options{}).consensusBody(doc, nil)
	var b strings.Builder
	for _, bl := range bs {
		b.WriteString(bl.Text)
		b.WriteByte('\n')
	}
	return b.String(), from
}

// checkEndTrimmed extracts Dragnet's page id and checks that a rule trimming the body's end
// is what keeps the texts dropped out of it: the vote's body holds the first of them
// (the test cannot fail otherwise, so it asks for another page), the extracted body
// holds none of them and still holds kept, the article's last words.
func checkEndTrimmed(t *testing.T, id, kept string, dropped ...string) {
	t.Helper()
	page := dragnetPage(t, id)
	if voted, from := votedBody(t, page); !strings.Contains(voted, dropped[0]) {
		t.Fatalf("the body from %s no longer holds %q without the rule: pick another page for this test", from, dropped[0])
	}
	a, err := mustNew(t, Options{}).Extract(page, "")
	if err != nil {
		t.Fatal(err)
	}
	text := a.Text()
	for _, d := range dropped {
		if strings.Contains(text, d) {
			t.Errorf("body (from %s) keeps %q:\n%.3000s", a.Sources["body"], d, text)
		}
	}
	if !strings.Contains(text, kept) {
		t.Errorf("body (from %s) lost %q:\n%s", a.Sources["body"], kept, text)
	}
}

func mustNew(t *testing.T, o Options) *Extractor {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLessRepeated(t *testing.T) {
	cand := func(from string, texts ...string) bodyCandidate {
		var bs []Block
		for _, s := range texts {
			bs = append(bs, Block{Kind: "p", Text: s})
		}
		return bodyCandidate{from: from, blocks: bs, sh: newShingleSet(bs)}
	}
	story := "the council voted on tuesday to close the old bridge for repairs until spring and to open the ferry"
	teaser := "the council voted on tuesday to close the old bridge"
	other := "most read today weather traffic sports subscribe to our newsletter for more news every morning"
	tests := []struct {
		name     string
		a, b     bodyCandidate
		want     string  // "" when the vote must go on
		distinct float64 // -1: not checked
	}{
		{"b holds the story twice", cand("trafilatura", story), cand("readability", story, story), "trafilatura", -1},
		{"a holds the story twice", cand("trafilatura", story, story), cand("readability", story), "readability", -1},
		{"a teaser beside the story", cand("trafilatura", story), cand("readability", teaser, story), "trafilatura", -1},
		{"a line more is not a second copy", cand("trafilatura", story), cand("readability", story, "share this story"), "", -1},
		{"the same text once each", cand("trafilatura", story), cand("readability", story), "", 1},
		{"different texts", cand("trafilatura", story), cand("readability", other, other), "", 0},
		{"both empty", cand("trafilatura"), cand("readability"), "", 1},
	}
	for _, tt := range tests {
		if got := distinctAgreement(tt.a.sh, tt.b.sh); tt.distinct >= 0 && math.Abs(got-tt.distinct) > 1e-9 {
			t.Errorf("%s: distinctAgreement = %v, want %v", tt.name, got, tt.distinct)
		}
		once, ok := lessRepeated(tt.a, tt.b)
		if ok != (tt.want != "") || once.from != tt.want {
			t.Errorf("%s: lessRepeated = %q, %v; want %q", tt.name, once.from, ok, tt.want)
		}
	}
}

// TestConsensusPrefersOneCopy runs the vote on a real page (Dragnet's 28, a Wall Street
// Journal story whose page holds its text twice) where go-readability and DOM Distiller
// both take both copies and go-trafilatura one: the single copy is the body.
func TestConsensusPrefersOneCopy(t *testing.T) {
	a, err := mustNew(t, Options{}).Extract(dragnetPage(t, "28"), "")
	if err != nil {
		t.Fatal(err)
	}
	const sentence = "Manufacturing activity in China declined in July"
	if n := strings.Count(a.Text(), sentence); n != 1 {
		t.Errorf("body (from %s) holds the story %d times, want once:\n%s", a.Sources["body"], n, a.Text())
	}
}

// TestConsensusRestoresDroppedProse runs the vote on a real page (Dragnet's R182, a recipe
// post) where go-trafilatura's body, which Readability agrees with, leaves out the long
// paragraph after the recipe's last step, and Readability keeps it in place.
func TestConsensusRestoresDroppedProse(t *testing.T) {
	a, err := mustNew(t, Options{}).Extract(dragnetPage(t, "R182"), "")
	if err != nil {
		t.Fatal(err)
	}
	text := a.Text()
	const dropped, before = "Remove pie from oven and cool completely", "Spread the pecan topping on the top of the pie"
	i, j := strings.Index(text, before), strings.Index(text, dropped)
	if a.Sources["body"] != "trafilatura" || i < 0 || j < i || strings.Count(text, dropped) != 1 {
		t.Errorf("body (from %s) does not hold the dropped paragraph once, after %q:\n%s", a.Sources["body"], before, text)
	}
}

func TestWithDroppedProse(t *testing.T) {
	long := "the council met on tuesday and after a long debate about the budget for the coming year it voted to close the old bridge over the river for repairs that will last until the spring"
	short := "Photo: the old bridge in winter"
	cand := func(from string, texts ...string) bodyCandidate {
		var bs []Block
		for _, s := range texts {
			bs = append(bs, Block{Kind: "p", Text: s})
		}
		return bodyCandidate{from: from, blocks: bs, sh: newShingleSet(bs)}
	}
	join := func(bs []Block) string {
		var out []string
		for _, b := range bs {
			out = append(out, b.Text)
		}
		return strings.Join(out, " | ")
	}
	tests := []struct {
		name   string
		tr, rd bodyCandidate
		want   string
	}{
		{"a long paragraph between shared blocks comes back in place", cand("trafilatura", "one", "two"), cand("readability", "one", long, "two"), "one | " + long + " | two"},
		{"a short block does not", cand("trafilatura", "one", "two"), cand("readability", "one", short, "two"), "one | two"},
		{"nor one before the first shared block", cand("trafilatura", "one", "two"), cand("readability", long, "one", "two"), "one | two"},
		{"nor one after the last", cand("trafilatura", "one", "two"), cand("readability", "one", "two", long), "one | two"},
		{"nor one go-trafilatura holds cut differently", cand("trafilatura", "one", long+" and more", "two"), cand("readability", "one", long, "two"), "one | " + long + " and more | two"},
	}
	for _, tt := range tests {
		if got := join(withDroppedProse(tt.tr, tt.rd)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
