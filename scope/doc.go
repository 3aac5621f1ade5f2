// Package scope decides which URLs the crawler may follow: the seed-relative follow policy,
// host, domain and regular-expression allow and deny lists, link depth, pages per host, and
// guards against crawler traps (overlong URLs, too many or repeating path segments, endless
// query variations such as calendars and session ids).
//
// # Precedence
//
// Every rule is a filter: a URL is in scope only if it passes all of them, and no rule can
// grant an exception to another. So deny always beats allow, and the allow-lists and the
// follow policy apply together:
//
//   - Deny-lists (DenyHosts, DenyDomains, Deny) refuse what they match.
//   - Each non-empty allow-list (AllowHosts, AllowDomains, Allow) refuses what it does not
//     match. Within one list any entry may match; across lists all apply: AllowDomains
//     [example.com] with Allow [/news/] admits only example.com URLs that contain /news/.
//   - Follow applies in addition: "domain" (the default) admits only the registrable domains
//     of the seeds, "host" only the seeds' hosts (host key: host plus non-default port),
//     "any" everything. To crawl exactly what the allow-lists say, set Follow to "any".
//
// Check evaluates the stateless rules in this fixed order and reports the first that refuses,
// so the Rule of a Verdict is deterministic: scheme, max-url-length, max-path-segments,
// trap-repeated-segments, max-depth, deny-host, deny-domain, follow-host or follow-domain,
// allow-host, allow-domain, deny-regex, allow-regex (cheap checks first, regular expressions
// last). Two rules depend on what the crawler has seen and are separate calls:
// CheckHostPages (max-pages-per-host, from the crawler's per-host count) and CheckVariants
// (trap-query-variants, through a VariantCounter the crawler keeps on disk).
//
// # Seeds
//
// Follow is relative to the seeds. A crawl that is resumed, or given more seeds while it
// runs, must not forget earlier ones: the crawler keeps every seed it was ever given and
// passes them all to Compile when it starts, and calls AddSeeds for seeds added to a live
// crawl. Scopes are safe for concurrent use; AddSeeds does not block Check.
package scope
