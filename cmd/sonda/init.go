package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sonda-search/sonda/config"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	var profile string
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--profile topic|news|geo] DIR",
		Short: "Write a commented sonda.yaml to start a crawl from",
		Long: `init creates DIR (if needed) and writes DIR/sonda.yaml: every setting with its default
and a comment saying what it does. Edit the seeds, then run:

  sonda crawl -c DIR/sonda.yaml

Without --profile it is a plain crawl: every page of the seeds' sites (their registrable
domains), no topic. Profiles pick other starting values: topic (a topical crawl across
sites, judged by the built-in example topic until you give your own), news (news sources,
site by site, with feeds and article records) and geo (data producers and their geo files).

The data directory is DIR/sonda-data (data: in the file is relative to the file).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := config.Template(profile)
			if err != nil {
				return usageError{err}
			}
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(dir, "sonda.yaml")
			if _, err := os.Stat(path); err == nil && !force {
				return usageError{fmt.Errorf("%s already exists; use --force to overwrite it", path)}
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if err := os.WriteFile(path, text, 0o644); err != nil {
				return err
			}
			what := "a plain crawl of the seeds' sites; other profiles: --profile topic, news or geo"
			if profile != "" {
				what = profile + " profile"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s)\nnext: edit its crawl.seeds, then run: sonda crawl -c %s\n", path, what, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "starting point: topic, news or geo (none: a plain crawl of the seeds' sites)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing sonda.yaml")
	return cmd
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
