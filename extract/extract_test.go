package extract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	nethtml "golang.org/x/net/html"
)

// fig19 is the thesis's Fig. 19: the paragraphs it extracts are the two first <p> of the
// <article>, the one inside its <div> and the last one.
const fig19 = `<!DOCTYPE html>
<html lang="pt-br">
<head>
  <meta charset="UTF-8">
  <title>...</title>
</head>
<body>
  <p>Mauris eu diam commodo, dignissim nisl quis, egestas tellus. Vivamus sit amet nibh euismod, mollis ante a, commodo risus.</p>
  <article>
    <header>Cras ac scelerisque nibh. Curabitur non fermentum lorem, vel volutpat velit. Sed consectetur leo eget tempor mattis. Sed porttitor varius ullamcorper.</header>
    <p>Lorem ipsum dolor sit amet, consectetur adipiscing elit. Donec ornare ante ut mollis condimentum. Morbi consectetur massa ac nisi efficitur, et vehicula nunc ultrices. Maecenas vitae ex sem.</p>
    <p>Mauris vel ipsum fermentum, sodales purus ultricies, molestie est. Phasellus pulvinar, lacus in malesuada facilisis, diam enim fringilla magna, non' pulvinar magna libero vel lectus.</p>
    <div>
      <p>Cras eu ex congue, mattis elit nec, condimentum erat. Proin accumsan ullamcorper metus, nec fringilla odio blandit ac. Sed eleifend dictum lorem, eget tincidunt leo suscipit quis.</p>
    </div>
    <aside>
      <p>Nulla nec tempus velit, ut fringilla nisl. Ut orci odio, malesuada eu ullamcorper ac, ullamcorper eget justo. Nam convallis euismod orci, sit amet luctus augue ultricies eu.</p>
    </aside>
    <p>Donec ac arcu scelerisque, molestie arcu vel, interdum nisi. Vestibulum ante ipsum primis in faucibus orci luctus et ultrices posuere cubilia Curae; In tempor, risus vel aliquam vestibulum, magna tellus mattis neque, vel ultrices enim dui nec eros. Vivamus consequat vel quam non blandit. Ut ut ex ante. Ut iaculis ut dolor ut sodales. Aliquam a velit non odio ornare ultrices ac ut tortor.</p>
  </article>
</body>
</html>`

var fig19Paragraphs = []string{
	"Lorem ipsum dolor sit amet, consectetur adipiscing elit. Donec ornare ante ut mollis condimentum. Morbi consectetur massa ac nisi efficitur, et vehicula nunc ultrices. Maecenas vitae ex sem.",
	"Mauris vel ipsum fermentum, sodales purus ultricies, molestie est. Phasellus pulvinar, lacus in malesuada facilisis, diam enim fringilla magna, non' pulvinar magna libero vel lectus.",
	"Cras eu ex congue, mattis elit nec, condimentum erat. Proin accumsan ullamcorper metus, nec fringilla odio blandit ac. Sed eleifend dictum lorem, eget tincidunt leo suscipit quis.",
	"Donec ac arcu scelerisque, molestie arcu vel, interdum nisi. Vestibulum ante ipsum primis in faucibus orci luctus et ultrices posuere cubilia Curae; In tempor, risus vel aliquam vestibulum, magna tellus mattis neque, vel ultrices enim dui nec eros. Vivamus consequat vel quam non blandit. Ut ut ex ante. Ut iaculis ut dolor ut sodales. Aliquam a velit non odio ornare ultrices ac ut tortor.",
}

