package focus

import (
	"fmt"
	"testing"
)

// TestOnlineLearns: links whose anchor says "zebra" keep leading to relevant pages and
// links saying "giraffe" to irrelevant ones; the learner, which starts knowing neither
// word, must come to rank zebra links first, from irrelevant pages too.
func TestOnlineLearns(t *testing.T) {
	rel := testRelevance(t)
	o := NewOnline(rel, nil, OnlineParams{Explore: -1, Bonus: -1}, 1, 0)
	page := func(i int) string {
		return fmt.Sprintf(`<html><body><p>Butter and sugar. <a href="http://z%d.test/">zebra</a> and <a href="http://g%d.test/">giraffe</a>.</p></body></html>`, i, i)
	}
	first := fetched(t, rel, "http://src0.test/", page(0))
	z0, g0 := o.Score(link(t, first, 0)), o.Score(link(t, first, 1))
	if z0 != g0 {
		t.Fatalf("before learning the two anchors are unknown words and must score alike: %v %v", z0, g0)
	}
	for i := 1; i <= 30; i++ {
		src := fetched(t, rel, fmt.Sprintf("http://src%d.test/", i), page(i))
		o.Score(link(t, src, 0))
		o.Score(link(t, src, 1))
		fetched(t, rel, fmt.Sprintf("http://z%d.test/", i), `<html><p>The nuclear reactor uses uranium fuel.</p></html>`)
		fetched(t, rel, fmt.Sprintf("http://g%d.test/", i), `<html><p>Flour, eggs and milk.</p></html>`)
	}
	if o.Learned() != 60 {
		t.Fatalf("learned from %d pages, want 60", o.Learned())
	}
	last := fetched(t, rel, "http://src99.test/", page(99))
	z, g := o.Score(link(t, last, 0)), o.Score(link(t, last, 1))
	if z <= g+0.2 {
		t.Errorf("after learning: zebra %.3f, giraffe %.3f", z, g)
	}
	if s := o.Score(seedLink(t, "http://seed.test/")); s != seedPriority {
		t.Errorf("seed %v", s)
	}
}

func TestOnlineExploresUnknownHosts(t *testing.T) {
	rel := testRelevance(t)
	o := NewOnline(rel, nil, OnlineParams{Explore: -1}, 1, 0)
	src := fetched(t, rel, "http://a.test/", `<html><p>Words <a href="http://known.test/x">x</a> <a href="http://new.test/x">x</a></p></html>`)
	for i := 0; i < 20; i++ {
		fetched(t, rel, fmt.Sprintf("http://known.test/p%d", i), `<html><p>Flour.</p></html>`)
	}
	if known, unknown := o.Score(link(t, src, 0)), o.Score(link(t, src, 1)); unknown <= known {
		t.Errorf("a host never fetched must get the exploration bonus: known %.3f, new %.3f", known, unknown)
	}
}
