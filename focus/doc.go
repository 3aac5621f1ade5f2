// Package focus owns focused crawling: what a crawl looks for (topics), how a fetched page
// is judged (relevance), and how the links it carries are ranked before they are fetched
// (link strategies). A focused crawler exists to spend its fetches on relevant pages, so
// the measure of everything here is the harvest rate: relevant pages / fetched pages.
//
// # Topics and relevance
//
// A Topic (YAML, see topics/) holds weighted keywords per language and/or example pages,
// a threshold and optional keyword/regex rules. Keywords go through the same text analyzer
// as pages (package text). The Relevance analyzer judges every fetched page: its score is
// the seed 001 post-score, cosine(topic vector, page term frequencies), or, with a trained
// PageModel (`sonda train page`), the model's probability; rules can require, exclude or
// force relevance. Several topics may be given; the best one scores the page.
//
// # Link strategies
//
// Strategies are crawl.LinkScorers, selectable by name (Strategies, NewStrategy):
//
//	bfs           breadth-first (package crawl)
//	random        uniform random order: seed 001's training-stage frontier
//	best-first    naive best-first: a link inherits its page's relevance (seed 001's baseline;
//	              GeoDiscover's "links from relevant pages first" is its binary form)
//	best-n-first  best-first fetched in rounds of N (Pant et al.)
//	fish          Fish-search (De Bra and Post 1994)
//	shark         Shark-search (Hersovici et al. 1998)
//	mlp           seed 001's 7-4-1 link MLP, trained on a random-order crawl (TrainLinkMLP)
//	online        sonda's default: a link classifier that learns during the crawl from the
//	              pages it fetches, with exploration (Online)
//
// The crawl frontier stores a link's priority when the link is discovered and never
// revises it, so every strategy here scores a link once, from what is known at discovery.
// The papers' "re-sort the list when a child is rediscovered with a better score" steps
// (Fish, Shark) are therefore not reproduced; each strategy's comment says where it differs
// from its paper for that reason.
package focus
