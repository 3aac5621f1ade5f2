// Package config owns sonda's settings: their defaults, the commented sonda.yaml that
// `sonda init` writes, and the layering of a file, SONDA_* environment variables and
// command-line flags (later layers win).
//
// The YAML template (sonda.yaml.tmpl) is the documentation users read; a test checks that
// it parses to exactly Default(), so the two cannot drift apart.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of a crawl.
type Config struct {
	Data      string `yaml:"data"`
	DataUmask string `yaml:"data-umask"`
	// MemoryLimit is the soft limit of the Go runtime's memory (debug.SetMemoryLimit); 0:
	// none. The commands apply it unless GOMEMLIMIT is set; those that answer searches
	// apply SearchMemoryLimit.
	MemoryLimit ByteSize   `yaml:"memory-limit"`
	Crawl       Crawl      `yaml:"crawl"`
	Politeness  Politeness `yaml:"politeness"`
	Robots      Robots     `yaml:"robots"`
	Fetch       Fetch      `yaml:"fetch"`
	URLs        URLs       `yaml:"urls"`
	Scope       Scope      `yaml:"scope"`
	WARC        WARC       `yaml:"warc"`
	Render      Render     `yaml:"render"`
	Serve       Serve      `yaml:"serve"`
	Revisit     Revisit    `yaml:"revisit"`
	Geo         Geo        `yaml:"geo"`
	Feeds       Feeds      `yaml:"feeds"`
	News        News       `yaml:"news"`
	Search      Search     `yaml:"search"`
	Focus       Focus      `yaml:"focus"`
	Cluster     Cluster    `yaml:"cluster"`
	Log         Log        `yaml:"log"`
}

// Focus configures focused crawling (package focus): what pages are relevant and the
// parameters of the link strategies that steer the crawl toward them.
type Focus struct {
	Topics    []string    `yaml:"topics"`
	PageModel string      `yaml:"page-model"`
	LinkModel string      `yaml:"link-model"`
	Threshold float64     `yaml:"threshold"`
	Seed      uint64      `yaml:"seed"`
	BestN     int         `yaml:"best-n"`
	Fish      FocusFish   `yaml:"fish"`
	Shark     FocusShark  `yaml:"shark"`
	Online    FocusOnline `yaml:"online"`
}

// FocusFish are Fish-search's parameters.
type FocusFish struct {
	Width int     `yaml:"width"`
	A     float64 `yaml:"a"`
	Depth int     `yaml:"depth"`
}

// FocusShark are Shark-search's parameters.
type FocusShark struct {
	Depth  int     `yaml:"depth"`
	Decay  float64 `yaml:"decay"`
	Beta   float64 `yaml:"beta"`
	Gamma  float64 `yaml:"gamma"`
	Window int     `yaml:"window"`
}

// FocusOnline are the online link learner's parameters.
type FocusOnline struct {
	LearningRate float64 `yaml:"learning-rate"`
	Bonus        float64 `yaml:"bonus"`
	Explore      float64 `yaml:"explore"`
}

// Crawl says what to crawl and when to stop.
type Crawl struct {
	Seeds        []string      `yaml:"seeds"`
	MaxPages     int64         `yaml:"max-pages"`
	Duration     time.Duration `yaml:"duration"`
	Concurrency  int           `yaml:"concurrency"`
	LinkStrategy string        `yaml:"link-strategy"`
	MetricsAddr  string        `yaml:"metrics-addr"`
	Budget       Rate          `yaml:"budget"`
	StopGrace    time.Duration `yaml:"stop-grace"`
	MinFreeSpace ByteSize      `yaml:"min-free-space"`
	// EndWhenWaiting ends a crawl whose only work is retries due at least this far away.
	EndWhenWaiting time.Duration `yaml:"end-when-waiting"`
}

