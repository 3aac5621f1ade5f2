package main

import (
	"github.com/spf13/cobra"
)

func init() { register(newTrainCmd) }

// trainCommands build the subcommands of `sonda train`. Each model's file appends its
// builder from an init function (trainCommands = append(trainCommands, newTrainXCmd)), so
// adding one touches no other file.
var trainCommands []func() *cobra.Command

func newTrainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train sonda's models (page relevance, link ranking...)",
		Long: `train fits one of sonda's models from examples and writes it to a file that a crawl
then reads (see each subcommand for its flags and the figures it prints).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, build := range trainCommands {
		cmd.AddCommand(build())
	}
	return cmd
}
