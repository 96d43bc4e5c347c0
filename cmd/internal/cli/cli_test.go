package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestLogFlagsCheckedByEverySubcommand: a bad --log-level or --log-format
// is the same usage error (exit 2, naming the flag) for a subcommand that
// never logs as for one that does, and the subcommand does not run.
func TestLogFlagsCheckedByEverySubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"quiet", "--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"--log-level", "verbose", "quiet"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"logs", "--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"quiet", "--log-format", "xml"}, `--log-format "xml": want text or json`},
	} {
		var logs LogOptions
		ran := false
		root := &cobra.Command{Use: "bin"}
		logs.AddFlags(root)
		root.AddCommand(
			&cobra.Command{Use: "quiet", RunE: func(*cobra.Command, []string) error { ran = true; return nil }},
			&cobra.Command{Use: "logs", RunE: func(*cobra.Command, []string) error {
				ran = true
				_, err := logs.Logger(&bytes.Buffer{})
				return err
			}},
		)
		var stderr bytes.Buffer
		code := Execute(root, tc.args, &stderr)
		if code != ExitUsage || !strings.Contains(stderr.String(), tc.want) || ran {
			t.Errorf("bin %v: exit %d, ran %v, stderr %q; want exit 2 saying %q", tc.args, code, ran, stderr.String(), tc.want)
		}
	}
	var logs LogOptions
	root := &cobra.Command{Use: "bin", RunE: func(*cobra.Command, []string) error { return nil }}
	logs.AddFlags(root)
	if code := Execute(root, []string{"--log-level", "debug", "--log-format", "json"}, &bytes.Buffer{}); code != ExitOK {
		t.Errorf("valid flags: exit %d", code)
	}
}
