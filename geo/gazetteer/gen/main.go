// Command gen builds places.bin.gz, the gazetteer package gazetteer embeds, from GeoNames
// data (see scripts/gazetteer.sh, which fetches it from npm and runs this):
//
//	gen cities.tsv admin1.json > places.bin.gz
//
// Kept: every city of at least MinPopulation people and every capital of a country or a
// first-level region whatever its size; every first-level region (its box and
// population computed from all its cities); every country (names in English, Portuguese,
// Spanish and French, box and population from its cities). The format is described in
// package gazetteer (format.go).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/sonda-search/sonda/geo/gazetteer"
)

// MinPopulation is the smallest city kept (national and first-level capitals are kept
// whatever their size): about 33,000 cities, which keeps the embedded file near 700 KiB.
const MinPopulation = 10000

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen cities.tsv admin1.json > places.bin.gz")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

type agg struct {
	box geom
	pop int64
}

type geom struct{ minX, minY, maxX, maxY float64 }

func (g *geom) extend(x, y float64) {
	if g.minX == 0 && g.maxX == 0 && g.minY == 0 && g.maxY == 0 {
		*g = geom{x, y, x, y}
		return
	}
	g.minX, g.maxX = math.Min(g.minX, x), math.Max(g.maxX, x)
	g.minY, g.maxY = math.Min(g.minY, y), math.Max(g.maxY, y)
}

func run(citiesPath, admin1Path string) error {
	var admin1 []struct{ Code, Name string }
	b, err := os.ReadFile(admin1Path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &admin1); err != nil {
		return fmt.Errorf("%s: %w", admin1Path, err)
	}
	regionName := map[string]string{}
	for _, a := range admin1 {
		regionName[a.Code] = a.Name
	}
	f, err := os.Open(citiesPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var places []gazetteer.Place
	regions, countries := map[string]*agg{}, map[string]*agg{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 7 {
			continue
		}
		pop, _ := strconv.ParseInt(c[3], 10, 64)
		lon, err1 := strconv.ParseFloat(c[4], 64)
		lat, err2 := strconv.ParseFloat(c[5], 64)
		if err1 != nil || err2 != nil || c[0] == "" || len(c[1]) != 2 {
			continue
		}
		regionKey := c[1] + "." + c[2]
		for key, m := range map[string]map[string]*agg{regionKey: regions, c[1]: countries} {
			a := m[key]
			if a == nil {
				a = &agg{}
				m[key] = a
			}
			a.box.extend(lon, lat)
			a.pop += pop
		}
		capital := c[6] == "PPLC" || c[6] == "PPLA"
		if pop < MinPopulation && !capital {
			continue
		}
		places = append(places, gazetteer.Place{Name: c[0], Kind: gazetteer.City, Country: c[1], Region: regionName[regionKey],
			Population: pop, Lon: lon, Lat: lat})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, key := range sortedKeys(regions) {
		name := regionName[key]
		if name == "" {
			continue
		}
		places = append(places, regionPlace(name, gazetteer.Region, key[:2], "", regions[key]))
	}
	namers := []display.Namer{display.English.Regions(), display.Portuguese.Regions(), display.Spanish.Regions(), display.French.Regions()}
	for _, code := range sortedKeys(countries) {
		a := countries[code]
		r, err := language.ParseRegion(code)
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, n := range namers {
			name := n.Name(r)
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			places = append(places, regionPlace(name, gazetteer.Country, code, "", a))
		}
	}
	// By country, then kind; within a kind the order of insertion stays, which puts a
	// country's English name first (package gazetteer lists a country by its first name).
	sort.SliceStable(places, func(i, j int) bool {
		a, b := places[i], places[j]
		if a.Country != b.Country {
			return a.Country < b.Country
		}
		return a.Kind > b.Kind
	})
	return gazetteer.Encode(os.Stdout, places)
}

func sortedKeys(m map[string]*agg) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func regionPlace(name string, kind gazetteer.Kind, country, region string, a *agg) gazetteer.Place {
	return gazetteer.Place{Name: name, Kind: kind, Country: country, Region: region, Population: a.pop,
		Lon: (a.box.minX + a.box.maxX) / 2, Lat: (a.box.minY + a.box.maxY) / 2,
		MinLon: a.box.minX, MinLat: a.box.minY, MaxLon: a.box.maxX, MaxLat: a.box.maxY}
}