// fig17 is the thesis's Fig. 17: the Open Graph block of an r7.com article.
const fig17 = `<meta property="og:locale" content="pt_BR">
<meta property="og:url" content="https://noticias.r7.com/saude/vacinacao-contr-a-gripe-tem-dia-d-hoje-e-mira-40">
<meta property="og:title" content="Vacinação contra a gripe tem 'Dia D' hoje e mira 40 milhões de brasileiros">
<meta property="og:site_name" content="R7.com">
<meta property="og:description" content="Desde início do ano, vírus da doença já matou 158 no País. Vacinação é">
<meta property="og:type" content="article">
<meta property="article:author" content="R7.com">
<meta property="article:section" content="Saúde">
<meta property="article:tag" content="influenza, h1n1, h3n2, gripe, campanha">
<meta property="article:published_time" content="2018-05-12T05:00:00-03:00">
<meta property="article:modified_time" content="2018-05-12T08:03:49-03:00">
<meta property="og:image" content="https://img.r7.com/images/vacina-influenza-11052018151650829">
<meta property="og:image:width" content="660">
<meta property="og:image:height" content="360">`

func mustExtract(t testing.TB, mode Mode, page, url string) *Article {
	t.Helper()
	ex, err := New(Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ex.Extract([]byte(page), url)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// prose is n sentences of ordinary text, enough for any body threshold.
func prose(topic string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<p>The %s story continues in paragraph %d, where officials explained the plan to residents and answered their questions at length.</p>\n", topic, i+1)
	}
	return b.String()
}

func TestThesisFig19(t *testing.T) {
	a := mustExtract(t, ModeThesis, fig19, "")
	if got := a.Paragraphs(); !reflect.DeepEqual(got, fig19Paragraphs) {
		t.Errorf("thesis paragraphs:\n got %q\nwant %q", got, fig19Paragraphs)
	}
	if !a.IsArticle || a.Kind != KindArticle {
		t.Errorf("Fig. 19 is an article under the thesis's validity rule: %+v", a)
	}
	if a.Description != ThesisPlaceholder {
		t.Errorf("missing og:description must give the placeholder, got %q", a.Description)
	}
	if a.Title != "..." {
		t.Errorf("missing og:title must fall back to <title>, got %q", a.Title)
	}
}

func TestThesisArticleInsideSection(t *testing.T) {
	// The thesis's XPath tested ancestors up to the root: this layout lost every paragraph.
	page := `<html><body><section class="page"><header>Site</header>
		<article><h1>Title</h1><p>First paragraph of the story.</p><section><p>Related box.</p></section>
		<p>Second paragraph of the story.</p></article></section></body></html>`
	got := mustExtract(t, ModeThesis, page, "").Paragraphs()
	want := []string{"First paragraph of the story.", "Second paragraph of the story."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("article inside <section>: got %q, want %q", got, want)
	}
	// The same holds for an <article> inside <header> or <footer> of the page.
	page = strings.ReplaceAll(page, `<section class="page">`, `<footer>`)
	page = strings.Replace(page, `</article></section>`, `</article></footer>`, 1)
	if got := mustExtract(t, ModeThesis, page, "").Paragraphs(); !reflect.DeepEqual(got, want) {
		t.Errorf("article inside <footer>: got %q, want %q", got, want)
	}
}

func TestThesisRejects(t *testing.T) {
	for name, page := range map[string]string{
		"no article":          `<html><body><p>Text outside any article.</p></body></html>`,
		"teaser list":         `<html><body><article><a href="/a">Story A</a></article><article><a href="/b">B</a></article></body></html>`,
		"only aside text":     `<html><body><article><aside><p>Aside.</p></aside></article></body></html>`,
		"script in paragraph": `<html><body><article><p><script>var x = "crawler-only";</script></p></article></body></html>`,
	} {
		a := mustExtract(t, ModeThesis, page, "")
		if a.IsArticle || len(a.Body) != 0 {
			t.Errorf("%s: thesis mode kept %q", name, a.Paragraphs())
		}
	}
}

func TestFig17OpenGraph(t *testing.T) {
	page := "<html><head>" + fig17 + "<title>Vacinação | R7.com</title></head><body><article>" + prose("vacina", 8) + "</article></body></html>"
	brt := time.FixedZone("", -3*3600)

	th := mustExtract(t, ModeThesis, page, "")
	if th.Title != "Vacinação contra a gripe tem 'Dia D' hoje e mira 40 milhões de brasileiros" {
		t.Errorf("thesis title = %q", th.Title)
	}
	if th.Description != "Desde início do ano, vírus da doença já matou 158 no País. Vacinação é" || th.SiteName != "R7.com" {
		t.Errorf("thesis description/site = %q / %q", th.Description, th.SiteName)
	}
	if !th.Published.Equal(time.Date(2018, 5, 12, 5, 0, 0, 0, brt)) || th.Published.Format(time.RFC3339) != "2018-05-12T05:00:00-03:00" {
		t.Errorf("thesis published = %v", th.Published)
	}
	if th.Section != "" || len(th.Tags) != 0 || len(th.Authors) != 0 {
		t.Error("thesis mode extracts only the thesis's fields")
	}

	a := mustExtract(t, ModeSonda, page, "")
	want := Article{
		URL:          "",
		CanonicalURL: "https://noticias.r7.com/saude/vacinacao-contr-a-gripe-tem-dia-d-hoje-e-mira-40",
		Title:        "Vacinação contra a gripe tem 'Dia D' hoje e mira 40 milhões de brasileiros",
		Description:  "Desde início do ano, vírus da doença já matou 158 no País. Vacinação é",
		Authors:      []string{"R7.com"},
		SiteName:     "R7.com",
		Language:     "pt-BR",
		Section:      "Saúde",
		Tags:         []string{"influenza", "h1n1", "h3n2", "gripe", "campanha"},
		Image:        "https://img.r7.com/images/vacina-influenza-11052018151650829",
	}
	got := *a
	got.Body, got.Sources, got.Published, got.Modified, got.WordCount = nil, nil, time.Time{}, time.Time{}, 0
	got.IsArticle, got.Kind, got.Mode = false, "", ""
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("cascade on Fig. 17:\n got %s\nwant %s", gj, wj)
	}
	if a.Published.Format(time.RFC3339) != "2018-05-12T05:00:00-03:00" || a.Modified.Format(time.RFC3339) != "2018-05-12T08:03:49-03:00" {
		t.Errorf("cascade times = %s, %s", a.Published.Format(time.RFC3339), a.Modified.Format(time.RFC3339))
	}
	if !a.IsArticle || a.WordCount < 100 {
		t.Errorf("cascade: is_article=%v words=%d", a.IsArticle, a.WordCount)
	}
	j, _ := json.Marshal(a)
	if !strings.Contains(string(j), `"published":"2018-05-12T05:00:00-03:00"`) {
		t.Errorf("JSON must carry RFC 3339 with the page's zone: %s", j)
	}
}

