// Command massgen runs a team of LLM agents that answer, improve on each other and vote.
package main

import (
	"os"

	"massgen/internal/childproc"
	"massgen/internal/cli"
)

func main() {
	// First, before anything could copy it: keep the keys in massgen's environment from other
	// processes of the user (see Harden). Defence in depth, so a failure is not fatal: agents'
	// commands are confined without it where namespaces work.
	_ = childproc.Harden()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
