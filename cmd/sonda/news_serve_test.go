package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sonda-search/sonda/testweb"
)

// TestServeNewsTopics: with news.enabled, `sonda serve` follows a topic added through its
// API: the topic's site is crawled and its matching article is listed with its metadata.
func TestServeNewsTopics(t *testing.T) {
	t.Parallel()
	article := `<html lang="pt-BR"><head><title>Greve dos caminhoneiros chega ao quinto dia</title>
<meta property="og:title" content="Greve dos caminhoneiros chega ao quinto dia"><meta property="og:site_name" content="Gazeta">
<meta property="article:published_time" content="2018-05-25T09:00:00-03:00"></head><body><article>` +
		strings.Repeat("<p>Os caminhoneiros mantêm a greve nas estradas e o governo negocia o preço do diesel com os sindicatos.</p>", 8) +
		`</article></body></html>`
	site, addr := serveWeb(t, testweb.Config{Seed: 6, Hosts: 2, PagesPerHost: 3, Disable: testweb.AllFeatures &^ testweb.Robots,
		Extra: func(host string, _ *rand.Rand) []testweb.Page {
			return []testweb.Page{{Path: "/news/greve.html", Title: "Greve", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, article)
			})}}
		}})
	const token = "serve-news-token-0123456789"
	_, base, out := startServe(t, t.TempDir(), append(quickEnv, "SONDA_SERVE_TOKEN="+token, "SONDA_FETCH_ALLOW_PRIVATE=true",
		"SONDA_FETCH_RESOLVE=*.test="+addr, "SONDA_POLITENESS_MIN_DELAY=0s", "SONDA_NEWS_ENABLED=true",
		"SONDA_FEEDS_ENABLED=true", "SONDA_FEEDS_INTERVAL=-1s", "SONDA_NEWS_SOURCE_INTERVAL=1000h")...)
	waitFor(t, 10*time.Second, "the server", func() bool { return strings.Contains(out.String(), "press Ctrl-C") })

	home := site.Seeds()[0]
	code, body := httpDo(t, "POST", base+"/api/topics?"+url.Values{"name": {"greve caminhoneiros"}, "sites": {home}}.Encode(), token, "")
	var added struct {
		Topic   struct{ ID string }
		Sources []string
	}
	if code != 200 || json.Unmarshal([]byte(body), &added) != nil || len(added.Sources) != 1 {
		t.Fatalf("add topic: %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", base+"/api/crawl/start", token, `{}`); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var got struct {
		Stories []struct {
			URL, Title, Published string
			SiteName              string `json:"site_name"`
		}
	}
	waitFor(t, 30*time.Second, "the topic's article", func() bool {
		_, body := httpDo(t, "GET", base+"/api/topic?id="+added.Topic.ID, "", "")
		return json.Unmarshal([]byte(body), &got) == nil && len(got.Stories) > 0
	})
	s := got.Stories[0]
	if !strings.HasSuffix(s.URL, "/news/greve.html") || s.Title != "Greve dos caminhoneiros chega ao quinto dia" || s.Published != "2018-05-25T09:00:00-03:00" || s.SiteName != "Gazeta" {
		t.Errorf("story %+v", s)
	}
	if code, body := httpDo(t, "GET", base+"/topics?id="+added.Topic.ID, "", ""); code != 200 || !strings.Contains(body, "Greve dos caminhoneiros") {
		t.Errorf("topics page: %d", code)
	}
}
