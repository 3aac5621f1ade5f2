package focus

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/sonda-search/sonda/crawl"
)

// seedPriority is what every strategy but bfs gives seeds: they are fetched first.
const seedPriority = 2

// parkedPriority is what Fish and Shark give links found beyond their depth limit. The
// papers drop them; a frontier that never revises priorities keeps them at the bottom, so
// they are fetched only when nothing better is left (as Fish-search's "end of the list").
const parkedPriority = -1

// StrategyOptions configure NewStrategy. Relevance is required by every strategy that
// reads page judgments (all but random).
type StrategyOptions struct {
	Relevance *Relevance
	// Topics compare link text with the topic (shark, mlp, online); default: the
	// relevance analyzer's topics, or its page model's derived topic.
	Topics []*Topic
	Seed   uint64 // random choices (random, online exploration)

	BestN  BestNParams
	Fish   FishParams
	Shark  SharkParams
	MLP    *MLP // the trained link network (mlp); see TrainLinkMLP
	Online OnlineParams
	// Context selects the text of the distance features (mlp, online).
	Context ContextMode
	// Memo bounds the per-link state strategies keep between a link's discovery and its
	// fetch (default 1<<20 links).
	Memo int
}

type strategyInfo struct {
	name, doc string
	make      func(StrategyOptions) (crawl.LinkScorer, error)
}

var strategyList = []strategyInfo{
	{"random", "uniform random order (seed 001's training stage)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return NewRandom(o.Seed), nil
	}},
	{"best-first", "a link inherits its page's relevance (seed 001's baseline)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return &BestFirst{rel: o.Relevance}, nil
	}},
	{"best-n-first", "best-first in rounds of N fetches (Pant et al.)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return NewBestNFirst(o.Relevance, o.BestN), nil
	}},
	{"fish", "Fish-search (De Bra and Post 1994)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return NewFish(o.Relevance, o.Fish, o.Memo), nil
	}},
	{"shark", "Shark-search (Hersovici et al. 1998)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return NewShark(o.Relevance, o.Topics, o.Shark, o.Memo), nil
	}},
	{"mlp", "seed 001's 7-4-1 link network (train it with `sonda train links`)", func(o StrategyOptions) (crawl.LinkScorer, error) {
		if o.MLP == nil {
			return nil, fmt.Errorf("link strategy mlp needs a trained network (focus.link-model; `sonda train links` makes one)")
		}
		return NewMLPScorer(o.Relevance, o.Topics, o.MLP, o.Context), nil
	}},
	{"online", "sonda's default: learns from fetched pages during the crawl, with exploration", func(o StrategyOptions) (crawl.LinkScorer, error) {
		return NewOnline(o.Relevance, o.Topics, o.Online, o.Seed, o.Memo), nil
	}},
}

// Strategies lists the focus strategy names (crawl.LinkStrategies lists bfs).
func Strategies() []string {
	names := make([]string, len(strategyList))
	for i, s := range strategyList {
		names[i] = s.name
	}
	return names
}

// StrategyHelp describes each strategy in one line.
func StrategyHelp() string {
	var b strings.Builder
	for _, s := range strategyList {
		fmt.Fprintf(&b, "  %-13s %s\n", s.name, s.doc)
	}
	return b.String()
}

// IsStrategy reports whether name is a focus strategy.
func IsStrategy(name string) bool {
	for _, s := range strategyList {
		if s.name == name {
			return true
		}
	}
	return false
}

// NewStrategy builds the named strategy.
func NewStrategy(name string, o StrategyOptions) (crawl.LinkScorer, error) {
	if len(o.Topics) == 0 && o.Relevance != nil {
		o.Topics = o.Relevance.judge.Topics
		if len(o.Topics) == 0 && o.Relevance.judge.Model != nil {
			o.Topics = []*Topic{o.Relevance.judge.Model.Topic()}
		}
	}
	for _, s := range strategyList {
		if s.name != name {
			continue
		}
		if o.Relevance == nil && name != "random" {
			return nil, fmt.Errorf("link strategy %s ranks links by relevance: give a topic (--topic FILE) or a page model (--page-model FILE)", name)
		}
		scorer, err := s.make(o)
		if err != nil || name == "random" {
			return scorer, err
		}
		return TieBroken(scorer), nil
	}
	names := append([]string{"bfs"}, Strategies()...)
	sort.Strings(names)
	return nil, fmt.Errorf("unknown link strategy %q (choose one of %s)", name, strings.Join(names, ", "))
}