func TestCascadePrecedence(t *testing.T) {
	page := `<html lang="en"><head>
	<title>Wrong title | Daily Planet</title>
	<meta property="og:title" content="Storm hits the coast">
	<meta property="og:site_name" content="Daily Planet">
	<meta name="author" content="Meta Author">
	<meta property="article:published_time" content="2020-01-01T00:00:00Z">
	<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle",
	  "headline":"Storm hits the coast","datePublished":"2020-01-02T10:00:00+01:00",
	  "dateModified":"2020-01-03T10:00:00+01:00","author":[{"@type":"Person","name":"Lois Lane"},{"@type":"Person","name":"Clark Kent"}],
	  "publisher":{"@type":"Organization","name":"Planet Media"},"articleSection":"Weather","inLanguage":"en-GB"}</script>
	</head><body><article>` + prose("storm", 10) + `</article></body></html>`
	a := mustExtract(t, ModeSonda, page, "https://planet.example/2020/01/02/storm")
	if a.Title != "Storm hits the coast" || a.Sources["title"] != "jsonld" {
		t.Errorf("title %q from %s", a.Title, a.Sources["title"])
	}
	if !reflect.DeepEqual(a.Authors, []string{"Lois Lane", "Clark Kent"}) || a.Sources["authors"] != "jsonld" {
		t.Errorf("authors %v from %s: JSON-LD comes before <meta name=author>", a.Authors, a.Sources["authors"])
	}
	if a.Published.Format(time.RFC3339) != "2020-01-02T10:00:00+01:00" || a.Sources["published"] != "jsonld" {
		t.Errorf("published %v from %s", a.Published, a.Sources["published"])
	}
	if a.SiteName != "Daily Planet" || a.Section != "Weather" || a.Language != "en" {
		t.Errorf("site %q section %q lang %q (html lang comes first)", a.SiteName, a.Section, a.Language)
	}
	if a.Sources["body"] != "trafilatura" {
		t.Errorf("by default the body comes from go-trafilatura, came from %q", a.Sources["body"])
	}
	ex, err := New(Options{FastPath: true})
	if err != nil {
		t.Fatal(err)
	}
	if fast, err := ex.Extract([]byte(page), "https://planet.example/2020/01/02/storm"); err != nil || fast.Sources["body"] != "article" {
		t.Errorf("with FastPath a page whose <article> holds all its prose takes the fast path, took %q (%v)", fast.Sources["body"], err)
	}
}

