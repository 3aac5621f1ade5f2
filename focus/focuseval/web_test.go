package focuseval

import (
	"net/http/httptest"
	"testing"

	"github.com/sonda-search/sonda/focus"
	"github.com/sonda-search/sonda/parse"
	"github.com/sonda-search/sonda/testweb/topical"
)

// BenchmarkTopicalWeb measures, on the web BenchmarkFocusStrategies crawls (same
// SONDA_FOCUS_TOPIC and SONDA_FOCUS_WEB_SEED), the two facts docs/benchmarks.md reads its
// figures by: topical locality (the share of an on-topic page's links, navigation within
// its site included, that lead to on-topic pages, against the topic's share of all pages)
// and how the crawler's own relevance judgment agrees with the ground truth over every
// page of the web. Every page is served, parsed and judged as a crawl would, in process.
//
//	go test -run XXX -bench TopicalWeb -benchtime 1x ./focus/focuseval
func BenchmarkTopicalWeb(b *testing.B) {
	topicName, webSeed := benchTopicAndSeed()
	topic, err := focus.LoadTopic(topicName)
	if err != nil {
		b.Fatal(err)
	}
	rel, err := focus.NewRelevance([]*focus.Topic{topic}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w := topical.New(topical.Config{Seed: webSeed})
		pages := w.Pages()
		var links, onTopicLinks, tp, fp, fn int
		for _, u := range pages {
			rr := httptest.NewRecorder()
			w.ServeHTTP(rr, httptest.NewRequest("GET", u, nil))
			pg, err := parse.Parse(rr.Body.Bytes(), u, parse.Options{})
			if err != nil {
				b.Fatalf("%s: %v", u, err)
			}
			text := pg.Text()
			j := rel.Judge().Judge(focus.NewPageText(u, pg.Title, text, focus.DetectLang(pg.Title+"\n"+text, pg.Lang)))
			onTopic := w.Relevant(u, topicName)
			switch {
			case j.Relevant && onTopic:
				tp++
			case j.Relevant:
				fp++
			case onTopic:
				fn++
			}
			if !onTopic {
				continue
			}
			for _, l := range pg.Links {
				if w.Label(l.URL) == "" {
					continue // outside the web's pages (robots.txt, a missing page)
				}
				links++
				if w.Relevant(l.URL, topicName) {
					onTopicLinks++
				}
			}
		}
		locality := float64(onTopicLinks) / float64(links)
		base := float64(w.Count(topicName)) / float64(len(pages))
		precision, recall := float64(tp)/float64(tp+fp), float64(tp)/float64(tp+fn)
		b.ReportMetric(locality, "locality")
		b.ReportMetric(base, "base-rate")
		b.ReportMetric(precision, "precision")
		b.ReportMetric(recall, "recall")
		b.Logf("%s: %d pages, %d about %s (base rate %.3f); %.3f of on-topic pages' %d links lead on topic; judgment: precision %.3f, recall %.3f (%d of %d found, %d false positives)",
			w.Describe(), len(pages), w.Count(topicName), topicName, base, locality, links, precision, recall, tp, tp+fn, fp)
	}
}
