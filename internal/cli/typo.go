package cli

import (
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"massgen/internal/suggest"
)

// checkOneWord applies the one-word rule (see the root's help): a run whose first argument is
// one word equal to a subcommand name, or a letter or two from one, is refused before
// anything starts, so a typo never becomes a paid question. The rule is off for arguments
// after "--", and for a first word that ends with '?'.
func checkOneWord(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
		return nil
	}
	first := args[0]
	if strings.IndexFunc(first, unicode.IsSpace) >= 0 || strings.HasSuffix(first, "?") {
		return nil
	}
	best := suggest.Typo(first, subcommandNames(cmd.Root()))
	if best == "" {
		return nil
	}
	quoted := "massgen \"" + first + "?\""
	if len(args) > 1 {
		quoted = "massgen \"" + strings.Join(args, " ") + "\""
	}
	return exitf(ExitConfig, "unknown command `%s`; did you mean `massgen %s`? To ask it as a question, quote it with a trailing '?' or use more words (%s), or put it after -- (massgen -- %s)",
		first, best, quoted, strings.Join(args, " "))
}