// TestCascadeJSONLDGraph runs a page whose only metadata is a Yoast-style @graph (no Open
// Graph, no meta tags) through Extract: every field comes from the graph, with the
// author and the publisher reached through @id references and the main article chosen
// over a second one in the graph.
func TestCascadeJSONLDGraph(t *testing.T) {
	page := `<html><head><title>Ponte nova é aberta ao tráfego – Jornal Exemplo</title>
	<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
	  {"@type":"WebSite","@id":"https://jornal.example/#website","name":"Jornal Exemplo","inLanguage":"pt-BR"},
	  {"@type":"WebPage","@id":"https://jornal.example/2024/03/ponte/#webpage","url":"https://jornal.example/2024/03/ponte/"},
	  {"@type":"NewsArticle","@id":"https://jornal.example/outra/#article","headline":"Outra notícia","mainEntityOfPage":{"@id":"https://jornal.example/outra/"}},
	  {"@type":["Article","NewsArticle"],"@id":"https://jornal.example/2024/03/ponte/#article",
	   "headline":"Ponte nova é aberta ao tráfego","description":"A obra levou dois anos.",
	   "mainEntityOfPage":{"@id":"https://jornal.example/2024/03/ponte/#webpage"},
	   "url":"https://jornal.example/2024/03/ponte/",
	   "datePublished":"2024-03-04T09:00:00-03:00","dateModified":"2024-03-04T11:30:00-03:00",
	   "author":[{"@id":"https://jornal.example/#/person/1"}],"publisher":{"@id":"https://jornal.example/#org"},
	   "articleSection":["Cidade"],"keywords":"ponte, trânsito","inLanguage":"pt-BR",
	   "image":{"@type":"ImageObject","url":"/img/ponte.jpg"}},
	  {"@type":"Person","@id":"https://jornal.example/#/person/1","name":"Pedro Alves"},
	  {"@type":"Organization","@id":"https://jornal.example/#org","name":"Jornal Exemplo"}
	]}</script></head><body><div class="content">` + prose("ponte", 8) + `</div></body></html>`
	a := mustExtract(t, ModeSonda, page, "https://jornal.example/2024/03/ponte/")
	want := map[string][2]string{ // field: value, source
		"title":         {a.Title, "Ponte nova é aberta ao tráfego"},
		"description":   {a.Description, "A obra levou dois anos."},
		"site_name":     {a.SiteName, "Jornal Exemplo"},
		"section":       {a.Section, "Cidade"},
		"language":      {a.Language, "pt-BR"},
		"image":         {a.Image, "https://jornal.example/img/ponte.jpg"},
		"canonical_url": {a.CanonicalURL, "https://jornal.example/2024/03/ponte/"},
		"published":     {a.Published.Format(time.RFC3339), "2024-03-04T09:00:00-03:00"},
		"modified":      {a.Modified.Format(time.RFC3339), "2024-03-04T11:30:00-03:00"},
	}
	for field, gw := range want {
		if gw[0] != gw[1] || a.Sources[field] != "jsonld" {
			t.Errorf("%s = %q from %q, want %q from jsonld", field, gw[0], a.Sources[field], gw[1])
		}
	}
	if !reflect.DeepEqual(a.Authors, []string{"Pedro Alves"}) || a.Sources["authors"] != "jsonld" {
		t.Errorf("authors %q from %s: the @id reference must be followed", a.Authors, a.Sources["authors"])
	}
	if !reflect.DeepEqual(a.Tags, []string{"ponte", "trânsito"}) {
		t.Errorf("tags %q", a.Tags)
	}
	if !a.IsArticle || a.WordCount < 100 {
		t.Errorf("is_article=%v kind=%s words=%d", a.IsArticle, a.Kind, a.WordCount)
	}
}

