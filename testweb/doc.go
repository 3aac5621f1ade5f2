// Package testweb is sonda's synthetic internet: a deterministic set of web
// sites served on loopback, the ground truth a correct crawl of them must
// match, and a server-side log of every request answered.
//
// One listener serves every site. The site is chosen by the Host header, so
// URLs look real (http://www.site07.test/news/quiet-river-3.html, port 80
// implied) and a crawler reaches them through a dial mapping such as
// "*.test=127.0.0.1:41234" (Web.Resolve). The ".test" top-level domain is
// reserved and never resolves on the real internet.
//
// New builds a model from Config.Seed: sites, pages, the links between them
// (written in many equivalent forms, so that "fetched once" also tests URL
// normalization), robots.txt files and a catalogue of awkward cases:
// redirect chains and loops, 4xx/5xx answers, slow and endless bodies,
// decompression bombs, mislabelled charsets, crawler traps, page-level robots
// directives, duplicates and non-HTML files. The ground truth (Reachable,
// Disallowed, BadCases, Traps, ...) is computed from that model by a
// breadth-first walk of its link graph, never by fetching.
//
// Pages are rendered on demand from per-page seeds rather than held in
// memory, so a web of thousands of hosts costs little RAM; huge bodies,
// endless streams and gzip bombs are generated while they are written.
//
// The package carries its own small robots.txt matcher for the ground truth
// instead of using package robots: the test web exists to check that package
// and must not share its bugs.
package testweb
