package scenario

import "fmt"

// CheckName reports whether name is a valid scenario name: lower-case
// letters, digits and single dashes between them, at most 64 characters
// (the rule of the file's name key). The error says the rule.
func CheckName(name string) error {
	if name == "" || len(name) > maxNameLen || !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a valid scenario name: want lower-case letters, digits and single dashes between them (at most %d characters), as in wave-deploy", name, maxNameLen)
	}
	return nil
}