// Politeness bounds the load sonda puts on each host.
type Politeness struct {
	PerHost     int           `yaml:"per-host"`
	MinDelay    time.Duration `yaml:"min-delay"`
	DelayFactor float64       `yaml:"delay-factor"`
	MaxDelay    time.Duration `yaml:"max-delay"`
	MaxRetries  int           `yaml:"max-retries"`
	RetryDelay  time.Duration `yaml:"retry-delay"`
}

// Robots configures the robots exclusion protocol.
type Robots struct {
	Agent       string        `yaml:"agent"`
	CacheTTL    time.Duration `yaml:"cache-ttl"`
	RetryDelay  time.Duration `yaml:"retry-delay"`
	MaxFailures int           `yaml:"max-failures"`
}

// Fetch configures HTTP.
type Fetch struct {
	UserAgent        string        `yaml:"user-agent"`
	ConnectTimeout   time.Duration `yaml:"connect-timeout"`
	TLSTimeout       time.Duration `yaml:"tls-timeout"`
	FirstByteTimeout time.Duration `yaml:"first-byte-timeout"`
	BodyTimeout      time.Duration `yaml:"body-timeout"`
	Timeout          time.Duration `yaml:"timeout"`
	MaxBody          ByteSize      `yaml:"max-body"`
	LargeBodyMemory  ByteSize      `yaml:"large-body-memory"`
	MaxRedirects     int           `yaml:"max-redirects"`
	AcceptTypes      []string      `yaml:"accept-types"`
	AllowPrivate     bool          `yaml:"allow-private"`
	AllowPrivateTo   []string      `yaml:"allow-private-to"`
	Resolve          []string      `yaml:"resolve"`
}

// URLs configures normalization.
type URLs struct {
	StripParams  []string `yaml:"strip-params"`
	KeepFragment bool     `yaml:"keep-fragment"`
	SortQuery    bool     `yaml:"sort-query"`
}

// Scope says which discovered URLs are followed.
type Scope struct {
	Follow              string   `yaml:"follow"`
	AllowHosts          []string `yaml:"allow-hosts"`
	DenyHosts           []string `yaml:"deny-hosts"`
	AllowDomains        []string `yaml:"allow-domains"`
	DenyDomains         []string `yaml:"deny-domains"`
	Allow               []string `yaml:"allow"`
	Deny                []string `yaml:"deny"`
	MaxDepth            int      `yaml:"max-depth"`
	MaxPagesPerHost     int64    `yaml:"max-pages-per-host"`
	MaxURLLength        int      `yaml:"max-url-length"`
	MaxPathSegments     int      `yaml:"max-path-segments"`
	MaxRepeatedSegments int      `yaml:"max-repeated-segments"`
	MaxQueryVariants    int      `yaml:"max-query-variants"`
	FollowNofollowLinks bool     `yaml:"follow-nofollow-links"`
}

// WARC configures the capture archive.
type WARC struct {
	Enabled     bool     `yaml:"enabled"`
	MaxFileSize ByteSize `yaml:"max-file-size"`
}

// Render configures JavaScript rendering (package render): when pages are run in a headless
// Chromium, and the bounds of each run.
type Render struct {
	Mode              string        `yaml:"mode"` // never, auto, always
	Chromium          string        `yaml:"chromium"`
	Tabs              int           `yaml:"tabs"`
	NavigationTimeout time.Duration `yaml:"navigation-timeout"`
	Idle              time.Duration `yaml:"idle"`
	Deadline          time.Duration `yaml:"deadline"`
	Scrolls           int           `yaml:"scrolls"`
	LoadMedia         bool          `yaml:"load-media"`
	MemoryLimit       ByteSize      `yaml:"memory-limit"`
	AllowPrivate      bool          `yaml:"allow-private"`
	CacheSize         ByteSize      `yaml:"cache-size"`
	Nice              int           `yaml:"nice"`
	CPUShare          float64       `yaml:"cpu-share"`
}

// RenderModes are the values of render.mode.
var RenderModes = []string{"never", "auto", "always"}

