package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
			root := cmd.Root()
			asManMarkdown(root)
			header, err := manHeader()
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			if dir == "" {
				var buf bytes.Buffer
				if err := doc.GenMan(root, header, &buf); err != nil {
					return exitf(ExitExecution, "man page: %v", err)
				}
				_, err := stdout.Write(buf.Bytes())
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return exitf(ExitExecution, "man pages: %v", err)
			}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return exitf(ExitExecution, "man pages into %s: %v", dir, err)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "write one page per command into this folder (created if missing)")
	return c
}

func manHeader() (*doc.GenManHeader, error) {
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds: unset it or fix it", s)
		}
		date = time.Unix(secs, 0).UTC()
	}
	return &doc.GenManHeader{
		Title:   "MASSGEN",
		Section: "1",
		Source:  "massgen " + version(),
		Manual:  "massgen manual",
		Date:    &date,
	}, nil
}

// asManMarkdown rewrites every command's Long text for the man generator, which reads it as
// Markdown: --help's two-space-indented example lines become code blocks, so that roff does not
// run them into the paragraph around them. It changes the tree in place; `massgen man` exits
// right after.
func asManMarkdown(c *cobra.Command) {
	c.Long = manMarkdown(c.Long)
	for _, sub := range c.Commands() {
		asManMarkdown(sub)
	}
}

func manMarkdown(long string) string {
	lines := strings.Split(long, "\n")
	var out []string
	inCode := false
	for _, l := range lines {
		code := strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != ""
		switch {
		case code && !inCode:
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			inCode = true
		case !code && inCode:
			if l != "" {
				out = append(out, "")
			}
			inCode = false
		}
		if code {
			l = "  " + l
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
