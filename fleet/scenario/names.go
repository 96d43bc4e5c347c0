package scenario

import (
	"fmt"

	"github.com/fleetsim/fleetsim/fleet/internal/wording"
)

// CheckName reports whether name is a valid scenario name: lower-case
// letters, digits and single dashes between them, at most 64 characters
// (the rule of the file's name key). The error says the rule.
func CheckName(name string) error {
	if name == "" || len(name) > maxNameLen || !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a valid scenario name: want lower-case letters, digits and single dashes between them (at most %d characters), as in wave-deploy", name, maxNameLen)
	}
	return nil
}

// DidYouMean returns " (did you mean X?)" for the names closest to name
// (at most three), or "" when none is close: a misspelt scenario's name
// (sim run thundring-herd) gets the help a misspelt key does.
func DidYouMean(name string, names []string) string {
	return wording.DidYouMean(name, names)
}