// TieBroken adds to every priority s gives a tiny amount fixed by the URL (at most 2e-5,
// far below any difference a strategy means), so that no two links tie. The frontier
// serves hosts whose best links tie in an order that can vary between runs; without ties,
// a sequential crawl repeats exactly, which experiments need. Among links that tied, the
// order becomes that of their URL hashes instead of discovery: no strategy here gives
// meaning to the order of equal scores beyond Fish-search's first children, which already
// score higher.
func TieBroken(s crawl.LinkScorer) crawl.LinkScorer {
	if c, ok := s.(Concurrent); ok {
		return concurrentTieBroken{tieBroken{s}, c}
	}
	return tieBroken{s}
}

type tieBroken struct{ crawl.LinkScorer }

func (t tieBroken) Score(l crawl.Link) float64 { return t.LinkScorer.Score(l) + tieBreak(l) }

func tieBreak(l crawl.Link) float64 {
	k := l.URL.Key()
	return float64(uint32(k[0])|uint32(k[1])<<8|uint32(k[2])<<16) * 1e-12
}

type concurrentTieBroken struct {
	tieBroken
	Concurrent
}

// Random gives links uniformly random priorities: the randomly ordered frontier of seed
// 001's training stage, whose every pop is a simple random sample of the frontier.
type Random struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewRandom returns a Random strategy with a fixed seed, so runs repeat.
func NewRandom(seed uint64) *Random { return &Random{rng: rand.New(rand.NewPCG(seed, 0x5eed))} }

// Score implements crawl.LinkScorer.
func (r *Random) Score(l crawl.Link) float64 {
	if l.Source == nil {
		return seedPriority + tieBreak(l) // seeds in a fixed order, so runs repeat
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rng.Float64()
}

// BestFirst is naive best-first (seed 001 Fig. 5, Cho et al. 1998): a link's priority is
// the relevance of the page it was found on. With a binary relevance it is GeoDiscover's
// "links taken from geo-interesting pages go first".
type BestFirst struct{ rel *Relevance }

// Score implements crawl.LinkScorer.
func (b *BestFirst) Score(l crawl.Link) float64 {
	switch {
	case l.Source == nil:
		return seedPriority
	case isRedirect(l):
		return l.Source.Item.Priority
	}
	return sourceInfo(b.rel, l.Source).score
}

// BestNParams configure Best-N-First.
type BestNParams struct {
	N int // URLs fetched at once (default 64, sonda's default crawl concurrency)
}

// BestNFirst is Best-N-First (seed 001 Fig. 6; Pant, Srinivasan and Menczer 2002): the N
// best links of the frontier are fetched together, and the links their pages carry, scored
// by their page's relevance, compete only from the next round on. Larger N explores more.
//
// sonda's frontier has no round barrier and keeps a link's priority from its discovery,
// so rounds cannot be expressed in priorities. Best-N-First is therefore best-first run
// with N fetches in flight (the crawl's concurrency, which Concurrency tells the caller to
// set): the N best URLs are always being fetched and links found on them join the
// competition when their page completes. It is the sliding-window form of the paper's
// rounds; with N = 1 it is naive best-first.
type BestNFirst struct {
	BestFirst
	N int
}

// NewBestNFirst returns Best-N-First.
func NewBestNFirst(rel *Relevance, p BestNParams) *BestNFirst {
	if p.N <= 0 {
		p.N = 64
	}
	return &BestNFirst{BestFirst: BestFirst{rel: rel}, N: p.N}
}

// Concurrency is the number of fetches the crawl must have in flight.
func (b *BestNFirst) Concurrency() int { return b.N }

// Concurrent is implemented by strategies that need a given crawl concurrency.
type Concurrent interface{ Concurrency() int }
