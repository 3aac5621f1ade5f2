package extract

import (
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
)

func TestTrimLinkList(t *testing.T) {
	page := `<html><body><div class="story">
<h1>Bridge closes for repairs</h1>
<p>The council voted on Tuesday to close the old bridge for repairs until the spring, and to open the ferry in the meantime.</p>
<p>Residents can <a href="/ferry">read the ferry timetable</a> online.</p>
<p>The works will cost four million pounds, the council said in a statement after the vote.</p>
%s
</div></body></html>`
	tests := []struct {
		name, tail string
		want       string // the body's last block
	}{
		{"a list of links and its lead-in go", `<p><strong>More from our site:</strong></p><ul><li><a href="/a">Ferry fares rise again</a></li><li><a href="/b">Council elections: who is standing</a></li><li><a href="/c">Weather</a></li></ul>`,
			"The works will cost four million pounds, the council said in a statement after the vote."},
		{"under a heading", `<h3>Related stories</h3><ul><li><a href="/a">Ferry fares rise again</a></li><li><a href="/b">Council elections: who is standing</a></li><li><a href="/c">Weather</a></li></ul>`,
			"The works will cost four million pounds, the council said in a statement after the vote."},
		{"one link is the article's own", `<p><a href="/tickets">For tickets and times, click here.</a></p>`,
			"For tickets and times, click here."},
		{"two are not yet a list", `<p>Read more:</p><p><a href="/a">Ferry fares rise again</a></p><p><a href="/b">Council elections: who is standing</a></p>`,
			"Council elections: who is standing"},
		{"links within text stay", `<p>Read <a href="/a">the report</a> and <a href="/b">the minutes</a> of the meeting, published by the council on its web site.</p><p><a href="/c">Ferry</a> and <a href="/d">bus</a> times are on the transport page, which the council updates daily.</p>`,
			"Ferry and bus times are on the transport page, which the council updates daily."},
	}
	for _, tt := range tests {
		doc, err := nethtml.Parse(strings.NewReader(strings.Replace(page, "%s", tt.tail, 1)))
		if err != nil {
			t.Fatal(err)
		}
		bs := trimLinkList(blocks(doc, nil), linkShares(doc))
		if got := bs[len(bs)-1].Text; got != tt.want {
			t.Errorf("%s: body ends with %q, want %q", tt.name, got, tt.want)
		}
	}
	// A page that is a list of links (a roundup) keeps them: they are its content.
	doc, _ := nethtml.Parse(strings.NewReader(`<body><p>Links for today.</p><ul><li><a href="/a">Ferry fares rise again this winter</a></li><li><a href="/b">Council elections: who is standing</a></li><li><a href="/c">Weather warnings for the weekend</a></li></ul></body>`))
	if bs := trimLinkList(blocks(doc, nil), linkShares(doc)); len(bs) != 4 {
		t.Errorf("roundup: %d blocks left, want all 4", len(bs))
	}
}

// TestConsensusDropsTrailingLinks runs the extractor on a real news page (Dragnet's 495,
// an NBC News story) whose article container ends with "More content from NBCNews.com:"
// over seven headlines, which every extractor keeps: the body ends with the story.
func TestConsensusDropsTrailingLinks(t *testing.T) {
	checkEndTrimmed(t, "495", "Wilson, a village in Niagara County, is located along Lake Ontario",
		"Theater massacre suspect appears in Colorado court", "More content from NBCNews.com")
}
