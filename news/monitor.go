package news

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/fingerprint"
	"github.com/sonda-search/sonda/store"
	"github.com/sonda-search/sonda/urlnorm"
)

// Keys under prefix o:
//
//	o t TOPIC-ID                  a topic (JSON)
//	o m TOPIC-ID 0x00 URL-KEY     an article of the topic: score, read state (JSON)
//	o g                           the topics' generation: changes whenever a topic is added or removed
const (
	prefixTopics = 'o'
	kindTopic    = 't'
	kindMember   = 'm'
)

var generationKey = []byte{prefixTopics, 'g'}

func topicKey(id string) []byte { return append([]byte{prefixTopics, kindTopic}, id...) }

func memberPrefix(id string) []byte {
	return append(append([]byte{prefixTopics, kindMember}, id...), 0)
}

func memberKey(id string, k store.URLKey) []byte { return append(memberPrefix(id), k[:]...) }

// member is an article's place in a topic.
type member struct {
	Score   float64   `json:"score"`
	Matched time.Time `json:"matched"`
	Read    bool      `json:"read,omitempty"`
}

// ArticleID is how the API names an article: the hex form of its URL key.
func ArticleID(k store.URLKey) string { return hex.EncodeToString(k[:]) }

// ParseArticleID reads an ArticleID.
func ParseArticleID(id string) (store.URLKey, error) {
	var k store.URLKey
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("news: %q is not an article id (32 hexadecimal digits)", id)
	}
	copy(k[:], b)
	return k, nil
}

// ErrNoTopic is returned for an unknown topic id.
var ErrNoTopic = errors.New("news: no such topic")

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Providers find sources for a new topic (default: the topic's own sites).
	Providers []SearchProvider
	// SourceInterval is how often a topic's sources are fetched again (default 24h, the
	// thesis's daily revisit); feeds and sitemaps keep their own schedule (package feeds).
	// A negative SourceInterval leaves the sources to the crawl's revisit policy
	// (revisit.policy), which then schedules them adaptively like any other page.
	SourceInterval time.Duration
	// Normalizer must be the crawl's, so source URLs compare equal to crawled ones.
	Normalizer *urlnorm.Normalizer
	Logger     *slog.Logger
}

// Monitor is topic monitoring: it keeps the topics, files each stored article under the
// topics it matches (as the news Analyzer stores it, in the same batch, and for every
// existing article when a topic is added), merges copies of one story in listings, keeps
// read state, asks the search providers for sources, and revisits those sources.
//
// Several Monitors may share one database (`sonda serve` has one for the web layer and
// one in each crawl it runs): each keeps the topics in memory and reloads them when the
// database's topic generation changes, which a topic added or removed anywhere does.
type Monitor struct {
	db      *store.DB
	opts    MonitorOptions
	matcher *Matcher

	mu         sync.RWMutex
	generation string
	topics     map[string]*Topic
	sources    map[string]bool // normalized source URLs of all topics
}

