package testweb

// vocabulary is the word list page text is drawn from: common English words
// with a few domain flavours, so that tokenizers, stop-word lists and
// relevance scorers see text that looks like prose.
var vocabulary = [...]string{
	"the", "of", "and", "to", "in", "for", "on", "with", "as", "by",
	"at", "from", "that", "this", "is", "are", "was", "be", "it", "or",
	"river", "valley", "mountain", "forest", "coast", "island", "harbor", "desert", "plain", "lake",
	"city", "village", "county", "region", "district", "border", "road", "bridge", "tower", "market",
	"report", "survey", "study", "record", "archive", "library", "catalog", "index", "journal", "notice",
	"energy", "reactor", "fuel", "power", "grid", "solar", "wind", "water", "carbon", "climate",
	"map", "atlas", "satellite", "image", "layer", "dataset", "coordinate", "elevation", "boundary", "census",
	"news", "story", "article", "editor", "reader", "column", "headline", "interview", "opinion", "review",
	"school", "student", "teacher", "lesson", "course", "science", "history", "language", "music", "art",
	"health", "doctor", "clinic", "patient", "nurse", "medicine", "research", "trial", "result", "method",
	"quiet", "bright", "ancient", "modern", "northern", "southern", "eastern", "western", "central", "local",
	"small", "large", "early", "late", "public", "private", "open", "free", "new", "old",
	"build", "measure", "collect", "publish", "update", "describe", "compare", "estimate", "observe", "explain",
	"growth", "change", "season", "winter", "summer", "spring", "autumn", "rain", "storm", "drought",
	"farm", "harvest", "crop", "cattle", "orchard", "garden", "field", "soil", "seed", "tool",
	"ship", "train", "airport", "station", "route", "journey", "traveler", "guide", "ticket", "hotel",
	"company", "worker", "office", "budget", "price", "trade", "export", "import", "factory", "industry",
	"council", "mayor", "law", "court", "vote", "policy", "agency", "program", "plan", "project",
	"network", "server", "crawler", "search", "query", "page", "link", "anchor", "feed", "sitemap",
	"family", "child", "festival", "museum", "theater", "painting", "poem", "novel", "song", "dance",
	"bird", "fish", "whale", "wolf", "bear", "insect", "flower", "tree", "leaf", "stone",
	"copper", "iron", "gold", "silver", "salt", "oil", "gas", "mine", "well", "pipeline",
	"morning", "evening", "night", "week", "month", "year", "decade", "century", "moment", "hour",
	"careful", "simple", "useful", "complete", "partial", "exact", "rough", "steady", "sudden", "gentle",
}

// sections are the first path segments of ordinary pages.
var sections = [...]string{
	"news", "guides", "docs", "blog", "about", "archive", "reports", "events", "projects", "library",
}
