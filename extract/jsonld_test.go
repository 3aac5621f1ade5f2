package extract

import (
	"reflect"
	"testing"
)

func graphOf(scripts ...string) *ldGraph {
	g := &ldGraph{}
	for _, s := range scripts {
		g.add(s)
	}
	return g
}

func TestJSONLDGraphReferences(t *testing.T) {
	// The layout Yoast SEO writes: one @graph, nodes linked by @id.
	g := graphOf(`{"@context":"https://schema.org","@graph":[
		{"@type":"WebSite","@id":"https://ex.com/#website","name":"Example News"},
		{"@type":"WebPage","@id":"https://ex.com/a/#webpage","url":"https://ex.com/a/"},
		{"@type":["Article","NewsArticle"],"@id":"https://ex.com/a/#article","headline":"Rain &amp; wind",
		 "mainEntityOfPage":{"@id":"https://ex.com/a/#webpage"},"datePublished":"2020-01-02T03:04:05+00:00",
		 "author":{"@id":"https://ex.com/#/schema/person/1"},"publisher":{"@id":"https://ex.com/#org"},
		 "keywords":["weather","storm"],"articleSection":"Local"},
		{"@type":"Person","@id":"https://ex.com/#/schema/person/1","name":"Ana Souza"},
		{"@type":"Organization","@id":"https://ex.com/#org","name":"Example Media"}
	]}`)
	main := g.mainArticle("https://ex.com/a/")
	if main == nil {
		t.Fatal("no main article found in @graph")
	}
	if got := g.text(main["headline"]); got != "Rain & wind" {
		t.Errorf("headline = %q (entities must be decoded)", got)
	}
	persons, _ := g.people(main["author"])
	if !reflect.DeepEqual(persons, []string{"Ana Souza"}) {
		t.Errorf("author through @id = %v", persons)
	}
	if got := g.text(ldProp(g, main, "publisher")); got != "Example Media" {
		t.Errorf("publisher through @id = %q", got)
	}
	if got := g.texts(main["keywords"]); !reflect.DeepEqual(got, []string{"weather", "storm"}) {
		t.Errorf("keywords = %v", got)
	}
	if len(g.top) != 5 {
		t.Errorf("top-level nodes = %d, want the 5 @graph members", len(g.top))
	}
}

func TestJSONLDListsAndChoice(t *testing.T) {
	// A top-level list with a breadcrumb and two articles: the one naming the page wins
	// even though the other has more fields.
	g := graphOf(`[{"@type":"BreadcrumbList","itemListElement":[]},
		{"@type":"http://schema.org/BlogPosting","headline":"Other post","url":"https://ex.com/other","author":"X","description":"d","image":"i"},
		{"@type":"schema:NewsArticle","headline":"This post","url":"https://www.ex.com/this/"}]`)
	main := g.mainArticle("https://ex.com/this")
	if got := g.text(main["headline"]); got != "This post" {
		t.Errorf("main article = %q, want the one whose url names the page", got)
	}
	if got := ldTypes(main); !reflect.DeepEqual(got, []string{"NewsArticle"}) {
		t.Errorf("types = %v: prefixes must be removed", got)
	}
}

func TestJSONLDPeople(t *testing.T) {
	g := graphOf(`{"@type":"Article","author":[
		{"@type":"Person","name":"Stella Kim"},
		{"@type":"Person","givenName":"Jennifer","familyName":"Jett"},
		{"@type":"Organization","name":"NBC News"},
		"https://example.com/author/x",
		"Plain Name"]}`)
	persons, orgs := g.people(g.nodes[0]["author"])
	if want := []string{"Stella Kim", "Jennifer Jett", "Plain Name"}; !reflect.DeepEqual(persons, want) {
		t.Errorf("persons = %v, want %v", persons, want)
	}
	if want := []string{"NBC News"}; !reflect.DeepEqual(orgs, want) {
		t.Errorf("organizations = %v, want %v", orgs, want)
	}
}

func TestJSONLDLenient(t *testing.T) {
	tests := map[string]string{
		"comment wrapper":  `<!-- {"@type":"Article","headline":"A"} -->`,
		"cdata wrapper":    `//<![CDATA[` + "\n" + `{"@type":"Article","headline":"A"}` + "\n//]]>",
		"raw newline":      "{\"@type\":\"Article\",\"headline\":\"A\",\"articleBody\":\"line one\nline two\"}",
		"trailing commas":  `{"@type":"Article","headline":"A","keywords":["x","y",],}`,
		"trailing semicol": `{"@type":"Article","headline":"A"};`,
	}
	for name, script := range tests {
		g := graphOf(script)
		if len(g.nodes) != 1 || g.text(g.nodes[0]["headline"]) != "A" {
			t.Errorf("%s: not read (%d nodes)", name, len(g.nodes))
		}
	}
	for _, bad := range []string{"", "{", "not json", `{"@type":`, "[[[[", `"just a string"`} {
		if g := graphOf(bad); len(g.nodes) != 0 {
			t.Errorf("%q gave nodes", bad)
		}
	}
}

func TestJSONLDDepthAndSize(t *testing.T) {
	deep := ""
	for i := 0; i < 5000; i++ {
		deep += `{"@type":"Thing","x":`
	}
	deep += "1"
	for i := 0; i < 5000; i++ {
		deep += "}"
	}
	g := graphOf(deep) // encoding/json refuses nesting beyond 10000; either way no crash
	if len(g.nodes) > maxLDNodes {
		t.Errorf("%d nodes kept, limit %d", len(g.nodes), maxLDNodes)
	}
}

func FuzzJSONLD(f *testing.F) {
	for _, s := range []string{`{"@graph":[{"@type":"Article","author":{"@id":"#a"}},{"@id":"#a","@type":"Person","name":"N"}]}`,
		`[{"@type":["NewsArticle"],"headline":["x"],"author":[{"name":"a"},"b"]}]`, `<!--{"a":1,}-->`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g := graphOf(s)
		main := g.mainArticle("https://ex.com/")
		if main != nil {
			g.people(main["author"])
			g.texts(main["keywords"])
			g.urlOf(main["image"])
			g.text(ldProp(g, main, "publisher"))
		}
	})
}
