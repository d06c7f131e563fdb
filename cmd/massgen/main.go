// Command massgen runs a team of LLM agents that answer, improve on each other and vote.
package main

import (
	"os"

	"massgen/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
