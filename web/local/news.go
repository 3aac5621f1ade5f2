package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sonda-search/sonda/news"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/web"
)

// NewsBackend adapts the news vertical's topic monitoring (a news.Monitor on the crawl
// database db) to the web layer's News interface.
func NewsBackend(db *store.DB, mon *news.Monitor) web.News { return newsBackend{db: db, mon: mon} }

type newsBackend struct {
	db  *store.DB
	mon *news.Monitor
}

// noTopic turns the news package's unknown-topic error into the web layer's.
func noTopic(err error) error {
	if errors.Is(err, news.ErrNoTopic) {
		return fmt.Errorf("%w: %v", web.ErrNoTopic, err)
	}
	return err
}

func (b newsBackend) Topics(ctx context.Context) ([]web.Topic, error) {
	var out []web.Topic
	for _, t := range b.mon.Topics() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stories, err := b.mon.Stories(t.ID, false)
		if err != nil {
			return nil, noTopic(err)
		}
		wt := webTopic(t)
		wt.Stories = len(stories)
		for _, s := range stories {
			if !s.Read {
				wt.Unread++
			}
		}
		out = append(out, wt)
	}
	return out, nil
}

func webTopic(t news.Topic) web.Topic {
	terms, sites := t.Terms, t.Sites
	if terms == nil {
		terms = []string{}
	}
	if sites == nil {
		sites = []string{}
	}
	return web.Topic{ID: t.ID, Name: t.Name, Terms: terms, Sites: sites, Created: t.Created}
}

func (b newsBackend) AddTopic(ctx context.Context, req web.TopicRequest) (web.Topic, []string, error) {
	if b.db.ReadOnly() {
		return web.Topic{}, nil, web.ErrReadOnly
	}
	t, sources, err := b.mon.AddTopic(ctx, news.TopicRequest{Name: req.Name, Terms: req.Terms, Sites: req.Sites})
	if err != nil {
		return web.Topic{}, nil, err
	}
	urls := make([]string, 0, len(sources))
	for _, s := range sources {
		urls = append(urls, s.URL)
	}
	return webTopic(t), urls, nil
}

func (b newsBackend) Stories(_ context.Context, topicID string, unreadOnly bool) ([]web.Story, error) {
	stories, err := b.mon.Stories(topicID, unreadOnly)
	if err != nil {
		return nil, noTopic(err)
	}
	out := make([]web.Story, 0, len(stories))
	for _, s := range stories {
		ws := web.Story{ID: s.ID, URL: s.URL, Title: s.Title, Description: s.Description, SiteName: s.SiteName,
			Authors: s.Authors, Published: timePtr(s.Published), Date: s.Date, Read: s.Read, Score: s.Score, Copies: []web.StoryCopy{}}
		for _, c := range s.Copies {
			ws.Copies = append(ws.Copies, web.StoryCopy{ID: c.ID, URL: c.URL, SiteName: c.SiteName})
		}
		out = append(out, ws)
	}
	return out, nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (b newsBackend) Article(_ context.Context, id string) (web.Article, bool, error) {
	k, err := news.ParseArticleID(id)
	if err != nil {
		return web.Article{}, false, err
	}
	a, ok, err := news.Get(b.db, k)
	if err != nil || !ok {
		return web.Article{}, false, err
	}
	wa := web.Article{ID: id, URL: a.URL, CanonicalURL: a.CanonicalURL, Title: a.Title, Description: a.Description,
		Authors: a.Authors, Published: timePtr(a.Published), Modified: timePtr(a.Modified), SiteName: a.SiteName,
		Language: a.Language, Section: a.Section, Tags: a.Tags, Image: a.Image, WordCount: a.WordCount}
	for _, bl := range a.Body {
		wa.Body = append(wa.Body, web.ArticleBlock{Kind: bl.Kind, Text: bl.Text})
	}
	return wa, true, nil
}

func (b newsBackend) MarkRead(_ context.Context, topicID, articleID string, read bool) error {
	if b.db.ReadOnly() {
		return web.ErrReadOnly
	}
	return noTopic(b.mon.MarkRead(topicID, articleID, read))
}