// TestCascadeTwitterAndMeta: a page without JSON-LD or Open Graph, described by a Twitter
// card and the <meta name=…> conventions of Dublin Core, Parse.ly and Google News.
func TestCascadeTwitterAndMeta(t *testing.T) {
	page := `<html><head><title>Tram line reopens after repairs - City Herald</title>
	<meta name="twitter:card" content="summary_large_image">
	<meta name="twitter:title" content="Tram line reopens after repairs">
	<meta name="twitter:description" content="Service resumes on Monday.">
	<meta name="twitter:image" content="/img/tram.jpg">
	<meta name="application-name" content="City Herald">
	<meta name="DC.creator" content="Hanna Berg; Tom Reed">
	<meta name="parsely-pub-date" content="2023-09-08T06:15:00+02:00">
	<meta name="dcterms.modified" content="2023-09-08T10:00:00+02:00">
	<meta name="parsely-section" content="Transport">
	<meta name="news_keywords" content="tram, repairs, transport">
	<meta name="DC.language" content="en_GB">
	</head><body><div>` + prose("tram", 8) + `</div></body></html>`
	a := mustExtract(t, ModeSonda, page, "https://herald.example/transport/tram")
	for field, gw := range map[string][3]string{ // got, want, source
		"title":       {a.Title, "Tram line reopens after repairs", "twitter"},
		"description": {a.Description, "Service resumes on Monday.", "twitter"},
		"image":       {a.Image, "https://herald.example/img/tram.jpg", "twitter"},
		"site_name":   {a.SiteName, "City Herald", "meta"},
		"published":   {a.Published.Format(time.RFC3339), "2023-09-08T06:15:00+02:00", "meta"},
		"modified":    {a.Modified.Format(time.RFC3339), "2023-09-08T10:00:00+02:00", "meta"},
		"section":     {a.Section, "Transport", "meta"},
		"language":    {a.Language, "en-GB", "meta"},
	} {
		if gw[0] != gw[1] || a.Sources[field] != gw[2] {
			t.Errorf("%s = %q from %q, want %q from %s", field, gw[0], a.Sources[field], gw[1], gw[2])
		}
	}
	if !reflect.DeepEqual(a.Authors, []string{"Hanna Berg", "Tom Reed"}) || a.Sources["authors"] != "meta" {
		t.Errorf("authors %q from %s", a.Authors, a.Sources["authors"])
	}
	if !reflect.DeepEqual(a.Tags, []string{"tram", "repairs", "transport"}) || a.Sources["tags"] != "meta" {
		t.Errorf("tags %q from %s", a.Tags, a.Sources["tags"])
	}
}

