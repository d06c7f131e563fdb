package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newMan is `massgen man`: the manual pages, generated from the same command definitions as
// --help so that the two never disagree. Release builds ship them (scripts/release.sh).
func newMan(stdout io.Writer) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "man [--dir DIR]",
		Short: "Print the massgen(1) manual page, or write one page per command into DIR",
		Long: `Print the massgen(1) manual page on standard output, or, with --dir, write massgen.1 and
one page per subcommand (massgen-serve.1, ...) into DIR. Install them with, for example:
  massgen man --dir ~/.local/share/man/man1
The date in the pages is SOURCE_DATE_EPOCH when set (reproducible builds), else today.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := manHeader()
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			root := cmd.Root()
			root.InitDefaultHelpCmd()
			if dir == "" {
				_, err := io.WriteString(stdout, manPage(root, h))
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return exitf(ExitExecution, "man pages: %v", err)
			}
			if err := writeManTree(root, h, dir); err != nil {
				return exitf(ExitExecution, "man pages into %s: %v", dir, err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "write one page per command into this folder (created if missing)")
	return c
}

// manHeaderInfo is what the .TH line of every page says.
type manHeaderInfo struct {
	date   time.Time
	source string
}

func manHeader() (manHeaderInfo, error) {
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return manHeaderInfo{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds: unset it or fix it", s)
		}
		date = time.Unix(secs, 0).UTC()
	}
	return manHeaderInfo{date: date, source: "massgen " + version()}, nil
}

// writeManTree writes c's page and its available subcommands' pages into dir, one file each
// (massgen.1, massgen-serve.1, massgen-logs-summary.1, ...).
func writeManTree(c *cobra.Command, h manHeaderInfo, dir string) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(sub, h, dir); err != nil {
			return err
		}
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, name), []byte(manPage(c, h)), 0o644)
}

// manPage is c's manual page in roff (man(7)): name, synopsis, the --help text as its
// description (two-space-indented lines as unfilled example blocks), options, and the related
// pages. Written directly rather than through a Markdown converter, which cost every start of
// massgen a Markdown parser's initialisation.
func manPage(c *cobra.Command, h manHeaderInfo) string {
	var b strings.Builder
	dashed := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".TH \"MASSGEN\" \"1\" \"%s\" \"%s\" \"massgen manual\"\n.nh\n.ad l\n", h.date.Format("Jan 2006"), strings.NewReplacer(`\`, `\e`, `"`, `'`).Replace(h.source))
	// Page names (massgen-serve) keep their plain hyphens: they are what man and whatis look
	// up, and command names hold nothing roff would read.
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", dashed, roffText(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n", roffText(c.UseLine()))
	long := c.Long
	if long == "" {
		long = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	writeRoffBody(&b, long)
	if f := c.NonInheritedFlags(); f.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		writeRoffFlags(&b, f)
	}
	if f := c.InheritedFlags(); f.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		writeRoffFlags(&b, f)
	}
	var also []string
	if c.HasParent() {
		also = append(also, fmt.Sprintf("\\fB%s(1)\\fP", strings.ReplaceAll(c.Parent().CommandPath(), " ", "-")))
	}
	subs := slices.Clone(c.Commands())
	slices.SortFunc(subs, func(x, y *cobra.Command) int { return strings.Compare(x.Name(), y.Name()) })
	for _, sub := range subs {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			also = append(also, fmt.Sprintf("\\fB%s-%s(1)\\fP", dashed, sub.Name()))
		}
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(also, ", "))
	}
	return b.String()
}

// writeRoffBody writes --help text: blank lines part paragraphs, and lines indented by two
// spaces (examples) keep their line breaks in an indented block.
func writeRoffBody(b *strings.Builder, text string) {
	inCode, para := false, true
	for _, l := range strings.Split(text, "\n") {
		code := strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != ""
		switch {
		case code && !inCode:
			b.WriteString(".PP\n.RS\n.nf\n")
			inCode = true
		case !code && inCode:
			b.WriteString(".fi\n.RE\n")
			inCode, para = false, true
		}
		switch {
		case code:
			b.WriteString(roffText(strings.TrimPrefix(l, "  ")) + "\n")
		case strings.TrimSpace(l) == "":
			para = true
		default:
			if para {
				b.WriteString(".PP\n")
				para = false
			}
			b.WriteString(roffText(l) + "\n")
		}
	}
	if inCode {
		b.WriteString(".fi\n.RE\n")
	}
}

func writeRoffFlags(b *strings.Builder, f *pflag.FlagSet) {
	f.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden || fl.Deprecated != "" {
			return
		}
		name := fmt.Sprintf("\\fB--%s\\fP", roffEscape(fl.Name))
		if fl.Shorthand != "" && fl.ShorthandDeprecated == "" {
			name = fmt.Sprintf("\\fB-%s\\fP, %s", roffEscape(fl.Shorthand), name)
		}
		def := fl.DefValue
		if fl.Value.Type() == "string" {
			def = strconv.Quote(def)
		}
		if fl.NoOptDefVal != "" {
			fmt.Fprintf(b, ".TP\n%s[=%s]\n", name, roffEscape(def))
		} else {
			fmt.Fprintf(b, ".TP\n%s=%s\n", name, roffEscape(def))
		}
		b.WriteString(roffText(fl.Usage) + "\n")
	})
}

// roffEscape makes s literal inside a roff line: backslashes and hyphens (which roff would
// take for hyphenation points).
func roffEscape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffText is roffEscape for a whole line, which must not start with a control character.
func roffText(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
