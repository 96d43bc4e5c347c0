package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/cmd/internal/cli"
	"github.com/fleetsim/fleetsim/fleet/scenario"
)

func newSchemaCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the scenario format, for editors",
		Long: `schema prints the JSON Schema (draft-07) of a scenario file: every key with
its type, description, default, enum and range, as docs/SCENARIOS.md gives
them, built from the definition the loader reads. With it, an editor's
YAML language server (the VS Code YAML extension, for one) completes keys
and marks mistakes as you type. Save it once and point a scenario at it:

  sim schema > fleetsim-scenario.schema.json

and as the scenario's first line:

  # yaml-language-server: $schema=fleetsim-scenario.schema.json

A file the loader accepts, the schema accepts; what depends on other keys
(a selector's group, a range up to fleet.count, an expectation's names) only
'sim validate' checks.

` + exitCodesOf("schema"),
		Example: "  sim schema > fleetsim-scenario.schema.json",
		Args:    cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if _, err := stdout.Write(scenario.Schema()); err != nil {
				return cli.Runtime(err)
			}
			return nil
		},
	}
}