// OpenMonitor loads the topics of the crawl database db.
func OpenMonitor(db *store.DB, opts MonitorOptions) (*Monitor, error) {
	if opts.SourceInterval == 0 {
		opts.SourceInterval = 24 * time.Hour
	}
	if opts.Normalizer == nil {
		opts.Normalizer = urlnorm.New(urlnorm.DefaultOptions())
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if len(opts.Providers) == 0 {
		opts.Providers = []SearchProvider{SitesProvider{}}
	}
	m := &Monitor{db: db, opts: opts, matcher: NewMatcher()}
	if err := m.load(m.storedGeneration()); err != nil {
		return nil, err
	}
	return m, nil
}

// storedGeneration reads the database's topic generation ("" before the first topic).
func (m *Monitor) storedGeneration() string {
	v, closer, err := m.db.Pebble().Get(generationKey)
	if err != nil {
		return ""
	}
	defer closer.Close()
	return string(v)
}

// load reads every topic; gen is the generation they belong to.
func (m *Monitor) load(gen string) error {
	topics, sources := map[string]*Topic{}, map[string]bool{}
	lo := []byte{prefixTopics, kindTopic}
	it, err := m.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: store.PrefixEnd(lo)})
	if err != nil {
		return fmt.Errorf("news: read topics: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		t := new(Topic)
		if err := json.Unmarshal(it.Value(), t); err != nil {
			return fmt.Errorf("news: topic record %q is corrupt: %w", it.Key()[2:], err)
		}
		topics[t.ID] = t
		for _, s := range t.Sources {
			sources[s] = true
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	m.mu.Lock()
	m.topics, m.sources, m.generation = topics, sources, gen
	m.mu.Unlock()
	return nil
}

// refresh reloads the topics if another Monitor changed them.
func (m *Monitor) refresh() {
	gen := m.storedGeneration()
	m.mu.RLock()
	same := gen == m.generation
	m.mu.RUnlock()
	if !same {
		if err := m.load(gen); err != nil {
			m.opts.Logger.Warn("news: reloading topics failed", "error", err)
		}
	}
}

// bumpGeneration adds the write that marks the topics changed to b.
func (m *Monitor) bumpGeneration(b *pebble.Batch) (string, error) {
	gen := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(uint64(rand.Uint32()), 36)
	return gen, b.Set(generationKey, []byte(gen), nil)
}

// Topics lists the topics, newest first.
func (m *Monitor) Topics() []Topic {
	m.refresh()
	m.mu.RLock()
	out := make([]Topic, 0, len(m.topics))
	for _, t := range m.topics {
		out = append(out, *t)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Topic returns one topic.
func (m *Monitor) Topic(id string) (Topic, bool) {
	m.refresh()
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.topics[id]
	if !ok {
		return Topic{}, false
	}
	return *t, true
}

// TopicRequest describes a topic to add.
type TopicRequest struct {
	Name     string   `json:"name"`
	Terms    []string `json:"terms,omitempty"`
	Sites    []string `json:"sites,omitempty"`
	MinMatch float64  `json:"min_match,omitempty"`
}

// AddTopic adds a topic (or returns the existing one of the same name), files the stored
// articles that match it, and asks the search providers for sources. The sources are
// returned for the caller to crawl (a provider that fails is logged and skipped).
func (m *Monitor) AddTopic(ctx context.Context, req TopicRequest) (Topic, []Source, error) {
	name := strings.Join(strings.Fields(req.Name), " ")
	if name == "" {
		return Topic{}, nil, errors.New("news: a topic needs a name (the words to follow)")
	}
	if len(name) > 200 {
		return Topic{}, nil, errors.New("news: a topic name is at most 200 bytes")
	}
	id := TopicID(name)
	if t, ok := m.Topic(id); ok {
		return t, nil, nil
	}
	t := &Topic{ID: id, Name: name, Terms: req.Terms, MinMatch: req.MinMatch, Created: time.Now().UTC()}
	for _, s := range req.Sites {
		u, err := m.opts.Normalizer.Parse(strings.TrimSpace(s))
		if err != nil {
			return Topic{}, nil, fmt.Errorf("news: site %q: %w", s, err)
		}
		t.Sites = append(t.Sites, u.String())
	}
	var sources []Source
	for _, p := range m.opts.Providers {
		got, err := p.Sources(ctx, *t)
		if err != nil {
			m.opts.Logger.Warn("news: search provider failed", "provider", p.Name(), "topic", name, "error", err)
			continue
		}
		for _, s := range got {
			if u, err := m.opts.Normalizer.Parse(s.URL); err == nil {
				s.URL = u.String()
				sources = append(sources, s)
				t.Sources = append(t.Sources, s.URL)
			}
		}
	}
	t.Sources = dedupe(t.Sources)
	if err := m.fileExisting(t); err != nil {
		return Topic{}, nil, err
	}
	v, err := json.Marshal(t)
	if err != nil {
		return Topic{}, nil, err
	}
	b := m.db.Pebble().NewBatch()
	defer b.Close()
	gen, err := m.bumpGeneration(b)
	if err == nil {
		err = b.Set(topicKey(id), v, nil)
	}
	if err == nil {
		err = b.Commit(pebble.Sync)
	}
	if err != nil {
		return Topic{}, nil, fmt.Errorf("news: store topic %q: %w", name, err)
	}
	if err := m.load(gen); err != nil {
		return Topic{}, nil, err
	}
	return *t, sources, nil
}

// fileExisting files every stored article that matches t.
func (m *Monitor) fileExisting(t *Topic) error {
	b := m.db.Pebble().NewBatch()
	defer b.Close()
	now := time.Now().UTC()
	err := eachKeyed(m.db, func(k store.URLKey, a *Article) error {
		if score, ok := m.matcher.Match(t, &a.Article); ok {
			v, _ := json.Marshal(member{Score: score, Matched: now})
			return b.Set(memberKey(t.ID, k), v, nil)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// DeleteTopic removes a topic and its read state (not the articles).
func (m *Monitor) DeleteTopic(id string) error {
	if _, ok := m.Topic(id); !ok {
		return ErrNoTopic
	}
	b := m.db.Pebble().NewBatch()
	defer b.Close()
	gen, err := m.bumpGeneration(b)
	if err != nil {
		return err
	}
	_ = b.Delete(topicKey(id), nil)
	_ = b.DeleteRange(memberPrefix(id), store.PrefixEnd(memberPrefix(id)), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("news: delete topic %s: %w", id, err)
	}
	return m.load(gen)
}

// file returns the writes that file an article under the topics it matches and remove it
// from those it no longer matches, keeping read state. The Analyzer commits them with the
// article record.
func (m *Monitor) file(k store.URLKey, a *Article) func(store.Writer) error {
	m.refresh()
	m.mu.RLock()
	topics := make([]*Topic, 0, len(m.topics))
	for _, t := range m.topics {
		topics = append(topics, t)
	}
	m.mu.RUnlock()
	var changes []memberChange
	now := time.Now().UTC()
	prepared := m.matcher.Prepare(&a.Article)
	for _, t := range topics {
		key := memberKey(t.ID, k)
		prev, had := m.readMember(key)
		score, ok := prepared.Match(t)
		switch {
		case ok:
			mb := member{Score: score, Matched: now}
			if had {
				mb.Matched, mb.Read = prev.Matched, prev.Read
			}
			v, _ := json.Marshal(mb)
			changes = append(changes, memberChange{key, v})
		case had:
			changes = append(changes, memberChange{key: key})
		}
	}
	return writeMembers(changes)
}

// unfile returns the writes that remove an article from every topic.
func (m *Monitor) unfile(k store.URLKey) func(store.Writer) error {
	m.refresh()
	m.mu.RLock()
	var changes []memberChange
	for id := range m.topics {
		changes = append(changes, memberChange{key: memberKey(id, k)})
	}
	m.mu.RUnlock()
	return writeMembers(changes)
}

// memberChange is one write to a topic's member records.
type memberChange struct {
	key   []byte
	value []byte // nil: delete
}

// writeMembers returns the write of changes into a batch; deletes are skipped by a writer
// that cannot delete.
func writeMembers(changes []memberChange) func(store.Writer) error {
	return func(w store.Writer) error {
		d, canDelete := w.(deleter)
		for _, c := range changes {
			var err error
			switch {
			case c.value != nil:
				err = w.Set(c.key, c.value, nil)
			case canDelete:
				err = d.Delete(c.key, nil)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func (m *Monitor) readMember(key []byte) (member, bool) {
	v, closer, err := m.db.Pebble().Get(key)
	if err != nil {
		return member{}, false
	}
	defer closer.Close()
	var mb member
	if json.Unmarshal(v, &mb) != nil {
		return member{}, false
	}
	return mb, true
}

// Story is one entry of a topic's list: an article, with the other copies of the same
// story (syndicated or republished, recognized by canonical URL or SimHash) folded in.
type Story struct {
	ID          string    `json:"id"` // ArticleID of the copy shown
	URL         string    `json:"url"`
	Title       string    `json:"title"`
	Description string    `json:"description,omitempty"`
	SiteName    string    `json:"site_name,omitempty"`
	Authors     []string  `json:"authors,omitempty"`
	Published   time.Time `json:"published,omitzero"`
	Date        time.Time `json:"date"` // Published, or when sonda first saw it
	Score       float64   `json:"score"`
	Read        bool      `json:"read"`
	Copies      []Copy    `json:"copies,omitempty"`
}

// Copy is another source of a story.
type Copy struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	SiteName string `json:"site_name,omitempty"`
}

// Stories lists a topic's stories, newest first; unreadOnly keeps the unread ones.
func (m *Monitor) Stories(id string, unreadOnly bool) ([]Story, error) {
	if _, ok := m.Topic(id); !ok {
		return nil, ErrNoTopic
	}
	type entry struct {
		key store.URLKey
		a   *Article
		mb  member
		sim uint64
	}
	var entries []entry
	p := memberPrefix(id)
	it, err := m.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: store.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	for it.First(); it.Valid(); it.Next() {
		var k store.URLKey
		copy(k[:], it.Key()[len(p):])
		var mb member
		if err := json.Unmarshal(it.Value(), &mb); err != nil {
			continue
		}
		a, ok, err := Get(m.db, k)
		if err != nil || !ok {
			continue
		}
		sim, _ := strconv.ParseUint(a.SimHash, 16, 64)
		entries = append(entries, entry{k, a, mb, sim})
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	canon := make([]string, len(entries))
	sims := make([]uint64, len(entries))
	for i, e := range entries {
		canon[i], sims[i] = canonicalOf(e.a), e.sim
	}
	groups := storyGroups(canon, sims)
	var out []Story
	for _, members := range groups {
		// The copy shown is the earliest (the original, usually), ties by URL.
		sort.Slice(members, func(x, y int) bool {
			a, b := entries[members[x]].a, entries[members[y]].a
			if da, db := dateOf(a), dateOf(b); !da.Equal(db) {
				return da.Before(db)
			}
			return a.URL < b.URL
		})
		lead := entries[members[0]]
		st := Story{ID: ArticleID(lead.key), URL: lead.a.URL, Title: lead.a.Title, Description: lead.a.Description,
			SiteName: siteOf(lead.a), Authors: lead.a.Authors, Published: lead.a.Published, Date: dateOf(lead.a), Score: lead.mb.Score}
		for _, i := range members {
			e := entries[i]
			st.Read = st.Read || e.mb.Read
			st.Score = max(st.Score, e.mb.Score)
			if i != members[0] {
				st.Copies = append(st.Copies, Copy{ID: ArticleID(e.key), URL: e.a.URL, SiteName: siteOf(e.a)})
			}
		}
		if unreadOnly && st.Read {
			continue
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Date.Equal(out[j].Date) {
			return out[i].Date.After(out[j].Date)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// canonicalOf is the address an article says it is the copy of (rel=canonical, og:url),
// else its own: an AMP or print copy names the original, which is stored under its own URL.
func canonicalOf(a *Article) string {
	if a.CanonicalURL != "" {
		return strings.TrimSuffix(a.CanonicalURL, "/")
	}
	return strings.TrimSuffix(a.URL, "/")
}

func dateOf(a *Article) time.Time {
	if !a.Published.IsZero() {
		return a.Published
	}
	return a.FirstSeen
}

// siteOf names an article's source: its site name, else its host.
func siteOf(a *Article) string {
	if a.SiteName != "" {
		return a.SiteName
	}
	if u, err := url.Parse(a.URL); err == nil {
		return strings.TrimPrefix(u.Hostname(), "www.")
	}
	return ""
}

// MarkRead sets the read state of an article in a topic, and of every copy of its story.
func (m *Monitor) MarkRead(topicID, articleID string, read bool) error {
	if _, ok := m.Topic(topicID); !ok {
		return ErrNoTopic
	}
	k, err := ParseArticleID(articleID)
	if err != nil {
		return err
	}
	stories, err := m.Stories(topicID, false)
	if err != nil {
		return err
	}
	ids := []string{articleID}
	for _, s := range stories {
		in := s.ID == articleID
		for _, c := range s.Copies {
			in = in || c.ID == articleID
		}
		if in {
			ids = []string{s.ID}
			for _, c := range s.Copies {
				ids = append(ids, c.ID)
			}
			break
		}
	}
	if _, had := m.readMember(memberKey(topicID, k)); !had {
		return fmt.Errorf("news: article %s is not in topic %s", articleID, topicID)
	}
	b := m.db.Pebble().NewBatch()
	defer b.Close()
	for _, id := range ids {
		ck, err := ParseArticleID(id)
		if err != nil {
			continue
		}
		key := memberKey(topicID, ck)
		mb, had := m.readMember(key)
		if !had {
			continue
		}
		mb.Read = read
		v, _ := json.Marshal(mb)
		if err := b.Set(key, v, nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// Revisit implements crawl.RevisitOverride: the sources the providers proposed for the
// topics (the sites' home pages, the thesis's daily revisit) are fetched again every
// SourceInterval. Other URLs, and the sources too when SourceInterval is negative, are
// left to the next override or the revisit policy.
func (m *Monitor) Revisit(d *crawl.Document, now time.Time) (time.Time, bool) {
	if m.opts.SourceInterval < 0 {
		return time.Time{}, false
	}
	m.refresh()
	m.mu.RLock()
	ok := m.sources[d.URL.String()]
	m.mu.RUnlock()
	if !ok {
		return time.Time{}, false
	}
	if d.Fetch != nil && (d.Fetch.Status == 404 || d.Fetch.Status == 410) {
		return time.Time{}, true
	}
	return now.Add(m.opts.SourceInterval), true
}

// eachKeyed is Each with the URL key of every record.
func eachKeyed(db *store.DB, fn func(store.URLKey, *Article) error) error {
	return store.EachRecord(db, prefixArticle, "article record", fn)
}

// storyGroups groups copies of one story: articles with the same canonical URL, or with
// SimHashes within fingerprint.NearDuplicateBits, directly or through other copies
// (union-find). canon[i] ("" for none) and sims[i] (0 for none) describe article i; the
// groups list article indexes. Candidate pairs come from the SimHash bands
// (fingerprint.Bands: near copies share at least one), so n articles cost about n map
// lookups rather than n² comparisons.
func storyGroups(canon []string, sims []uint64) map[int][]int {
	parent := make([]int, len(sims))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) { parent[find(i)] = find(j) }
	byCanon := map[string]int{}
	bySim := map[uint64]int{} // the first article with each SimHash
	var byBand [4]map[uint16][]int
	for b := range byBand {
		byBand[b] = map[uint16][]int{}
	}
	for i, sim := range sims {
		if c := canon[i]; c != "" {
			if j, ok := byCanon[c]; ok {
				union(i, j)
			} else {
				byCanon[c] = i
			}
		}
		if sim == 0 {
			continue
		}
		if j, ok := bySim[sim]; ok {
			union(i, j) // an exact copy: the first one's comparisons stand for it
			continue
		}
		bySim[sim] = i
		for b, v := range fingerprint.Bands(sim) {
			for _, j := range byBand[b][v] {
				if fingerprint.NearDuplicate(sim, sims[j]) {
					union(i, j)
				}
			}
			byBand[b][v] = append(byBand[b][v], i)
		}
	}
	groups := map[int][]int{}
	for i := range sims {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	return groups
}
