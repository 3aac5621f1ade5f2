package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// News is the news vertical's topic monitoring (package news, adapted by web/local): the
// reader's topics, each topic's stories, articles, and read state.
type News interface {
	Topics(ctx context.Context) ([]Topic, error)
	// AddTopic adds a topic (or returns the one of the same name) and the source URLs its
	// search providers proposed, which the server adds to the crawl's seeds.
	AddTopic(ctx context.Context, req TopicRequest) (Topic, []string, error)
	// Stories lists a topic's stories, newest first. An unknown topic is ErrNoTopic.
	Stories(ctx context.Context, topicID string, unreadOnly bool) ([]Story, error)
	Article(ctx context.Context, id string) (Article, bool, error)
	// MarkRead sets the read state of an article (and its story's other copies) in a topic.
	MarkRead(ctx context.Context, topicID, articleID string, read bool) error
}

// ErrNoTopic is what News implementations return (possibly wrapped) for an unknown topic.
var ErrNoTopic = errors.New("no such topic")

// ErrReadOnly is what News implementations return (possibly wrapped) for a change asked of
// a server that only reads its data (sonda serve --read-only): the API answers 503 with
// its message, which says where changes can be made.
var ErrReadOnly = errors.New("this server only reads its data directory (sonda serve --read-only): topics are added and articles marked read through a sonda serve without --read-only")

// Topic is a followed subject, with counts for the topic list.
type Topic struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Terms   []string  `json:"terms"`
	Sites   []string  `json:"sites"`
	Created time.Time `json:"created"`
	Stories int       `json:"stories"`
	Unread  int       `json:"unread"`
}

// TopicRequest adds a topic.
type TopicRequest struct {
	Name  string
	Terms []string
	Sites []string
}

