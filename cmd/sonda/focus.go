package main

import (
	"strings"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/focus"
)

// linkStrategyHelp lists every strategy name for flag help.
func linkStrategyHelp() string {
	var names []string
	for _, n := range append(crawl.LinkStrategies(), focus.Strategies()...) {
		if n != "auto" {
			names = append(names, n)
		}
	}
	return "link prioritization: auto (online with a topic, else bfs), " + strings.Join(names, ", ")
}