func TestCascadeFallbacks(t *testing.T) {
	// No JSON-LD, no Open Graph: microdata, <time>, a byline element, a <title> with the
	// site's name, a date in the URL for the second page.
	page := `<html><head><title>Council approves budget - The Courier</title>
	<meta name="application-name" content="The Courier"></head><body>
	<div itemscope itemtype="http://schema.org/NewsArticle">
	<h1 itemprop="headline">Council approves budget</h1>
	<p class="byline">By <a rel="author" href="/staff/maria">Maria Lopes</a> and <a rel="author" href="/staff/joao">João Silva</a></p>
	<time datetime="2019-06-14T09:30:00-03:00" pubdate>14 de junho de 2019</time>
	<div itemprop="articleBody">` + prose("budget", 6) + `</div></div></body></html>`
	a := mustExtract(t, ModeSonda, page, "https://courier.example/news/budget")
	if a.Title != "Council approves budget" {
		t.Errorf("title %q from %s", a.Title, a.Sources["title"])
	}
	if !reflect.DeepEqual(a.Authors, []string{"Maria Lopes", "João Silva"}) {
		t.Errorf("authors %q from %s", a.Authors, a.Sources["authors"])
	}
	if a.Published.Format(time.RFC3339) != "2019-06-14T09:30:00-03:00" {
		t.Errorf("published %v from %s", a.Published, a.Sources["published"])
	}
	if a.SiteName != "The Courier" || a.Language != "en" || a.Sources["language"] != "detected" {
		t.Errorf("site %q, language %q from %s", a.SiteName, a.Language, a.Sources["language"])
	}

	page2 := `<html><head><title>Plain page</title></head><body><div>` + prose("plain", 6) + `</div></body></html>`
	b := mustExtract(t, ModeSonda, page2, "https://ex.example/2021/3/9/plain-page")
	if b.Published.Format(time.RFC3339) != "2021-03-09T00:00:00Z" || b.Sources["published"] != "url" {
		t.Errorf("date from URL: %v from %s", b.Published, b.Sources["published"])
	}
}

