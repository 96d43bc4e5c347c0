package wire_test

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/wire"
)

func TestValidVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    string // "" = valid; else a substring of the error
	}{
		{"2.1.0", ""},
		{"2.1.0-rc.1+build_7", ""},
		{"v2", ""},
		{strings.Repeat("9", 64), ""},
		{"", "version is empty"},
		{strings.Repeat("9", 65), "is 65 characters"},
		{"2.1.0\n", `character '\n' not allowed`},
		{"2 1", `character ' ' not allowed`},
		{`2"`, `character '"' not allowed`},
		{"2/1", `character '/' not allowed`},
		{"ü", `character 'ü' not allowed`},
		{"\xff", `character '�' not allowed`},
		{"\x00", `character '\x00' not allowed`},
		// The worker refused these while the leader deployed them: one
		// rule now, so the leader refuses them too.
		{"-1", `version "-1": starts with '-'`},
		{".1", `starts with '.'`},
		{"_x", `starts with '_'`},
		{"+b7", `starts with '+'`},
	} {
		err := wire.ValidVersion(tc.version)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidVersion(%q): %v", tc.version, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidVersion(%q) = %v, want an error containing %q", tc.version, err, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), "letters, digits or . _ + -"):
			t.Errorf("ValidVersion(%q) = %v: does not say what is valid", tc.version, err)
		}
	}
}

// TestErrorsDoNotGrowWithInput: a 60,000-character version or worker id
// is quoted in part, so a refusal's answer and log line stay short.
func TestErrorsDoNotGrowWithInput(t *testing.T) {
	long := strings.Repeat("x", 60_000)
	for name, err := range map[string]error{"version": wire.ValidVersion(long), "worker id": wire.ValidWorkerID(long)} {
		if err == nil || len(err.Error()) > 200 {
			t.Errorf("%s of 60,000 characters: error of %d bytes, want under 200: %.300v", name, len(err.Error()), err)
		}
	}
}
