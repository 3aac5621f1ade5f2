//go:build tools

// Package deps pins modules that packages under construction will import, so that
// parallel work does not race on go.mod. It is never built (the "tools" build tag) and
// goes away once every module here is imported for real.
package deps

import (
	_ "github.com/PuerkitoBio/goquery"
	_ "github.com/blevesearch/bleve/v2"
	_ "github.com/chromedp/chromedp"
	_ "github.com/kljensen/snowball"
	_ "github.com/markusmobius/go-trafilatura"
	_ "github.com/mmcdole/gofeed"
	_ "github.com/wroge/wgs84"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
	_ "modernc.org/sqlite"
)
