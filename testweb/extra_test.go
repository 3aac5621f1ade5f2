package testweb

import (
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestExtraLinksToLaterHost: an Extra page may link to an Extra page of a host that comes
// after its own; the link must lead to that page, not to a 404 made up in its place.
func TestExtraLinksToLaterHost(t *testing.T) {
	w := New(Config{Hosts: 2, PagesPerHost: 1, Disable: AllFeatures, Extra: func(host string, _ *rand.Rand) []Page {
		if host == "www.site00.test" {
			return []Page{{Path: "/from.html", Title: "From", Text: []string{"x"}, Links: []string{"http://www.site01.test/to.html"}}}
		}
		return []Page{{Path: "/to.html", Title: "To", Text: []string{"y"}, Unlinked: true}}
	}})
	if !slices.Contains(w.Reachable(), "http://www.site01.test/to.html") {
		t.Fatalf("the later host's page is not reachable: %v", w.Reachable())
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://www.site01.test/to.html", nil)
	w.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET /to.html = %d, want 200", rec.Code)
	}
}