// Serve configures `sonda serve`: the web UI, the HTTP API and /metrics.
type Serve struct {
	Addr  string `yaml:"addr"`
	Token string `yaml:"token"` // for the API's write endpoints; "" makes serve generate one
	// Hosts are the names the server answers to besides IP addresses and localhost.
	Hosts []string `yaml:"hosts"`
}

// Log configures structured logging.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Profiles are the starting points `sonda init --profile` offers.
var Profiles = []string{"topic", "news", "geo"}

//go:embed sonda.yaml.tmpl
var templateText string

var tmpl = template.Must(template.New("sonda.yaml").Parse(templateText))

// profileValues are the template parameters that differ between profiles.
type profileValues struct {
	Profile     string
	Follow      string
	MaxDepth    int
	AcceptTypes []string
	Geo         bool // the geographic-data vertical is on
	News        bool // feeds, sitemaps and article records are on
	Topics      []string
}

func profile(name string) (profileValues, error) {
	html := []string{"text/html", "application/xhtml+xml", "text/plain"}
	switch name {
	case "":
		// No profile: a site crawl that stays on the seeds' registrable domains.
		return profileValues{Profile: "default", Follow: "domain", MaxDepth: 0, AcceptTypes: html}, nil
	case "topic":
		// A topical crawl wanders across sites; depth keeps it near its seeds.
		// Its topic is the built-in example, to be replaced by the user's own.
		return profileValues{Profile: "topic", Follow: "any", MaxDepth: 5, AcceptTypes: html, Topics: []string{"nuclear"}}, nil
	case "news":
		// News sources are crawled site by site.
		return profileValues{Profile: "news", Follow: "domain", MaxDepth: 0, News: true, AcceptTypes: append(html, "application/rss+xml", "application/atom+xml", "application/xml", "text/xml")}, nil
	case "geo":
		// Geographic data producers publish archives and geo files next to their pages.
		// The geo topic (the GeoDiscover lexicon) judges pages, so links from pages about
		// geographic data are followed first, as the thesis's crawler did.
		return profileValues{Profile: "geo", Follow: "domain", MaxDepth: 0, Geo: true, Topics: []string{"geo"}, AcceptTypes: append(html,
			"application/zip", "application/geo+json", "application/vnd.google-earth.kml+xml",
			"application/vnd.google-earth.kmz", "application/gpx+xml", "application/geopackage+sqlite3", "image/tiff")}, nil
	}
	return profileValues{}, fmt.Errorf("config: unknown profile %q (choose one of %s)", name, strings.Join(Profiles, ", "))
}

// Template returns the commented sonda.yaml for a profile ("" means no profile: the
// defaults used without a configuration file).
func Template(profileName string) ([]byte, error) {
	p, err := profile(profileName)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("config: render template: %w", err)
	}
	return buf.Bytes(), nil
}

// Default returns the configuration used when no file is given.
func Default() Config {
	c, err := parse(mustTemplate(""))
	if err != nil {
		panic("config: the built-in template does not parse: " + err.Error())
	}
	return c
}

func mustTemplate(p string) []byte {
	b, err := Template(p)
	if err != nil {
		panic(err)
	}
	return b
}

func parse(b []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, err
	}
	return c, nil
}

// yamlWords says in the user's words what the YAML decoder's type names mean: a file's
// reader knows sections, lists and durations, not config.Politeness or []string.
var yamlWords = strings.NewReplacer(
	"yaml: unmarshal errors:\n  ", "", "\n  ", "; ",
	"cannot unmarshal !!int", "found the number", "cannot unmarshal !!float", "found the number",
	"cannot unmarshal !!str", "found the text", "cannot unmarshal !!bool", "found the boolean",
	"cannot unmarshal !!seq", "found a list", "cannot unmarshal !!map", "found a section (key: value lines)",
	"cannot unmarshal !!null", "found nothing",
	"into time.Duration", "where a duration such as 30s or 2h belongs",
	"into []string", "where a list such as [a, b] belongs",
	"into []time.Duration", "where a list of durations belongs",
	"into []int", "where a list of whole numbers belongs",
	"into int64", "where a whole number belongs", "into int", "where a whole number belongs",
	"into uint64", "where a whole number belongs",
	"into float64", "where a number belongs", "into bool", "where true or false belongs",
	"into string", "where text belongs",
)