// Story is one entry of a topic's list.
type Story struct {
	ID          string      `json:"id"`
	URL         string      `json:"url"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	SiteName    string      `json:"site_name"`
	Authors     []string    `json:"authors"`
	Published   *time.Time  `json:"published"` // null when the page gave no date
	Date        time.Time   `json:"date"`      // published, or when sonda first saw it
	Read        bool        `json:"read"`
	Score       float64     `json:"score"`
	Copies      []StoryCopy `json:"copies"`
}

// StoryCopy is another source of a story.
type StoryCopy struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	SiteName string `json:"site_name"`
}

// Article is an extracted article.
type Article struct {
	ID           string         `json:"id"`
	URL          string         `json:"url"`
	CanonicalURL string         `json:"canonical_url"`
	Title        string         `json:"title"`
	Description  string         `json:"description"`
	Authors      []string       `json:"authors"`
	Published    *time.Time     `json:"published"`
	Modified     *time.Time     `json:"modified"`
	SiteName     string         `json:"site_name"`
	Language     string         `json:"language"`
	Section      string         `json:"section"`
	Tags         []string       `json:"tags"`
	Image        string         `json:"image"`
	Body         []ArticleBlock `json:"body"`
	WordCount    int            `json:"word_count"`
}

// ArticleBlock is a paragraph, heading, list item or quotation of an article.
type ArticleBlock struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// newsRoutes are the topic-monitoring pages and API (query parameters only, like the rest).
func (s *Server) newsRoutes() []route {
	return []route{
		{"GET", "/topics", "topics-page", false, s.topicsPage},
		{"GET", "/article", "article-page", false, s.articlePage},
		{"GET", "/api/topics", "api-topics", false, s.apiTopics},
		{"POST", "/api/topics", "api-add-topic", true, s.apiAddTopic},
		{"GET", "/api/topic", "api-topic", false, s.apiTopic},
		{"POST", "/api/topic/read", "api-mark-read", true, s.apiMarkRead},
		{"GET", "/api/article", "api-article", false, s.apiArticle},
	}
}

// news returns the News backend, or answers 503 and returns nil.
func (s *Server) news(w http.ResponseWriter, r *http.Request) News {
	if s.o.News == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "this server has no news topics: turn on news.enabled (sonda init --profile news)")
		return nil
	}
	return s.o.News
}

// apiTopicList is the answer of GET /api/topics.
type apiTopicList struct {
	Topics []Topic `json:"topics"`
}

func (s *Server) apiTopics(w http.ResponseWriter, r *http.Request) {
	if topics, ok := s.topics(w, r); ok {
		writeJSON(w, http.StatusOK, apiTopicList{Topics: nonNil(topics)})
	}
}

// topics lists the topics; ok is false when it answered an error (503 without News).
func (s *Server) topics(w http.ResponseWriter, r *http.Request) ([]Topic, bool) {
	n := s.news(w, r)
	if n == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	topics, err := n.Topics(ctx)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	return topics, true
}

// apiAddedTopic is the answer of POST /api/topics.
type apiAddedTopic struct {
	Topic   Topic    `json:"topic"`
	Sources []string `json:"sources"` // added to the crawl's seeds
}

// splitList reads a parameter given as a comma-, space- or line-separated list, or repeated.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })...)
	}
	return out
}

func (s *Server) apiAddTopic(w http.ResponseWriter, r *http.Request) {
	n := s.news(w, r)
	if n == nil {
		return
	}
	q := r.URL.Query()
	req := TopicRequest{Name: strings.TrimSpace(q.Get("name")), Terms: splitList(q["terms"]), Sites: splitList(q["sites"])}
	if req.Name == "" {
		s.fail(w, r, http.StatusBadRequest, "give the topic's words: POST /api/topics?name=copa+do+mundo (optionally &sites=https://example.org/)")
		return
	}
	topic, sources, err := n.AddTopic(r.Context(), req)
	if errors.Is(err, ErrReadOnly) {
		s.fail(w, r, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if len(sources) > 0 && s.o.Crawl != nil {
		if err := s.o.Crawl.AddSeeds(r.Context(), sources); err != nil {
			s.log.Warn("the topic's sources could not be added to the crawl", "topic", topic.Name, "error", err)
		}
	}
	writeJSON(w, http.StatusOK, apiAddedTopic{Topic: topic, Sources: nonNil(sources)})
}

// apiTopicStories is the answer of GET /api/topic.
type apiTopicStories struct {
	Topic   Topic   `json:"topic"`
	Stories []Story `json:"stories"`
}

// topicStories finds the topic id among topics and its stories; ok is false when it
// answered an error.
func (s *Server) topicStories(w http.ResponseWriter, r *http.Request, n News, topics []Topic, id string, unreadOnly bool) (Topic, []Story, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	var topic *Topic
	for i := range topics {
		if topics[i].ID == id {
			topic = &topics[i]
		}
	}
	stories, err := n.Stories(ctx, id, unreadOnly)
	if topic == nil || errors.Is(err, ErrNoTopic) {
		s.fail(w, r, http.StatusNotFound, "no topic with id "+strconv.Quote(id)+": GET /api/topics lists them")
		return Topic{}, nil, false
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err.Error())
		return Topic{}, nil, false
	}
	return *topic, nonNil(stories), true
}

func (s *Server) apiTopic(w http.ResponseWriter, r *http.Request) {
	n := s.news(w, r)
	if n == nil {
		return
	}
	id := r.URL.Query().Get("id")
	if id == "" {
		s.fail(w, r, http.StatusBadRequest, "give the topic: /api/topic?id=TOPIC (ids come from /api/topics)")
		return
	}
	topics, ok := s.topics(w, r)
	if !ok {
		return
	}
	topic, stories, ok := s.topicStories(w, r, n, topics, id, isTrue(r.URL.Query().Get("unread")))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, apiTopicStories{Topic: topic, Stories: stories})
}

func isTrue(v string) bool {
	return v == "1" || strings.EqualFold(v, "true") || strings.EqualFold(v, "yes")
}

// apiReadState is the answer of POST /api/topic/read.
type apiReadState struct {
	Topic   string `json:"topic"`
	Article string `json:"article"`
	Read    bool   `json:"read"`
}

func (s *Server) apiMarkRead(w http.ResponseWriter, r *http.Request) {
	n := s.news(w, r)
	if n == nil {
		return
	}
	q := r.URL.Query()
	st := apiReadState{Topic: q.Get("id"), Article: q.Get("article"), Read: q.Get("read") == "" || isTrue(q.Get("read"))}
	if st.Topic == "" || st.Article == "" {
		s.fail(w, r, http.StatusBadRequest, "give the topic and the article: POST /api/topic/read?id=TOPIC&article=ARTICLE&read=true|false")
		return
	}
	switch err := n.MarkRead(r.Context(), st.Topic, st.Article, st.Read); {
	case errors.Is(err, ErrNoTopic):
		s.fail(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrReadOnly):
		s.fail(w, r, http.StatusServiceUnavailable, err.Error())
	case err != nil:
		s.fail(w, r, http.StatusBadRequest, err.Error())
	default:
		writeJSON(w, http.StatusOK, st)
	}
}

func (s *Server) apiArticle(w http.ResponseWriter, r *http.Request) {
	n := s.news(w, r)
	if n == nil {
		return
	}
	a, ok := s.article(w, r, n)
	if ok {
		writeJSON(w, http.StatusOK, a)
	}
}

// article finds the article named by the id parameter; ok is false when it answered an error.
func (s *Server) article(w http.ResponseWriter, r *http.Request, n News) (Article, bool) {
	id := r.URL.Query().Get("id")
	if id == "" {
		s.fail(w, r, http.StatusBadRequest, "give the article: ?id=ARTICLE (ids come from a topic's stories)")
		return Article{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	a, found, err := n.Article(ctx, id)
	switch {
	case err != nil:
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return Article{}, false
	case !found:
		s.fail(w, r, http.StatusNotFound, "no article with id "+strconv.Quote(id))
		return Article{}, false
	}
	a.Body = nonNil(a.Body)
	return a, true
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// topicsData is what the topics page shows: the topics on one side, the selected topic's
// stories on the other (the thesis's two panels, Figs. 21–22).
type topicsData struct {
	Topics     []Topic
	Selected   *Topic
	Stories    []Story
	UnreadOnly bool
}

func (s *Server) topicsPage(w http.ResponseWriter, r *http.Request) {
	topics, ok := s.topics(w, r)
	if !ok {
		return
	}
	d := topicsData{Topics: topics, UnreadOnly: isTrue(r.URL.Query().Get("unread"))}
	if id := r.URL.Query().Get("id"); id != "" {
		topic, stories, ok := s.topicStories(w, r, s.o.News, topics, id, d.UnreadOnly)
		if !ok {
			return
		}
		d.Selected, d.Stories = &topic, stories
	}
	title := "News topics"
	if d.Selected != nil {
		title = d.Selected.Name
	}
	s.render(w, http.StatusOK, "topics", page{Title: title, Nav: "news", Data: d})
}

// articleData is what the article view shows.
type articleData struct {
	Article   Article
	Published time.Time // zero when unknown
	Topic     string    // the topic the reader came from ("" when none): read state is kept there
}

func (s *Server) articlePage(w http.ResponseWriter, r *http.Request) {
	n := s.news(w, r)
	if n == nil {
		return
	}
	a, ok := s.article(w, r, n)
	if !ok {
		return
	}
	d := articleData{Article: a, Topic: r.URL.Query().Get("topic")}
	if a.Published != nil {
		d.Published = *a.Published
	}
	s.render(w, http.StatusOK, "article", page{Title: a.Title, Nav: "news", Data: d})
}
