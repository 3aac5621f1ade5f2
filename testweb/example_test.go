package testweb_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/sonda-search/sonda/testweb"
)

// A crawler test starts the web, points the crawler at its seeds through
// the Resolve mapping, crawls, then asks the web what went wrong.
func Example() {
	w := testweb.New(testweb.Config{Seed: 1})
	addr, err := w.Start()
	if err != nil {
		panic(err)
	}
	defer w.Close()

	// The crawler would get w.Resolve() ("*.test=" + addr); a plain client
	// does the same with a dialer.
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	for _, u := range []string{"http://www.site00.test/robots.txt", w.Seeds()[0]} {
		resp, err := client.Get(u)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.Status, u)
	}

	fmt.Println(strings.HasPrefix(w.Resolve(), "*.test=127.0.0.1:"))
	fmt.Println(len(w.Hosts()), "hosts,", len(w.CheckPoliteness(0, 1)), "politeness violations")
	fmt.Println(len(w.CheckFetches()) > 0, "(a two-request crawl misses most of the web)")
	// Output:
	// 200 OK http://www.site00.test/robots.txt
	// 200 OK http://www.site00.test/
	// true
	// 60 hosts, 0 politeness violations
	// true (a two-request crawl misses most of the web)
}
