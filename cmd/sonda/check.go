package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/crawl"
	"github.com/sonda-search/sonda/robots"
	"github.com/sonda-search/sonda/scope"
	"github.com/sonda-search/sonda/urlnorm"
)

func init() { register(newCheckCmd) }

func newCheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check how sonda sees URLs and robots.txt rules, or verify a data directory",
	}
	cmd.AddCommand(newCheckURLCmd(), newCheckRobotsCmd(), newCheckDataCmd())
	return cmd
}

func newCheckURLCmd() *cobra.Command {
	var asJSON bool
	var seeds []string
	cmd := &cobra.Command{
		Use:   "url [--seed URL]... [--scope seeds|domain|any|REGEX] URL...",
		Short: "Print each URL normalized, with its host key and scope verdict",
		Long: `check url normalizes each URL exactly as the crawler does and prints, tab-separated:

  normalized-URL  host-key  domain-key  verdict

The verdict is "allow" or "deny (RULE: reason)", judged by the scope settings of the
configuration (-c), with --seed URLs (or the config's seeds) as the crawl's seeds.
A URL that cannot be crawled at all prints "invalid" and the reason. The exit status is 0
when every URL is allowed, 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, scopeFlag)
			if err != nil {
				return err
			}
			norm := urlnorm.New(crawl.NormalizerOptions(cfg))
			if len(seeds) == 0 {
				seeds = cfg.Crawl.Seeds
			}
			var seedURLs []urlnorm.URL
			for _, s := range seeds {
				u, err := norm.Parse(s)
				if err != nil {
					return usageError{fmt.Errorf("seed %q: %w", s, err)}
				}
				seedURLs = append(seedURLs, u)
			}
			sc, err := scope.Compile(crawl.ScopeRules(cfg), seedURLs)
			if err != nil {
				return usageError{err}
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			enc := json.NewEncoder(out)
			allAllowed := true
			for _, raw := range args {
				type row struct {
					Input      string `json:"input"`
					Normalized string `json:"normalized,omitempty"`
					HostKey    string `json:"host_key,omitempty"`
					DomainKey  string `json:"domain_key,omitempty"`
					Allowed    bool   `json:"allowed"`
					Rule       string `json:"rule,omitempty"`
					Reason     string `json:"reason,omitempty"`
				}
				r := row{Input: raw}
				u, err := norm.Parse(raw)
				if err != nil {
					r.Rule, r.Reason = "invalid", err.Error()
				} else {
					v := sc.Check(u, 0)
					r.Normalized, r.HostKey, r.DomainKey = u.String(), u.HostKey(), u.DomainKey()
					r.Allowed, r.Rule, r.Reason = v.Allowed, v.Rule, v.Reason
				}
				allAllowed = allAllowed && r.Allowed
				if asJSON {
					if err := enc.Encode(r); err != nil {
						return err
					}
					continue
				}
				switch {
				case r.Normalized == "":
					fmt.Fprintf(tw, "%s\t-\t-\tinvalid (%s)\n", raw, r.Reason)
				case r.Allowed:
					fmt.Fprintf(tw, "%s\t%s\t%s\tallow\n", r.Normalized, r.HostKey, r.DomainKey)
				default:
					fmt.Fprintf(tw, "%s\t%s\t%s\tdeny (%s: %s)\n", r.Normalized, r.HostKey, r.DomainKey, r.Rule, r.Reason)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if !allAllowed {
				return silentExit{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per URL")
	cmd.Flags().StringArrayVar(&seeds, "seed", nil, "a seed `URL` of the crawl (scope.follow is relative to the seeds)")
	cmd.Flags().String("scope", "", scopeFlagHelp)
	return cmd
}

func newCheckRobotsCmd() *cobra.Command {
	var rulesPath, agent string
	cmd := &cobra.Command{
		Use:   "robots --rules FILE --agent NAME URL...",
		Short: "Decide URLs against a robots.txt file exactly as the crawler does",
		Long: `check robots reads a robots.txt file and prints "allow URL" or "disallow URL" for each
URL, one line each, using the crawler's own decision (RFC 9309: the group for the agent's
product token, longest match, allow wins ties, * and $, percent-encoding equivalence).

A URL may also be given as an absolute path (/private/x?y), matched as is. A URL the
crawler's normalizer refuses (longer than 16 KiB, no scheme, empty) is still decided, on
its path and query as written. --agent "" (no product token) is answered by the "*" groups.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rulesPath == "" || !cmd.Flags().Changed("agent") {
				return usageError{fmt.Errorf("both --rules FILE and --agent NAME are required")}
			}
			body, err := os.ReadFile(rulesPath)
			if err != nil {
				return usageError{fmt.Errorf("--rules: %w", err)}
			}
			rules := robots.Parse(body)
			norm := urlnorm.New(urlnorm.DefaultOptions())
			out := cmd.OutOrStdout()
			for _, raw := range args {
				var allowed bool
				if strings.HasPrefix(raw, "/") {
					allowed = rules.Allowed(agent, raw)
				} else if u, err := norm.Parse(raw); err == nil {
					allowed = crawl.RobotsAllowed(rules, agent, u)
				} else {
					// The crawler never queues such a URL, but a site owner may still ask.
					allowed = rules.Allowed(agent, robots.PathQueryOf(raw))
				}
				verdict := "disallow"
				if allowed {
					verdict = "allow"
				}
				if _, err := fmt.Fprintf(out, "%s %s\n", verdict, raw); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&rulesPath, "rules", "", "robots.txt `FILE` to read")
	cmd.Flags().StringVar(&agent, "agent", "", "crawler `NAME` (product token, e.g. sonda or FooBot/1.0)")
	return cmd
}

// silentExit ends the command with a status and no message (the output said it all).
type silentExit struct{ code int }

func (s silentExit) Error() string { return fmt.Sprintf("exit status %d", s.code) }