func TestBylineCleaning(t *testing.T) {
	tests := map[string][]string{
		"By Jane Doe":                                             {"Jane Doe"},
		"Por Ana Souza e Pedro Lima":                              {"Ana Souza", "Pedro Lima"},
		"Par Sébastien Farcis":                                    {"Sébastien Farcis"},
		"Von Max Mustermann und Erika Muster":                     {"Max Mustermann", "Erika Muster"},
		"By Nathan Willis March 25, 2015":                         {"Nathan Willis"},
		"Jane Doe | Updated 3 hours ago":                          {"Jane Doe"},
		"Written by A. B. Smith, C. Jones & D. Li":                {"A. B. Smith", "C. Jones", "D. Li"},
		"Jong, Michiel de":                                        {"Jong, Michiel de"},
		"Martin Untersinger (avec Damien Leloup et Morgane Tual)": {"Martin Untersinger (avec Damien Leloup et Morgane Tual)"},
		"https://facebook.com/someone":                            nil,
		"Last Updated: January 7, 2025":                           nil,
	}
	for in, want := range tests {
		if got := cleanNames(splitByline(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("byline %q = %q, want %q", in, got, want)
		}
	}
}

func TestCleanTitle(t *testing.T) {
	tests := []struct {
		title, site string
		h1          []string
		url         string
		want        string
	}{
		{"Storm hits coast | Daily Planet", "Daily Planet", nil, "", "Storm hits coast"},
		{"Daily Planet - Storm hits coast", "Daily Planet", nil, "", "Storm hits coast"},
		{"Storm hits coast – planet.example", "", nil, "https://www.planet.example/x", "Storm hits coast"},
		{"Storm hits coast :: Weather :: Planet", "", []string{"Storm hits coast :: Weather"}, "", "Storm hits coast :: Weather"},
		{"Mozilla - Wikipedia", "", nil, "", "Mozilla - Wikipedia"}, // no evidence: kept whole
	}
	for _, tt := range tests {
		base, _ := url.Parse(tt.url)
		if tt.url == "" {
			base = nil
		}
		if got := cleanTitle(tt.title, tt.site, tt.h1, base); got != tt.want {
			t.Errorf("cleanTitle(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}

func TestTitleCorroboration(t *testing.T) {
	// A JSON-LD headline that no visible title mentions loses to one that is confirmed.
	page := `<html><head><title>New Zealand - Wikipedia</title>
	<script type="application/ld+json">{"@type":"Article","name":"New Zealand","headline":"constitutional monarchy in Oceania"}</script>
	</head><body><h1>New Zealand</h1>` + prose("island", 6) + `</body></html>`
	a := mustExtract(t, ModeSonda, page, "")
	if a.Title != "New Zealand" {
		t.Errorf("title = %q from %s", a.Title, a.Sources["title"])
	}
}

func TestNotArticles(t *testing.T) {
	teaser := func(i int) string {
		return fmt.Sprintf(`<article><h2><a href="/story-%d">Story %d headline</a></h2><p>Short summary of story %d.</p></article>`, i, i, i)
	}
	var listing strings.Builder
	listing.WriteString(`<html><head><title>Front page</title></head><body>`)
	for i := 0; i < 12; i++ {
		listing.WriteString(teaser(i))
	}
	listing.WriteString(`</body></html>`)

	var links strings.Builder
	links.WriteString(`<html><head><title>Section</title></head><body><ul>`)
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&links, `<li><a href="/n/%d">A long headline about the news number %d today</a></li>`, i, i)
	}
	links.WriteString(`</ul><p>Copyright.</p></body></html>`)

	tests := []struct {
		name, page, kind string
	}{
		{"teaser listing", listing.String(), KindListing},
		{"link farm home page", links.String(), KindListing},
		{"collection page", `<html><head><script type="application/ld+json">{"@type":"CollectionPage","name":"Sports"}</script></head><body><div>` + prose("sports", 6) + `</div></body></html>`, KindListing},
		{"product", `<html><head><meta property="og:type" content="product"></head><body><div>` + prose("camera", 6) + `</div></body></html>`, KindPage},
		{"video", `<html><head><meta property="og:type" content="video.other"><title>Clip</title></head><body><video src="/v.mp4"></video><p>Watch the clip of the storm arriving.</p></body></html>`, KindMedia},
		{"short page", `<html><body><p>Contact us at the address below. We answer within two days.</p></body></html>`, KindPage},
		{"empty", `<html><body><nav><a href="/">Home</a></nav></body></html>`, KindEmpty},
	}
	for _, tt := range tests {
		a := mustExtract(t, ModeSonda, tt.page, "https://ex.example/p")
		if a.IsArticle || a.Kind != tt.kind || a.NotArticle == "" {
			t.Errorf("%s: is_article=%v kind=%q (want %q) reason=%q", tt.name, a.IsArticle, a.Kind, tt.kind, a.NotArticle)
		}
	}
	// A declared article with prose stays an article even if it links a lot.
	page := `<html><head><meta property="og:type" content="article"></head><body><article>` + prose("links", 6) +
		strings.Repeat(`<a href="/x">a related story link with several words in it</a> `, 30) + `</article></body></html>`
	if a := mustExtract(t, ModeSonda, page, ""); !a.IsArticle {
		t.Errorf("declared article judged %s: %s", a.Kind, a.NotArticle)
	}
}

func TestBodyStructure(t *testing.T) {
	page := `<html><head><title>T</title></head><body><article>
	<h1>T</h1><p>Intro paragraph that sets the scene for the reader, long enough to be prose.</p>
	<h2>First part</h2>` + prose("part", 5) + `
	<ul><li>Item one of the list</li><li>Item two of the list</li></ul>
	<blockquote><p>A quotation from a source.</p></blockquote>
	<figure><img src="x.jpg"><figcaption>Caption text</figcaption></figure>
	<div class="share-bar"><a href="#">Share on social</a></div>
	<aside><p>Unrelated box</p></aside>
	</article></body></html>`
	a := mustExtract(t, ModeSonda, page, "")
	kinds := map[string]int{}
	for _, b := range a.Body {
		kinds[b.Kind]++
		for _, bad := range []string{"Caption text", "Share on social", "Unrelated box"} {
			if strings.Contains(b.Text, bad) {
				t.Errorf("boilerplate %q kept in the body", bad)
			}
		}
	}
	// The headline is kept as go-trafilatura keeps it: dropping it followed one test set's
	// convention and lost on the other (issue 13).
	if kinds["h2"] != 1 || kinds["li"] != 2 || kinds["p"] < 6 || kinds["h1"] != 1 {
		t.Errorf("block kinds %v: headings (the headline too), list items and paragraphs must be kept", kinds)
	}
	if !strings.Contains(a.Text(), "First part\n\nThe part story") {
		t.Errorf("Text() must separate blocks with blank lines: %q", a.Text()[:200])
	}
}

func TestNoPanicOnOddInput(t *testing.T) {
	for _, page := range []string{"", "<", "<html>", strings.Repeat("<div>", 20000), "\x00\xff\xfe", "<article>" + strings.Repeat("<p>x", 5000)} {
		for _, m := range Modes {
			ex, _ := New(Options{Mode: m})
			if _, err := ex.Extract([]byte(page), "::not a url"); err != nil {
				t.Logf("%s: %v (reported, not a panic)", m, err)
			}
		}
	}
}

func TestUnknownMode(t *testing.T) {
	if _, err := New(Options{Mode: "magic"}); err == nil || !strings.Contains(err.Error(), "sonda, thesis or trafilatura") {
		t.Errorf("unknown mode error = %v", err)
	}
}

// FuzzExtract exercises sonda's own code on arbitrary markup: the signal walk, the
// metadata cascade, the thesis rule, the fast path's block builder and the classifier.
// go-trafilatura is left out: it is a dependency, and under coverage instrumentation its
// regular-expression engine makes each run take seconds.
func FuzzExtract(f *testing.F) {
	f.Add(fig19)
	f.Add("<html><head>" + fig17 + "</head><body><article><p>x</p></article></body></html>")
	f.Add(`<script type="application/ld+json">{"@graph":[{"@type":"Article","author":{"@id":"#a"}}]}</script><time datetime="2020-01-01">`)
	f.Add(`<div itemscope><span itemprop="author" itemscope><b itemprop="name">By A and B</b></span></div><p class="byline">Por C</p>`)
	ex, _ := New(Options{})
	th, _ := New(Options{Mode: ModeThesis})
	f.Fuzz(func(t *testing.T, page string) {
		watchdog := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("extraction hung on %q", page)) })
		defer watchdog.Stop()
		doc, err := nethtml.Parse(strings.NewReader(page))
		if err != nil {
			t.Skip()
		}
		base, _ := url.Parse("https://ex.example/2020/01/02/a")
		s := gather(doc)
		main := s.ld.mainArticle(base.String())
		a := &Article{}
		ex.metadata(a, s, main, base)
		if art, _ := fastPathArticle(s); art != nil {
			a.Body = pruneBlocks(blocks(art, articleNoise), a.Title)
		} else if s.body != nil {
			a.Body = blocks(s.body, boilerplate)
		}
		ex.finish(a)
		classify(a, s, main, 50)
		if a.IsArticle != (a.Kind == KindArticle) {
			t.Fatalf("is_article %v with kind %q", a.IsArticle, a.Kind)
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatal(err)
		}
		if _, err := th.Extract([]byte(page), ""); err != nil {
			t.Fatal(err)
		}
	})
}
