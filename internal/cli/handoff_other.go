//go:build !unix

package cli

// execCompanion runs the companion as a child: this system has no exec(2).
func execCompanion(path string, args []string) error {
	return execCompanionChild(path, args)
}