// plainYAMLError rewrites a decoder error without Go type names ("into config.Politeness"
// becomes "where a section of settings belongs").
func plainYAMLError(err error) string {
	msg := yamlWords.Replace(err.Error())
	msg = unknownField.ReplaceAllString(msg, "unknown key $1 in this section (a misspelling? each section's keys are listed in sonda.yaml)")
	return goTypeName.ReplaceAllString(msg, "where a section of settings (key: value lines) belongs")
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type [\w.]+`)

var goTypeName = regexp.MustCompile(`into (map\[[^\]]*\][\w.]+|\[\][\w.]+|config\.\w+)`)

// Load builds the configuration: defaults, then the file at path (if path is not ""),
// then SONDA_* environment variables from env (nil: none).
func Load(path string, env []string) (Config, error) {
	c := Default()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
			return c, fmt.Errorf("config: %s: %s (see `sonda init` for a commented example)", path, plainYAMLError(err))
		}
		// A relative data directory in a file is relative to the file, so that
		// `sonda init mycrawl` then `sonda crawl -c mycrawl/sonda.yaml` keeps the crawl in
		// mycrawl/sonda-data wherever it is run from (flags and variables stay relative to
		// the working directory).
		var set struct {
			Data *string `yaml:"data"`
		}
		if yaml.Unmarshal(b, &set) == nil && set.Data != nil && *set.Data != "" && !filepath.IsAbs(c.Data) {
			c.Data = filepath.Join(filepath.Dir(path), c.Data)
		}
	}
	if err := ApplyEnv(&c, env); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// ApplyEnv sets fields from SONDA_<SECTION>_<KEY> variables in env ("KEY=value" strings),
// e.g. SONDA_FETCH_USER_AGENT or SONDA_POLITENESS_MIN_DELAY=500ms. Lists are comma-separated.
// An unknown SONDA_ variable is an error, so typos do not pass silently.
func ApplyEnv(c *Config, env []string) error {
	fields := map[string]reflect.Value{}
	collectEnvFields(reflect.ValueOf(c).Elem(), "SONDA", fields)
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "SONDA_") {
			continue
		}
		f, ok := fields[name]
		if !ok {
			if isNonConfigEnv(name) {
				continue
			}
			return fmt.Errorf("config: unknown environment variable %s (settings are named like SONDA_FETCH_USER_AGENT; see sonda.yaml)", name)
		}
		if err := setFromString(f, value); err != nil {
			return fmt.Errorf("config: %s=%q: %w", name, value, err)
		}
	}
	return nil
}

// knownNonConfigEnv are SONDA_ variables that tests, benchmarks and tools read and that are
// not settings. scripts/test.sh exports some of them to every test, and the tests start
// sonda processes in that environment, so each must be listed here or every such process
// stops with "unknown environment variable" (TestEveryNonConfigEnvIsKnown checks the
// repository for ones that are missing).
var knownNonConfigEnv = map[string]bool{
	"SONDA_WARCIO_DIR": true, "SONDA_OPENAPI_VALIDATOR_DIR": true, "SONDA_REUTERS_DIR": true, "SONDA_CHROMIUM": true,
	"SONDA_FRONTIER_URLS": true, "SONDA_BENCH": true, "SONDA_BENCH_DATASETS": true, "SONDA_BENCH_DIR": true,
	"SONDA_BENCH_DOCS": true, "SONDA_BENCH_INDEX": true, "SONDA_LIVE_LONG": true, "SONDA_WARC_KILL_CHILD": true,
	"SONDA_FOCUS_MAX_PAGES": true, "SONDA_FOCUS_PLOT": true, "SONDA_FOCUS_TOPIC": true, "SONDA_FOCUS_WEB_SEED": true,
	"SONDA_FOCUS_SELF_TRAIN": true, "SONDA_FOCUS_PRIOR": true, "SONDA_CRASH_AT": true, "SONDA_CRASH_TRACE": true,
}

// isNonConfigEnv reports whether name is a SONDA_ variable that is not a setting: one of
// knownNonConfigEnv, or any SONDA_BENCH_ variable (benchmark knobs).
func isNonConfigEnv(name string) bool {
	return knownNonConfigEnv[name] || strings.HasPrefix(name, "SONDA_BENCH_")
}

func collectEnvFields(v reflect.Value, prefix string, out map[string]reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		name := prefix + "_" + strings.ToUpper(strings.ReplaceAll(tag, "-", "_"))
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeOf(time.Time{}) {
			collectEnvFields(fv, name, out)
			continue
		}
		out[name] = fv
	}
}

// setFromString parses s into a settings field.
func setFromString(f reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration like 500ms, 30s or 2h: %w", err)
		}
		f.SetInt(int64(d))
		return nil
	case ByteSize:
		n, err := ParseByteSize(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(n))
		return nil
	case Rate:
		r, err := ParseRate(s)
		if err != nil {
			return err
		}
		f.SetFloat(float64(r))
		return nil
	case []time.Duration, []int:
		return setList(f, s)
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		f.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number")
		}
		f.SetFloat(x)
	case reflect.Slice:
		var items []string
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				items = append(items, part)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// Validate reports settings that cannot work, each with the key to fix.
func (c *Config) Validate() error {
	var errs []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	check(c.Data != "", "data: must name a directory")
	_, umaskErr := c.Umask()
	check(umaskErr == nil, "data-umask: must be octal permission bits such as 077, 027 or 022")
	check(c.MemoryLimit == 0 || c.MemoryLimit >= 64<<20, "memory-limit: must be 0 (no limit) or at least 64MiB (got %d bytes); a crawl of large pages needs a few hundred MiB", int64(c.MemoryLimit))
	check(c.Crawl.Concurrency > 0, "crawl.concurrency: must be at least 1 (got %d)", c.Crawl.Concurrency)
	check(c.Crawl.MaxPages >= 0, "crawl.max-pages: must not be negative")
	check(c.Crawl.Duration >= 0, "crawl.duration: must not be negative")
	check(c.Crawl.EndWhenWaiting >= 0, "crawl.end-when-waiting: must not be negative (0 waits for every retry)")
	check(c.Crawl.StopGrace >= 0, "crawl.stop-grace: must not be negative (0 aborts fetches in flight at once)")
	check(c.Crawl.MinFreeSpace >= 0, "crawl.min-free-space: must not be negative (0 turns the check off)")
	check(c.Politeness.PerHost > 0, "politeness.per-host: must be at least 1 (got %d)", c.Politeness.PerHost)
	check(c.Politeness.MinDelay >= 0, "politeness.min-delay: must not be negative")
	check(c.Politeness.DelayFactor >= 0, "politeness.delay-factor: must not be negative")
	check(c.Politeness.MaxDelay >= c.Politeness.MinDelay, "politeness.max-delay (%v) must be at least politeness.min-delay (%v)", c.Politeness.MaxDelay, c.Politeness.MinDelay)
	check(c.Politeness.MaxRetries >= 0, "politeness.max-retries: must not be negative")
	check(c.Robots.Agent != "", "robots.agent: must be set (the product token robots.txt groups are matched against)")
	check(c.Robots.Agent == "" || isProductToken(c.Robots.Agent), "robots.agent: %q is not a product token (letters, \"-\" and \"_\" only, e.g. sonda or my-crawler): robots.txt groups could not name it", c.Robots.Agent)
	check(c.Fetch.UserAgent != "", "fetch.user-agent: must identify the crawler")
	check(c.Fetch.MaxBody > 0, "fetch.max-body: must be positive")
	check(c.Fetch.LargeBodyMemory == 0 || c.Fetch.LargeBodyMemory >= c.Fetch.MaxBody, "fetch.large-body-memory: must be 0 (no bound) or at least fetch.max-body (%d bytes; got %d)", int64(c.Fetch.MaxBody), int64(c.Fetch.LargeBodyMemory))
	check(c.Fetch.MaxRedirects >= 0, "fetch.max-redirects: must not be negative")
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"connect-timeout", c.Fetch.ConnectTimeout}, {"tls-timeout", c.Fetch.TLSTimeout}, {"first-byte-timeout", c.Fetch.FirstByteTimeout}, {"body-timeout", c.Fetch.BodyTimeout}, {"timeout", c.Fetch.Timeout}} {
		check(t.d > 0, "fetch.%s: must be positive", t.name)
	}
	check(slices.Contains(RenderModes, c.Render.Mode), "render.mode: %q is not one of never, auto, always", c.Render.Mode)
	check(c.Render.Tabs >= 1, "render.tabs: must be at least 1 (got %d)", c.Render.Tabs)
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"navigation-timeout", c.Render.NavigationTimeout}, {"idle", c.Render.Idle}, {"deadline", c.Render.Deadline}} {
		check(t.d > 0, "render.%s: must be positive", t.name)
	}
	check(c.Render.MemoryLimit > 0, "render.memory-limit: must be positive")
	check(c.Render.CacheSize >= 0, "render.cache-size: must not be negative")
	check(c.Render.Nice >= 0 && c.Render.Nice <= 19, "render.nice: must be 0 to 19 (got %d)", c.Render.Nice)
	check(c.Render.CPUShare > 0 && c.Render.CPUShare <= 1, "render.cpu-share: must be above 0 and at most 1 (1: renders never wait for CPU) (got %v)", c.Render.CPUShare)
	check(c.Focus.Threshold >= 0 && c.Focus.Threshold <= 1, "focus.threshold: must be in [0, 1] (0: each topic's own), got %v", c.Focus.Threshold)
	check(c.Focus.BestN >= 1, "focus.best-n: must be at least 1 (got %d)", c.Focus.BestN)
	switch c.Scope.Follow {
	case "any", "domain", "host", "seeds":
	default:
		errs = append(errs, fmt.Sprintf("scope.follow: %q is not one of seeds (or host), domain, any", c.Scope.Follow))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Sprintf("log.level: %q is not one of debug, info, warn, error", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Sprintf("log.format: %q is not text or json", c.Log.Format))
	}
	c.validateRevisit(&errs)
	c.validateGeo(&errs)
	c.validateNews(&errs)
	c.validateSearch(&errs)
	c.validateCluster(&errs)
	if len(errs) > 0 {
		return fmt.Errorf("config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// isProductToken reports whether s is a robots.txt product token (RFC 9309 §2.2.1).
func isProductToken(s string) bool {
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ByteSize is a size in bytes that YAML and the environment may write with a unit:
// 500KiB, 10MiB, 1GiB, 1.5MB, or a plain number of bytes.
type ByteSize int64

// UnmarshalYAML accepts a number or a string with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}

// MarshalYAML writes the size with the largest exact binary unit.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.n == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.n, u.name)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// ParseByteSize parses sizes like 10MiB, 500KB, 1.5GiB or 4096.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		n      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := 1.0
	num := s
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(s), strings.ToLower(u.suffix)) {
			mult = u.n
			num = strings.TrimSpace(s[:len(s)-len(u.suffix)])
			break
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes or a size like 10MiB", s)
	}
	return ByteSize(x * mult), nil
}

// Umask is data-umask as permission bits: those removed from every file and directory
// sonda creates.
func (c Config) Umask() (int, error) {
	m, err := strconv.ParseUint(strings.TrimSpace(c.DataUmask), 8, 32)
	if err != nil || m > 0o777 {
		return 0, fmt.Errorf("data-umask %q is not octal permission bits", c.DataUmask)
	}
	return int(m), nil
}
