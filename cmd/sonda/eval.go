package main

import (
	"github.com/spf13/cobra"
)

func init() { register(newEvalCmd) }

// evalCommands build the subcommands of `sonda eval`. Each evaluation's file appends its
// builder from an init function (evalCommands = append(evalCommands, newEvalXCmd)), so adding
// one touches no other file.
var evalCommands []func() *cobra.Command

func newEvalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure sonda against test collections (retrieval, focus, extraction...)",
		Long: `eval runs one of sonda's evaluations and prints its figures. Each subcommand says which
data it reads (usually ../shared/testdata/...) and which metrics it reports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, build := range evalCommands {
		cmd.AddCommand(build())
	}
	return cmd
}
