// Command massgen-temporal is massgen with the Temporal SDK linked in: massgen hands a command
// line with --temporal (a session, serve or eval on Temporal workers, or massgen worker) over
// to it. Keeping the SDK here keeps massgen small and quick to start. Install it beside massgen.
package main

import (
	"os"

	"massgen/internal/childproc"
	"massgen/internal/cli"
	"massgen/internal/durable/temporalrun"
)

func main() {
	_ = childproc.Harden() // as massgen does; see cmd/massgen
	os.Exit(cli.MainTemporal(os.Args[1:], os.Stdout, os.Stderr, temporalrun.Connect))
}
